import Bluetide
import BluetideDBus
import BluetideSupport
import Foundation
import Synchronization

/// The `bluez` transport: Bluetide's central (and, `BlueZPeripheral`, its peripheral) over
/// bluetoothd (D-Bus), so the system keeps its adapter. `bluez` takes bluetoothd's first adapter, `bluez:hci1` a given one. Register it once
/// (the command line does): `try TransportRegistry.register(BlueZBackendScheme())`.
///
/// What BlueZ does not offer through D-Bus is refused in one line: HCI captures (`+snoop`: run
/// btmon), fixed GATT handles (`hci-socket:N`), connection parameters and a connected link's RSSI.
public struct BlueZBackendScheme: BackendScheme {
    public let name = "bluez"
    public let syntax = "bluez[:hciN]"
    /// The bus bluetoothd is on (tests give a private one).
    let bus: DBusConnection.Bus

    public init() { bus = .system }
    public init(bus: DBusConnection.Bus) { self.bus = bus }

    public func validate(argument: String?) throws {
        guard let argument else { return }
        guard argument.hasPrefix("hci"), let index = Int(argument.dropFirst(3)), index >= 0 else {
            throw BlueZBackendError("bluez:\(argument): expected an adapter name such as hci0 (bluetide doctor lists them)")
        }
    }

    public func openCentral(argument: String?, configuration: Bluetooth.Configuration) async throws -> any CentralBackend {
        if let problem = DBusConnection.libraryProblem { throw BlueZBackendError(problem) }
        let bluez: BlueZ
        do { bluez = try await BlueZ.connect(bus) } catch {
            throw BlueZBackendError("cannot reach the D-Bus system bus (\(error)); bluetide doctor says which transport to use instead")
        }
        do {
            guard try await bluez.isRunning() else {
                throw BlueZBackendError("bluetoothd is not running: start it (sudo systemctl start bluetooth) or use hci-socket:N (bluetide doctor)")
            }
            let adapter = try await bluez.adapter(named: argument)
            guard adapter.powered else {
                throw BlueZBackendError("\(adapter.name) is not powered: bluetoothctl power on (or sudo btmgmt --index \(adapter.index ?? 0) power on), then try again")
            }
            // The pairing agent answers bluetoothd's questions with the application's prompts.
            // Without it (bluetoothd refused it) scanning, reading and writing still work; pairing
            // then says why it cannot ask.
            var agent: BlueZAgent?
            var agentProblem: String?
            if configuration.pairing.pairable {
                let made = BlueZAgent(bus: bluez.bus, policy: configuration.pairing)
                do {
                    try await made.register()
                    agent = made
                } catch {
                    agentProblem = "bluetoothd refused Bluetide's pairing agent (\(error))"
                }
            } else {
                agentProblem = "this host is not pairable (its pairing policy)"
            }
            return BlueZCentral(bluez: bluez, adapter: adapter, agent: agent, agentProblem: agentProblem, pairing: configuration.pairing)
        } catch {
            await bluez.close()
            throw error
        }
    }
}

/// A failure of the BlueZ backend, as one line.
public struct BlueZBackendError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// BlueZ's address text (`C0:00:00:00:00:01`) and type (`random`) as a Bluetide address.
func bluetideAddress(_ text: String?, type: String?) -> BluetoothAddress? {
    guard let text else { return nil }
    return try? BluetoothAddress(text, type: type == "random" ? .random : .public)
}

/// `/org/bluez/hci0/dev_C0_00_00_00_00_01` for a device on an adapter.
func devicePath(adapter: String, address: BluetoothAddress) -> String {
    let hex = address.littleEndianBytes.reversed().map { String(format: "%02X", $0) }
    return "\(adapter)/dev_" + hex.joined(separator: "_")
}

/// The central role over bluetoothd.
final class BlueZCentral: CentralBackend {
    let bluez: BlueZ
    let adapter: BlueZAdapter
    /// Our `org.bluez.Agent1`, nil when the policy is not pairable.
    let agent: BlueZAgent?
    /// Why there is no agent, for pairing's error.
    let agentProblem: String?
    let pairing: PairingPolicy

    init(bluez: BlueZ, adapter: BlueZAdapter, agent: BlueZAgent?, agentProblem: String?, pairing: PairingPolicy) {
        self.bluez = bluez
        self.adapter = adapter
        self.agent = agent
        self.agentProblem = agentProblem
        self.pairing = pairing
    }

    var pairingPrompts: AsyncStream<PairingPrompt>? { agent?.prompts }

