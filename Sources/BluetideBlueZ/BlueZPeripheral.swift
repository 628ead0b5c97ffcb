import Bluetide
import BluetideDBus
import Foundation
import Synchronization

extension BlueZCentral: PeripheralBackendProvider {
    /// The peripheral role on the same bus and adapter.
    func makePeripheral() async throws -> any PeripheralBackend {
        try await BlueZPeripheral.open(bus: bluez.bus, adapter: adapter)
    }
}

/// The peripheral role over bluetoothd: the services are exported as a GATT application
/// (``BlueZGattApplication``) registered with `org.bluez.GattManager1.RegisterApplication`, the
/// advertisement as an `org.bluez.LEAdvertisement1` registered with
/// `LEAdvertisingManager1.RegisterAdvertisement`. bluetoothd answers centrals' ATT requests and
/// calls `ReadValue`/`WriteValue`/`StartNotify`/`StopNotify` on our objects; a new value is
/// sent by `PropertiesChanged` of `Value` (BlueZ notifies or indicates every subscribed
/// central).
///
/// What BlueZ does not tell, and how it shows:
/// - which central subscribes: `StartNotify` comes with the first subscriber and `StopNotify`
///   after the last, without a device. The change is reported for the central connected alone,
///   or the one that last read or wrote; later subscribers of a characteristic are not reported.
/// - who initiated a connection: every device bluetoothd reports `Connected` on this adapter
///   while the peripheral serves is reported as a connected central.
/// - the ATT MTU before a central reads or writes (23 until then), the connection handle
///   (``ConnectedCentral/handle`` numbers centrals from 1), application authorisation
///   (``Peripheral/authorizationRequests`` is not asked: an `.authorized` value is refused
///   until ``ConnectedCentral/authorize()``), and application errors other than 0x80 (sent as 0x80).
final class BlueZPeripheral: PeripheralBackend {
    let bus: DBusConnection
    let adapter: BlueZAdapter
    let events: AsyncStream<PeripheralBackendEvent>
    private let sink: AsyncStream<PeripheralBackendEvent>.Continuation
    private let applicationRoot: String
    private let advertisementPath: String
    private let state = Mutex(State())
    private let watcher = Mutex<Task<Void, Never>?>(nil)

    private struct State {
        var application: BlueZGattApplication?
        var registered = false
        var advertisement: BlueZAdvertisement?
        var advertised = false
        var centrals: [String: BlueZConnectedCentral] = [:]
        var nextHandle: UInt16 = 1
        /// The device whose request came last (``BlueZPeripheral`` attributes subscriptions to it).
        var lastDevice: String?
        /// Characteristic paths BlueZ is notifying on.
        var notifying: Set<String> = []
        var closed = false
    }

    private static let counter = Mutex(0)

    private init(bus: DBusConnection, adapter: BlueZAdapter) {
        self.bus = bus
        self.adapter = adapter
        (events, sink) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        let number = Self.counter.withLock { value -> Int in
            value += 1
            return value
        }
        applicationRoot = "/org/bluetide/p\(getpid())_\(number)/app"
        advertisementPath = "/org/bluetide/p\(getpid())_\(number)/advertisement0"
    }

    /// A peripheral on `adapter`: its objects are exported and its devices watched from now on.
    static func open(bus: DBusConnection, adapter: BlueZAdapter) async throws -> BlueZPeripheral {
        let peripheral = BlueZPeripheral(bus: bus, adapter: adapter)
        try await peripheral.start()
        return peripheral
    }