    /// bluetoothd's bonded devices on this adapter. The level, Secure Connections and key size
    /// come from its key store when readable (root); else from the method our agent saw while
    /// pairing (else encrypted), Secure Connections only when that was numeric comparison, and
    /// 16 octets (what bluetoothd asks for).
    func bonds() async -> [BondRecord]? {
        guard let bonds = try? await bluez.bonds(of: adapter) else { return [] }
        return bonds.filter(\.bonded).map { bond in
            if let key = bond.key {
                return BondRecord(
                    address: bond.address, securityLevel: key.securityLevel, secureConnections: key.secureConnections,
                    keySize: key.keySize, resolvesPrivateAddresses: false)
            }
            let method = agent?.method(of: bond.path)
            let level: SecurityLevel = switch method {
            case .numericComparison: .authenticatedSecureConnections
            case .passkey: .authenticated
            case .justWorks, nil: .encrypted
            }
            return BondRecord(
                address: bond.address, securityLevel: level, secureConnections: method == .numericComparison, keySize: 16,
                resolvesPrivateAddresses: false)
        }
    }

    /// `Adapter1.RemoveDevice`.
    func removeBond(_ address: BluetoothAddress) async -> Bool? {
        (try? await bluez.removeDevice(address, from: adapter)) ?? false
    }

    var address: BluetoothAddress? { get async { bluetideAddress(adapter.address, type: adapter.addressType) } }

    var peripheralUnavailable: String? {
        "the peripheral role is not available on the bluez transport yet: use --transport hci-socket:N (bluetide doctor says which adapter)"
    }

    func waitUntilClosed() async -> String? {
        await bluez.bus.waitUntilClosed()
        return bluez.bus.closeReason.flatMap { $0 == "the D-Bus connection was closed" ? nil : $0 }
    }

    func close() async {
        _ = try? await bluez.bus.call(
            destination: BlueZ.service, path: adapter.path, interface: BlueZ.adapterInterface, member: "StopDiscovery", timeout: .seconds(2))
        await agent?.unregister()
        await bluez.close()
    }

    // MARK: Scanning

    /// The discovery filter for `filter`: LE only, the service UUIDs and RSSI floor in the stack,
    /// every report (DuplicateData) so RSSI and data stay current.
    static func discoveryFilter(_ filter: ScanFilter) -> DBusValue {
        var entries: [String: DBusValue] = ["Transport": .string("le"), "DuplicateData": .boolean(true)]
        if !filter.serviceUUIDs.isEmpty { entries["UUIDs"] = .strings(filter.serviceUUIDs.map { $0.uuidString.lowercased() }) }
        if let rssi = filter.minimumRSSI { entries["RSSI"] = .int16(Int16(clamping: rssi)) }
        return .dictionary(entries)
    }