    private func start() async throws {
        try bus.export(path: applicationRoot) { [weak self] call in
            guard let self else { throw DBusError("gone", name: "org.freedesktop.DBus.Error.UnknownObject") }
            return try await self.answer(call)
        }
        try bus.export(path: advertisementPath) { [weak self] call in
            guard let self else { throw DBusError("gone", name: "org.freedesktop.DBus.Error.UnknownObject") }
            return try self.answerAdvertisement(call)
        }
        let changed = try await bus.signals(.propertiesChanged(sender: BlueZ.service, interface: BlueZ.deviceInterface, pathNamespace: adapter.path))
        let added = try await bus.signals(DBusMatchRule(sender: BlueZ.service, interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded"))
        let prefix = adapter.path + "/"
        let task = Task { [weak self] in
            await withTaskGroup(of: Void.self) { group in
                group.addTask { [weak self] in
                    for await signal in changed {
                        guard let path = signal.path, signal.body.count >= 2, let properties = signal.body[1].dictionary else { continue }
                        self?.deviceChanged(path, properties.mapValues(\.unwrapped))
                    }
                }
                group.addTask { [weak self] in
                    for await signal in added {
                        guard let path = signal.body.first?.string, path.hasPrefix(prefix),
                              let device = signal.body.dropFirst().first?.dictionary?[BlueZ.deviceInterface]?.dictionary else { continue }
                        self?.deviceChanged(path, device.mapValues(\.unwrapped))
                    }
                }
            }
        }
        watcher.withLock { $0 = task }
    }

    var advertisingStopsOnConnection: Bool { false }

    // MARK: Services

    func setServices(_ services: [PeripheralBackendService]) async throws {
        let application = BlueZGattApplication(root: applicationRoot, services: services)
        let wasRegistered = state.withLock { state -> Bool in
            state.application = application
            state.notifying = []
            return state.registered
        }
        if wasRegistered { await unregisterApplication() }
        guard !services.isEmpty, !state.withLock({ $0.closed }) else { return }
        do {
            _ = try await bus.call(
                destination: BlueZ.service, path: adapter.path, interface: "org.bluez.GattManager1", member: "RegisterApplication",
                arguments: [.objectPath(applicationRoot), .dictionary([:])], timeout: .seconds(20))
        } catch {
            throw BlueZBackendError("bluetoothd refused the GATT services (GattManager1.RegisterApplication on \(adapter.name)): \(error)")
        }
        state.withLock { $0.registered = true }
    }

    private func unregisterApplication() async {
        state.withLock { $0.registered = false }
        _ = try? await bus.call(
            destination: BlueZ.service, path: adapter.path, interface: "org.bluez.GattManager1", member: "UnregisterApplication",
            arguments: [.objectPath(applicationRoot)], timeout: .seconds(5))
    }

    func updateValue(_ bytes: [UInt8], of value: ServedValue) async {
        guard let characteristic = state.withLock({ $0.application?.characteristic(for: value) }) else { return }
        characteristic.served.store(bytes)
        guard !characteristic.served.properties.isDisjoint(with: [.notify, .indicate]) else { return }
        // BlueZ sends the new value to every central subscribed to it (notification or indication).
        try? bus.emit(
            path: characteristic.path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            arguments: [.string(BlueZ.characteristicInterface), .dictionary(["Value": .bytes(bytes)]), .strings([])])
    }

    /// BlueZ sends to subscribed centrals only.
    func notifyEveryCentral(_ bytes: [UInt8], of value: ServedValue) async { await updateValue(bytes, of: value) }

    // MARK: Advertising

    func startAdvertising(_ advertising: AdvertisingData, scanResponse: AdvertisingData?, intervalMilliseconds: Double) async throws {
        let wanted = BlueZAdvertisement(advertising, scanResponse: scanResponse, intervalMilliseconds: intervalMilliseconds)
        let (same, registered, closed) = state.withLock { state in
            let same = state.advertised && state.advertisement == wanted
            state.advertisement = wanted
            return (same, state.advertised, state.closed)
        }
        // After close (a late re-advertising when the last central left): nothing.
        if same || closed { return }
        if registered { try? await stopAdvertising() }
        state.withLock { $0.advertisement = wanted }
        do {
            _ = try await bus.call(
                destination: BlueZ.service, path: adapter.path, interface: "org.bluez.LEAdvertisingManager1", member: "RegisterAdvertisement",
                arguments: [.objectPath(advertisementPath), .dictionary([:])], timeout: .seconds(10))
        } catch {
            throw BlueZBackendError("bluetoothd refused the advertisement (LEAdvertisingManager1.RegisterAdvertisement on \(adapter.name)): \(error)")
        }
        state.withLock { $0.advertised = true }
    }

    func stopAdvertising() async throws {
        let was = state.withLock { state -> Bool in
            defer { state.advertised = false }
            return state.advertised
        }
        guard was else { return }
        _ = try? await bus.call(
            destination: BlueZ.service, path: adapter.path, interface: "org.bluez.LEAdvertisingManager1", member: "UnregisterAdvertisement",
            arguments: [.objectPath(advertisementPath)], timeout: .seconds(5))
    }

    // MARK: Centrals

    func central(on connection: UInt16) async -> ConnectedCentral? {
        state.withLock { state in state.centrals.values.first { $0.handle == connection } }.map(ConnectedCentral.init)
    }

    /// A device's properties changed (or it appeared): `Connected` true makes it a central
    /// while services are registered; false ends it.
    private func deviceChanged(_ path: String, _ properties: [String: DBusValue]) {
        guard path.hasPrefix(adapter.path + "/"), path.split(separator: "/").count == 4 else { return }
        if properties["Connected"]?.bool == true {
            _ = knownCentral(path, address: properties["Address"]?.string, type: properties["AddressType"]?.string)
        } else if properties["Connected"]?.bool == false {
            let gone = state.withLock { $0.centrals.removeValue(forKey: path) }
            gone?.end()
        }
    }

    /// The central for a device path, made (and announced) when it is new while serving.
    private func knownCentral(_ path: String, address: String? = nil, type: String? = nil) -> BlueZConnectedCentral? {
        let (central, isNew) = state.withLock { state -> (BlueZConnectedCentral?, Bool) in
            if let known = state.centrals[path] { return (known, false) }
            guard !state.closed, state.registered || state.advertised else { return (nil, false) }
            let made = BlueZConnectedCentral(
                bus: bus, path: path, address: bluetideAddress(address, type: type) ?? Self.address(fromPath: path), handle: state.nextHandle)
            state.nextHandle = state.nextHandle == .max ? 1 : state.nextHandle + 1
            state.centrals[path] = made
            return (made, true)
        }
        if let central, isNew { sink.yield(.connected(ConnectedCentral(central))) }
        return central
    }

    /// `dev_C0_00_00_00_00_01` → C0:00:00:00:00:01 (type unknown: random when the top bits say static).
    static func address(fromPath path: String) -> BluetoothAddress {
        let hex = path.split(separator: "/").last.map { $0.dropFirst(4).replacingOccurrences(of: "_", with: ":") } ?? ""
        let random = hex.first.map { "CDEF".contains($0) } ?? false
        return (try? BluetoothAddress(hex, type: random ? .random : .public)) ?? .randomStatic(0)
    }

    // MARK: Answering BlueZ

    private func answer(_ call: DBusMessage) async throws -> [DBusValue] {
        guard let path = call.path, let application = state.withLock({ $0.application }) else {
            throw DBusError("no such object", name: "org.freedesktop.DBus.Error.UnknownObject")
        }
        switch (call.interface, call.member) {
        case ("org.freedesktop.DBus.ObjectManager", "GetManagedObjects"):
            return [application.managedObjects]
        case ("org.freedesktop.DBus.Properties", "GetAll"):
            let interface = call.body.first?.string ?? ""
            guard let properties = application.interfaces(at: path)?[interface] else { return [.dictionary([:])] }
            return [.dictionary(properties)]
        case ("org.freedesktop.DBus.Properties", "Get"):
            let interface = call.body.first?.string ?? ""
            let name = call.body.dropFirst().first?.string ?? ""
            guard let value = application.interfaces(at: path)?[interface]?[name] else {
                throw DBusError("no property \(name)", name: "org.freedesktop.DBus.Error.InvalidArgs")
            }
            return [.variant(value)]
        case (BlueZ.characteristicInterface, let member?):
            guard let characteristic = application.characteristic(at: path) else {
                throw DBusError("no characteristic at \(path)", name: "org.freedesktop.DBus.Error.UnknownObject")
            }
            return try characteristicCall(member, characteristic, call.body)
        case (BlueZ.descriptorInterface, "ReadValue"):
            guard let descriptor = application.descriptor(at: path) else {
                throw DBusError("no descriptor at \(path)", name: "org.freedesktop.DBus.Error.UnknownObject")
            }
            let offset = Int(call.body.first?.dictionary?["offset"]?.unwrapped.integer ?? 0)
            guard offset <= descriptor.value.count else { throw BlueZGattApplication.error(for: .invalidOffset) }
            return [.bytes(Array(descriptor.value[offset...]))]
        case (BlueZ.descriptorInterface, "WriteValue"):
            throw BlueZGattApplication.error(for: .writeNotPermitted)
        default:
            throw DBusError("\(call.interface ?? "?").\(call.member ?? "?") is not served here", name: "org.freedesktop.DBus.Error.UnknownMethod")
        }
    }

    /// The central a request's options name (`device`), remembering its MTU.
    private func requester(_ options: [String: DBusValue]) -> BlueZConnectedCentral? {
        guard let device = options["device"]?.unwrapped.string else { return nil }
        state.withLock { $0.lastDevice = device }
        let central = knownCentral(device)
        if let mtu = options["mtu"]?.unwrapped.integer { central?.setMTU(Int(mtu)) }
        return central
    }

    private func characteristicCall(_ member: String, _ characteristic: BlueZGattApplication.Characteristic, _ body: [DBusValue]) throws -> [DBusValue] {
        let served = characteristic.served
        switch member {
        case "ReadValue":
            let options = (body.first?.dictionary ?? [:]).mapValues(\.unwrapped)
            let central = requester(options)
            if served.permissions.contains(.readAuthorized), central?.isAuthorized != true {
                throw BlueZGattApplication.error(for: ATTErrorCode(0x08))
            }
            switch served.read(offset: Int(options["offset"]?.integer ?? 0), connection: central?.handle ?? 0) {
            case let .success(bytes): return [.bytes(bytes)]
            case let .failure(code): throw BlueZGattApplication.error(for: code)
            }
        case "WriteValue":
            guard let bytes = body.first?.bytes else { throw DBusError("WriteValue without a value", name: "org.bluez.Error.InvalidArguments") }
            let options = (body.dropFirst().first?.dictionary ?? [:]).mapValues(\.unwrapped)
            // "prepare-authorize": BlueZ asks before queueing a prepared write.
            if options["prepare-authorize"]?.bool == true { return [] }
            let central = requester(options)
            if served.permissions.contains(.writeAuthorized), central?.isAuthorized != true {
                throw BlueZGattApplication.error(for: ATTErrorCode(0x08))
            }
            guard (options["offset"]?.integer ?? 0) == 0 else { throw BlueZGattApplication.error(for: .invalidOffset) }
            let connection = central?.handle ?? 0
            if let code = served.write(bytes, connection: connection) { throw BlueZGattApplication.error(for: code) }
            sink.yield(.written(served.value, bytes: bytes, connection: connection))
            return []
        case "StartNotify", "StopNotify":
            let on = member == "StartNotify"
            let (changed, subscriber) = state.withLock { state -> (Bool, BlueZConnectedCentral?) in
                let changed = on ? state.notifying.insert(characteristic.path).inserted : state.notifying.remove(characteristic.path) != nil
                let alone = state.centrals.count == 1 ? state.centrals.values.first : nil
                return (changed, alone ?? state.lastDevice.flatMap { state.centrals[$0] })
            }
            guard changed else { return [] }
            try? bus.emit(
                path: characteristic.path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                arguments: [.string(BlueZ.characteristicInterface), .dictionary(["Notifying": .boolean(on)]), .strings([])])
            if let subscriber {
                let configuration: GATTClientConfiguration = !on ? [] : served.properties.contains(.notify) ? .notification : .indication
                sink.yield(.subscriptionChanged(served.value, configuration: configuration, connection: subscriber.handle))
            }
            return []
        default:
            throw DBusError("GattCharacteristic1.\(member) is not served here", name: "org.bluez.Error.NotSupported")
        }
    }

    private func answerAdvertisement(_ call: DBusMessage) throws -> [DBusValue] {
        let properties = state.withLock { $0.advertisement }?.properties ?? [:]
        switch (call.interface, call.member) {
        case ("org.freedesktop.DBus.Properties", "GetAll"):
            return [.dictionary(call.body.first?.string == "org.bluez.LEAdvertisement1" ? properties : [:])]
        case ("org.freedesktop.DBus.Properties", "Get"):
            guard let value = properties[call.body.dropFirst().first?.string ?? ""] else {
                throw DBusError("no such property", name: "org.freedesktop.DBus.Error.InvalidArgs")
            }
            return [.variant(value)]
        case ("org.freedesktop.DBus.ObjectManager", "GetManagedObjects"):
            return [.dictionary(key: "o", value: "a{sa{sv}}", [DBusDictionaryEntry(
                key: .objectPath(advertisementPath),
                value: .dictionary(key: "s", value: "a{sv}", [DBusDictionaryEntry(key: .string("org.bluez.LEAdvertisement1"), value: .dictionary(properties))]))])]
        case ("org.bluez.LEAdvertisement1", "Release"):
            // bluetoothd dropped it (the adapter went away or was powered off).
            state.withLock { $0.advertised = false }
            return []
        default:
            throw DBusError("\(call.interface ?? "?").\(call.member ?? "?") is not served here", name: "org.freedesktop.DBus.Error.UnknownMethod")
        }
    }

    // MARK: Closing

    /// Unregisters the advertisement and the application, and stops answering.
    func close() async {
        let centrals = state.withLock { state -> [BlueZConnectedCentral] in
            state.closed = true
            defer { state.centrals.removeAll() }
            return Array(state.centrals.values)
        }
        try? await stopAdvertising()
        if state.withLock({ $0.registered }) { await unregisterApplication() }
        bus.unexport(path: applicationRoot)
        bus.unexport(path: advertisementPath)
        watcher.withLock { $0?.cancel() }
        for central in centrals { central.end() }
        sink.finish()
    }

    deinit { watcher.withLock { $0?.cancel() } }
}

/// A central connected to the adapter, as bluetoothd reports it (`org.bluez.Device1`).
final class BlueZConnectedCentral: PeripheralCentralLink {
    let bus: DBusConnection
    let path: String
    let address: BluetoothAddress
    let handle: UInt16
    private let state = Mutex(State())

    private struct State {
        var mtu = 23
        var authorized = false
        var ended = false
        var waiters: [CheckedContinuation<DisconnectReason, Never>] = []
    }

    init(bus: DBusConnection, path: String, address: BluetoothAddress, handle: UInt16) {
        self.bus = bus
        self.path = path
        self.address = address
        self.handle = handle
    }

    var identity: AnyHashable { AnyHashable(ObjectIdentifier(self)) }
    var isAuthorized: Bool { state.withLock { $0.authorized } }
    func setMTU(_ mtu: Int) { state.withLock { $0.mtu = mtu } }
    func mtu() async -> Int { state.withLock { $0.mtu } }

    func disconnect(timeout: Double) async throws {
        _ = try await bus.call(
            destination: BlueZ.service, path: path, interface: BlueZ.deviceInterface, member: "Disconnect",
            timeout: .milliseconds(Int64(max(timeout, 0.1) * 1000)))
    }

    /// bluetoothd does not say why a device disconnected (5.66): remote user terminated.
    func waitForDisconnection() async -> DisconnectReason {
        await withCheckedContinuation { continuation in
            let ended = state.withLock { state -> Bool in
                if !state.ended { state.waiters.append(continuation) }
                return state.ended
            }
            if ended { continuation.resume(returning: .remoteUserTerminated) }
        }
    }

    func end() {
        let waiters = state.withLock { state -> [CheckedContinuation<DisconnectReason, Never>] in
            state.ended = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: .remoteUserTerminated) }
    }

    /// bluetoothd tells whether the device is paired, not the link's level: paired counts as encrypted.
    func securityLevel() async -> SecurityLevel {
        let paired = try? await bus.property("Paired", of: BlueZ.deviceInterface, at: path, destination: BlueZ.service, timeout: .seconds(5))
        return paired?.bool == true ? .encrypted : .none
    }

    func requestSecurity() async throws -> SecurityLevel {
        do {
            _ = try await bus.call(destination: BlueZ.service, path: path, interface: BlueZ.deviceInterface, member: "Pair", timeout: .seconds(60))
        } catch let error as DBusError where error.name == "org.bluez.Error.AlreadyExists" {
        } catch {
            throw BluetideError.host("pairing through bluetoothd failed: \(error)")
        }
        return await securityLevel()
    }

    func authorize() async { state.withLock { $0.authorized = true } }
    /// bluetoothd queues notifications itself.
    func waitForRoom() async throws {}
    func isConnected() async -> Bool { !state.withLock { $0.ended } }
}