    func scan(filter: ScanFilter) async throws -> AsyncStream<Advertisement> {
        let bus = bluez.bus
        let adapterPath = adapter.path
        let added = try await bus.signals(DBusMatchRule(
            sender: BlueZ.service, interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded"))
        let changed = try await bus.signals(.propertiesChanged(sender: BlueZ.service, interface: BlueZ.deviceInterface, pathNamespace: adapterPath))
        _ = try await bus.call(
            destination: BlueZ.service, path: adapterPath, interface: BlueZ.adapterInterface, member: "SetDiscoveryFilter",
            arguments: [Self.discoveryFilter(filter)], timeout: .seconds(5))
        var known: [String: [String: DBusValue]] = [:]
        for (path, interfaces) in try await bluez.managedObjects().objects where path.hasPrefix(adapterPath + "/") {
            if let device = interfaces[BlueZ.deviceInterface] { known[path] = device }
        }
        do {
            _ = try await bus.call(
                destination: BlueZ.service, path: adapterPath, interface: BlueZ.adapterInterface, member: "StartDiscovery", timeout: .seconds(5))
        } catch let error as DBusError where error.name == "org.bluez.Error.InProgress" {
            // Another client's discovery is on: its reports reach us too.
        }
        let (stream, continuation) = AsyncStream<Advertisement>.makeStream(bufferingPolicy: .bufferingNewest(4096))
        let seed = known
        let pump = Task {
            var devices = seed
            var firstSeen: [String: Date] = [:]
            func report(_ path: String) {
                guard let properties = devices[path], properties["RSSI"] != nil,
                      let advertisement = Self.advertisement(properties, firstSeen: firstSeen[path] ?? Date()) else { return }
                if firstSeen[path] == nil { firstSeen[path] = advertisement.firstSeen }
                continuation.yield(advertisement)
            }
            await withTaskGroup(of: Void.self) { group in
                let (events, input) = AsyncStream.makeStream(of: (String, [String: DBusValue], [String]).self)
                group.addTask {
                    for await signal in added {
                        guard let path = signal.body.first?.string, path.hasPrefix(adapterPath + "/"),
                              let device = signal.body.dropFirst().first?.dictionary?[BlueZ.deviceInterface]?.dictionary else { continue }
                        input.yield((path, device.mapValues(\.unwrapped), []))
                    }
                    input.finish()
                }
                group.addTask {
                    for await signal in changed {
                        guard let path = signal.path, signal.body.count >= 2, let properties = signal.body[1].dictionary else { continue }
                        input.yield((path, properties.mapValues(\.unwrapped), signal.body.dropFirst(2).first?.strings ?? []))
                    }
                    input.finish()
                }
                for await (path, properties, invalidated) in events {
                    var merged = devices[path] ?? [:]
                    for (key, value) in properties { merged[key] = value }
                    for key in invalidated { merged.removeValue(forKey: key) }
                    devices[path] = merged
                    // A report is an advertisement seen: RSSI or advertised data changed.
                    if !Set(properties.keys).isDisjoint(with: ["RSSI", "ManufacturerData", "ServiceData", "TxPower", "Name", "UUIDs"]) {
                        report(path)
                    }
                }
                group.cancelAll()
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in
            pump.cancel()
            Task {
                _ = try? await bus.call(
                    destination: BlueZ.service, path: adapterPath, interface: BlueZ.adapterInterface, member: "StopDiscovery",
                    timeout: .seconds(2))
            }
        }
        return stream
    }

    /// A Bluetide advertisement from a device's `org.bluez.Device1` properties.
    static func advertisement(_ properties: [String: DBusValue], firstSeen: Date) -> Advertisement? {
        guard let address = bluetideAddress(properties["Address"]?.string, type: properties["AddressType"]?.string) else { return nil }
        var manufacturer: [UInt16: [UInt8]] = [:]
        for (company, value) in properties["ManufacturerData"]?.integerKeyedDictionary ?? [:] {
            if let id = UInt16(exactly: company), let bytes = value.bytes { manufacturer[id] = bytes }
        }
        var serviceData: [BluetoothUUID: [UInt8]] = [:]
        for (uuid, value) in properties["ServiceData"]?.dictionary ?? [:] {
            if let parsed = try? BluetoothUUID(uuid), let bytes = value.bytes { serviceData[parsed] = bytes }
        }
        let uuids = (properties["UUIDs"]?.strings ?? []).compactMap { try? BluetoothUUID($0) }
        return Advertisement(
            address: address, name: properties["Name"]?.string, rssi: Int(properties["RSSI"]?.integer ?? -127),
            serviceUUIDs: uuids, manufacturerData: manufacturer, serviceData: serviceData,
            txPower: properties["TxPower"]?.integer.map { Int($0) }, isConnectable: true, firstSeen: firstSeen, lastSeen: Date())
    }

    // MARK: Connecting

    /// How the search for a device bluetoothd did not know yet ended.
    private enum DeviceSearch: Sendable { case found, timedOut, discoveryEnded }

    func connect(to address: BluetoothAddress, timeout: Duration) async throws -> any CentralLink {
        let deadline = ContinuousClock.now + timeout
        let path = devicePath(adapter: adapter.path, address: address)
        let bus = bluez.bus
        // BlueZ connects to devices it knows: discover it first when it does not.
        if try await bluez.managedObjects().objects[path]?[BlueZ.deviceInterface] == nil {
            var filter = ScanFilter()
            filter.allowDuplicates = true
            let seen = try await scan(filter: filter)
            let search = await withTaskGroup(of: DeviceSearch.self) { group in
                group.addTask {
                    for await advertisement in seen where advertisement.address == address { return .found }
                    return .discoveryEnded
                }
                group.addTask {
                    try? await Task.sleep(until: deadline, clock: .continuous)
                    return .timedOut
                }
                let first = await group.next() ?? .timedOut
                group.cancelAll()
                return first
            }
            switch search {
            case .found: break
            case .timedOut: throw BluetideError.connectTimedOut(address, seconds: timeout.inSeconds)
            case .discoveryEnded:
                // Not a time limit: bluetoothd's discovery (or our D-Bus connection) stopped first.
                throw BluetideError.connectFailed(
                    address, reason: "bluetoothd's discovery ended before the device was seen; is bluetoothd still running (systemctl status bluetooth)?")
            }
        }
        let link = try await BlueZLink.watch(
            bus: bus, device: path, address: address, adapterAddress: adapter.address, agent: agent, agentProblem: agentProblem, pairing: pairing)
        let left = ContinuousClock.now.duration(to: deadline)
        do {
            guard left > .zero else { throw DBusError("no time left", name: "org.freedesktop.DBus.Error.NoReply") }
            _ = try await bus.call(
                destination: BlueZ.service, path: path, interface: BlueZ.deviceInterface, member: "Connect", timeout: left)
            try await link.waitForServices(until: deadline)
        } catch {
            _ = try? await bus.call(destination: BlueZ.service, path: path, interface: BlueZ.deviceInterface, member: "Disconnect", timeout: .seconds(5))
            link.end(.localHostTerminated)
            if let error = error as? DBusError, error.isTimeout {
                throw BluetideError.connectTimedOut(address, seconds: timeout.inSeconds)
            }
            if error is BluetideError || error is CancellationError { throw error }
            throw BluetideError.connectFailed(address, reason: "\(error)")
        }
        return link
    }
}
