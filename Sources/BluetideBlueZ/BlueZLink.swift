import Bluetide
import BluetideDBus
import Foundation
import Synchronization

/// One link to a device through bluetoothd (`org.bluez.Device1` and its GATT objects). The
/// device's `PropertiesChanged` are watched from before `Connect`: `Connected` false ends the
/// link, `ServicesResolved` true means the GATT objects are there. Values are read and written
/// with `ReadValue`/`WriteValue`; notifications and indications arrive as `Value` changes after
/// `StartNotify`.
final class BlueZLink: CentralLink {
    private struct State {
        var connected = false
        var servicesResolved = false
        var ended: DisconnectReason?
        var waiters: [CheckedContinuation<DisconnectReason, Never>] = []
        var resolvedWaiters: [CheckedContinuation<Void, Never>] = []
        var paired = false
        var rssi: Int?
        var mtu = 23
        /// Object path of each characteristic and descriptor, by the handle Bluetide knows it by.
        var characteristicPaths: [UInt16: String] = [:]
        var descriptorPaths: [UInt16: String] = [:]
        var subscriptions: [String: (AsyncStream<[UInt8]>.Continuation, Task<Void, Never>)] = [:]
        /// Characteristics whose notifications bluetoothd hands over a socket (`NotifyAcquired`).
        var acquirable: Set<String> = []
        /// Notification sockets from `AcquireNotify`, by characteristic path.
        var sockets: [String: BlueZNotifySocket] = [:]
    }

    let bus: DBusConnection
    let device: String
    let address: BluetoothAddress
    /// Our adapter's address as BlueZ writes it, to find the device's key in its store.
    let adapterAddress: String?
    let agent: BlueZAgent?
    let agentProblem: String?
    let pairing: PairingPolicy
    private let state = Mutex(State())
    private let watcher = Mutex<Task<Void, Never>?>(nil)

    private init(
        bus: DBusConnection, device: String, address: BluetoothAddress, adapterAddress: String?, agent: BlueZAgent?, agentProblem: String?,
        pairing: PairingPolicy
    ) {
        self.bus = bus
        self.device = device
        self.address = address
        self.adapterAddress = adapterAddress
        self.agent = agent
        self.agentProblem = agentProblem
        self.pairing = pairing
    }

    /// A link whose device is watched from now on.
    static func watch(
        bus: DBusConnection, device: String, address: BluetoothAddress, adapterAddress: String?, agent: BlueZAgent?,
        agentProblem: String?, pairing: PairingPolicy
    ) async throws -> BlueZLink {
        let link = BlueZLink(
            bus: bus, device: device, address: address, adapterAddress: adapterAddress, agent: agent, agentProblem: agentProblem,
            pairing: pairing)
        let changes = try await bus.signals(.propertiesChanged(sender: BlueZ.service, interface: BlueZ.deviceInterface, pathNamespace: device))
        let task = Task { [weak link] in
            for await change in changes where change.path == device {
                guard let link, change.body.count >= 2, let properties = change.body[1].dictionary else { continue }
                link.apply(properties.mapValues(\.unwrapped))
            }
            link?.end(.localHostTerminated)
        }
        link.watcher.withLock { $0 = task }
        return link
    }

    private func apply(_ properties: [String: DBusValue]) {
        if let paired = properties["Paired"]?.bool { state.withLock { $0.paired = paired } }
        if let rssi = properties["RSSI"]?.integer { state.withLock { $0.rssi = Int(rssi) } }
        if let connected = properties["Connected"]?.bool {
            state.withLock { $0.connected = connected }
            if !connected { end(.remoteUserTerminated) }
        }
        if properties["ServicesResolved"]?.bool == true {
            let waiters = state.withLock { state in
                state.servicesResolved = true
                let waiters = state.resolvedWaiters
                state.resolvedWaiters = []
                return waiters
            }
            for waiter in waiters { waiter.resume() }
        }
    }

    /// The link is over: waiters resume, subscriptions end.
    func end(_ reason: DisconnectReason) {
        let (waiters, resolved, streams) = state.withLock { state -> ([CheckedContinuation<DisconnectReason, Never>], [CheckedContinuation<Void, Never>], [(AsyncStream<[UInt8]>.Continuation, Task<Void, Never>)]) in
            guard state.ended == nil else { return ([], [], []) }
            state.ended = reason
            state.connected = false
            defer {
                state.waiters = []
                state.resolvedWaiters = []
                state.subscriptions = [:]
            }
            for socket in state.sockets.values { socket.stop() }
            state.sockets = [:]
            return (state.waiters, state.resolvedWaiters, Array(state.subscriptions.values))
        }
        for waiter in waiters { waiter.resume(returning: reason) }
        for waiter in resolved { waiter.resume() }
        for (continuation, task) in streams {
            task.cancel()
            continuation.finish()
        }
        watcher.withLock { $0?.cancel() }
    }

    /// Waits until bluetoothd resolved the services (or the link ended), at most until `deadline`.
    func waitForServices(until deadline: ContinuousClock.Instant) async throws {
        let resolved = try await bus.property(
            "ServicesResolved", of: BlueZ.deviceInterface, at: device, destination: BlueZ.service, timeout: .seconds(5))
        if resolved.bool == true { apply(["ServicesResolved": .boolean(true), "Connected": .boolean(true)]) }
        // A device bonded before this link: bluetoothd encrypts it from its key on connect.
        let paired = try? await bus.property("Paired", of: BlueZ.deviceInterface, at: device, destination: BlueZ.service, timeout: .seconds(5))
        if let paired = paired?.bool { apply(["Paired": .boolean(paired)]) }
        state.withLock { $0.connected = true }
        let ready = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let now = self.state.withLock { state -> Bool in
                        if state.servicesResolved || state.ended != nil { return true }
                        state.resolvedWaiters.append(continuation)
                        return false
                    }
                    if now { continuation.resume() }
                }
                return true
            }
            group.addTask {
                try? await Task.sleep(until: deadline, clock: .continuous)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        if let ended = state.withLock({ $0.ended }) { throw BluetideError.disconnected(reason: ended) }
        guard ready else { throw DBusError("services not resolved in time", name: "org.freedesktop.DBus.Error.NoReply") }
    }

    // MARK: GATT

    /// The handle in a BlueZ object path's last element (`char000b` → 0x000B).
    static func handle(in path: String, prefix: String) -> UInt16? {
        guard let last = path.split(separator: "/").last, last.hasPrefix(prefix) else { return nil }
        return UInt16(last.dropFirst(prefix.count), radix: 16)
    }

    static func properties(_ flags: [String]) -> GATTCharacteristicProperties {
        var properties: GATTCharacteristicProperties = []
        for flag in flags {
            switch flag {
            case "broadcast": properties.insert(.broadcast)
            case "read", "encrypt-read", "encrypt-authenticated-read", "secure-read": properties.insert(.read)
            case "write-without-response": properties.insert(.writeWithoutResponse)
            case "write", "encrypt-write", "encrypt-authenticated-write", "secure-write", "reliable-write": properties.insert(.write)
            case "notify": properties.insert(.notify)
            case "indicate": properties.insert(.indicate)
            case "authenticated-signed-writes": properties.insert(.authenticatedSignedWrites)
            case "extended-properties": properties.insert(.extendedProperties)
            default: break
            }
        }
        return properties
    }

    /// The device's services from bluetoothd's objects (service, char and desc paths carry
    /// their handles).
    static func database(_ objects: BlueZObjects, device: String) -> (services: [GATTRemoteService], characteristics: [UInt16: String], descriptors: [UInt16: String], mtu: Int?, acquirable: Set<String>) {
        var acquirable: Set<String> = []
        var services: [GATTRemoteService] = []
        var characteristicPaths: [UInt16: String] = [:]
        var descriptorPaths: [UInt16: String] = [:]
        var mtu: Int?
        let below = objects.objects.filter { $0.key.hasPrefix(device + "/") }
        for (servicePath, interfaces) in below.sorted(by: { $0.key < $1.key }) {
            guard let service = interfaces[BlueZ.serviceInterface], let start = handle(in: servicePath, prefix: "service"),
                  let uuid = service["UUID"]?.string.flatMap({ try? BluetoothUUID($0) }) else { continue }
            var characteristics: [GATTRemoteCharacteristic] = []
            var end = start
            for (characteristicPath, charInterfaces) in below.sorted(by: { $0.key < $1.key })
            where characteristicPath.hasPrefix(servicePath + "/") && !characteristicPath.dropFirst(servicePath.count + 1).contains("/") {
                guard let characteristic = charInterfaces[BlueZ.characteristicInterface],
                      let declaration = handle(in: characteristicPath, prefix: "char"),
                      let charUUID = characteristic["UUID"]?.string.flatMap({ try? BluetoothUUID($0) }) else { continue }
                let valueHandle = characteristic["Handle"]?.integer.flatMap { UInt16(exactly: $0) }.flatMap { $0 == 0 ? nil : $0 } ?? declaration &+ 1
                if let value = characteristic["MTU"]?.integer { mtu = Int(value) }
                // bluetoothd offers AcquireNotify for notify (not indicate) characteristics, and
                // says so with the NotifyAcquired property.
                if characteristic["NotifyAcquired"] != nil, characteristic["Flags"]?.strings?.contains("notify") == true {
                    acquirable.insert(characteristicPath)
                }
                var descriptors: [GATTDescriptor] = []
                for (descriptorPath, descInterfaces) in below.sorted(by: { $0.key < $1.key })
                where descriptorPath.hasPrefix(characteristicPath + "/") {
                    guard let descriptor = descInterfaces[BlueZ.descriptorInterface], let handle = handle(in: descriptorPath, prefix: "desc"),
                          let descUUID = descriptor["UUID"]?.string.flatMap({ try? BluetoothUUID($0) }) else { continue }
                    descriptors.append(GATTDescriptor(uuid: descUUID, handle: handle))
                    descriptorPaths[handle] = descriptorPath
                    end = max(end, handle)
                }
                end = max(end, valueHandle)
                let last = descriptors.map(\.handle).max() ?? valueHandle
                characteristics.append(GATTRemoteCharacteristic(
                    characteristic: GATTCharacteristic(
                        uuid: charUUID, declarationHandle: declaration, valueHandle: valueHandle, endHandle: last,
                        properties: properties(characteristic["Flags"]?.strings ?? [])),
                    descriptors: descriptors.sorted { $0.handle < $1.handle }))
                characteristicPaths[valueHandle] = characteristicPath
            }
            services.append(GATTRemoteService(
                service: GATTServiceRange(uuid: uuid, startHandle: start, endHandle: end, isPrimary: service["Primary"]?.bool ?? true),
                characteristics: characteristics.sorted { $0.characteristic.declarationHandle < $1.characteristic.declarationHandle }))
        }
        return (services.sorted { $0.service.startHandle < $1.service.startHandle }, characteristicPaths, descriptorPaths, mtu, acquirable)
    }

    func discoverDatabase() async throws -> [GATTRemoteService] {
        let reply = try await bus.call(
            destination: BlueZ.service, path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects",
            timeout: .seconds(10))
        let found = Self.database(BlueZObjects(reply.first ?? .dictionary([:])), device: device)
        state.withLock { state in
            state.characteristicPaths = found.characteristics
            state.descriptorPaths = found.descriptors
            state.acquirable = found.acquirable
            if let mtu = found.mtu { state.mtu = mtu }
        }
        return found.services
    }

    func exchangeMTU(_ mtu: Int) async throws -> Int {
        // bluetoothd exchanges the MTU itself when it connects; report what it got.
        await self.mtu()
    }

    private func path(of characteristic: GATTCharacteristic) throws -> String {
        guard let path = state.withLock({ $0.characteristicPaths[characteristic.valueHandle] }) else {
            throw BluetideError.characteristicNotFound(characteristic.uuid, services: [])
        }
        return path
    }

    /// Runs a GATT call, turning BlueZ's errors into Bluetide's (an ATT error code when BlueZ names one).
    private func gatt<T>(_ operation: String, _ uuid: BluetoothUUID, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as DBusError {
            if let code = Self.attCode(error) { throw BluetideError.attError(ATTErrorCode(code), characteristic: uuid, operation: operation) }
            if state.withLock({ $0.ended }) != nil || error.name == "org.bluez.Error.NotConnected" {
                throw BluetideError.disconnected(reason: state.withLock { $0.ended } ?? .remoteUserTerminated)
            }
            throw BluetideError.host("\(operation) of \(uuid) failed in bluetoothd: \(error)")
        }
    }

    /// The ATT error code in a BlueZ error ("… ATT error: 0x80", or the names of the common ones).
    static func attCode(_ error: DBusError) -> UInt8? {
        if let range = error.message.range(of: "ATT error: 0x") {
            return UInt8(error.message[range.upperBound...].prefix(2), radix: 16)
        }
        switch error.name {
        case "org.bluez.Error.NotPermitted": return error.message.lowercased().contains("write") ? 0x03 : 0x02
        case "org.bluez.Error.NotAuthorized": return 0x08
        case "org.bluez.Error.InvalidValueLength": return 0x0D
        case "org.bluez.Error.InvalidOffset": return 0x07
        default: return nil
        }
    }

    func read(_ characteristic: GATTCharacteristic) async throws -> [UInt8] {
        let path = try path(of: characteristic)
        return try await gatt("read", characteristic.uuid) {
            let reply = try await bus.call(
                destination: BlueZ.service, path: path, interface: BlueZ.characteristicInterface, member: "ReadValue",
                arguments: [.dictionary([:])], timeout: .seconds(30))
            return reply.first?.bytes ?? []
        }
    }

    func read(_ descriptor: GATTDescriptor, of characteristic: GATTCharacteristic) async throws -> [UInt8] {
        guard let path = state.withLock({ $0.descriptorPaths[descriptor.handle] }) else {
            throw BluetideError.descriptorNotFound(descriptor.uuid, characteristic: characteristic.uuid, descriptors: [])
        }
        return try await gatt("read of descriptor \(descriptor.uuid)", characteristic.uuid) {
            let reply = try await bus.call(
                destination: BlueZ.service, path: path, interface: BlueZ.descriptorInterface, member: "ReadValue",
                arguments: [.dictionary([:])], timeout: .seconds(30))
            return reply.first?.bytes ?? []
        }
    }

    func write(_ value: [UInt8], to characteristic: GATTCharacteristic, withResponse: Bool) async throws {
        let path = try path(of: characteristic)
        try await gatt(withResponse ? "write" : "write without response", characteristic.uuid) {
            _ = try await bus.call(
                destination: BlueZ.service, path: path, interface: BlueZ.characteristicInterface, member: "WriteValue",
                arguments: [.bytes(value), .dictionary(["type": .string(withResponse ? "request" : "command")])], timeout: .seconds(30))
        }
    }

    /// Notifications through a socket when bluetoothd offers it (`AcquireNotify`: each read is
    /// one value, no D-Bus message per value), else `StartNotify` and the `Value` changes
    /// (indications, and characteristics another client already subscribed to).
    func subscribe(to characteristic: GATTCharacteristic) async throws -> AsyncStream<[UInt8]> {
        let path = try path(of: characteristic)
        if state.withLock({ $0.acquirable.contains(path) }), let stream = try await acquireNotify(path) { return stream }
        return try await startNotify(characteristic, path: path)
    }

    /// Whether `characteristic`'s notifications come through an acquired socket now.
    func isAcquired(_ characteristic: GATTCharacteristic) -> Bool {
        guard let path = state.withLock({ $0.characteristicPaths[characteristic.valueHandle] }) else { return false }
        return state.withLock { $0.sockets[path] != nil }
    }

    /// `AcquireNotify`; nil when bluetoothd refuses it (the caller falls back to StartNotify).
    private func acquireNotify(_ path: String) async throws -> AsyncStream<[UInt8]>? {
        let reply: [DBusValue]
        do {
            reply = try await bus.call(
                destination: BlueZ.service, path: path, interface: BlueZ.characteristicInterface, member: "AcquireNotify",
                arguments: [.dictionary([:])], timeout: .seconds(30))
        } catch let error as DBusError where error.name == "org.bluez.Error.NotConnected" {
            throw BluetideError.disconnected(reason: state.withLock { $0.ended } ?? .remoteUserTerminated)
        } catch is DBusError {
            return nil
        }
        guard case let .unixFD(fd)? = reply.first?.unwrapped else { return nil }
        let mtu = reply.dropFirst().first?.integer.map { Int($0) }
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream(bufferingPolicy: .bufferingNewest(4096))
        let socket = BlueZNotifySocket(fd: fd, bufferSize: max(mtu ?? 517, 517))
        let stale = state.withLock { state -> Bool in
            if state.ended != nil { return true }
            state.sockets[path]?.stop()
            state.sockets[path] = socket
            return false
        }
        socket.start(continuation)
        if stale { socket.stop() }
        continuation.onTermination = { _ in socket.stop() }
        return stream
    }

    private func startNotify(_ characteristic: GATTCharacteristic, path: String) async throws -> AsyncStream<[UInt8]> {
        let changes = try await bus.signals(.propertiesChanged(sender: BlueZ.service, interface: BlueZ.characteristicInterface, pathNamespace: path))
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream(bufferingPolicy: .bufferingNewest(4096))
        let pump = Task {
            for await change in changes where change.path == path {
                guard change.body.count >= 2, let value = change.body[1].dictionary?["Value"]?.bytes else { continue }
                continuation.yield(value)
            }
            continuation.finish()
        }
        let ended = state.withLock { state -> Bool in
            if state.ended != nil { return true }
            state.subscriptions[path] = (continuation, pump)
            return false
        }
        if ended {
            pump.cancel()
            continuation.finish()
            return stream
        }
        do {
            try await gatt("subscribe", characteristic.uuid) {
                _ = try await bus.call(
                    destination: BlueZ.service, path: path, interface: BlueZ.characteristicInterface, member: "StartNotify", timeout: .seconds(30))
            }
        } catch {
            _ = state.withLock { $0.subscriptions.removeValue(forKey: path) }
            pump.cancel()
            continuation.finish()
            throw error
        }
        return stream
    }

    func unsubscribe(from characteristic: GATTCharacteristic) async throws {
        let path = try path(of: characteristic)
        // An acquired socket: closing it is the unsubscription (bluetoothd writes the CCCD).
        if let socket = state.withLock({ $0.sockets.removeValue(forKey: path) }) {
            socket.stop()
            return
        }
        if let (continuation, task) = state.withLock({ $0.subscriptions.removeValue(forKey: path) }) {
            task.cancel()
            continuation.finish()
        }
        try await gatt("unsubscribe", characteristic.uuid) {
            _ = try await bus.call(
                destination: BlueZ.service, path: path, interface: BlueZ.characteristicInterface, member: "StopNotify", timeout: .seconds(10))
        }
    }

    func mtu() async -> Int { state.withLock { $0.mtu } }

    func rssi() async throws -> Int {
        if let rssi = state.withLock({ $0.rssi }) { return rssi }
        throw BluetideError.invalidArgument(
            "bluetoothd does not report a connected link's RSSI: use bluetide scan for the advertising RSSI, or --transport hci-socket:N")
    }

    func disconnect() async throws -> DisconnectReason {
        _ = try? await bus.call(destination: BlueZ.service, path: device, interface: BlueZ.deviceInterface, member: "Disconnect", timeout: .seconds(10))
        end(.localHostTerminated)
        return .localHostTerminated
    }

    func waitForDisconnection() async -> DisconnectReason {
        await withCheckedContinuation { continuation in
            let reason = state.withLock { state -> DisconnectReason? in
                if let ended = state.ended { return ended }
                state.waiters.append(continuation)
                return nil
            }
            if let reason { continuation.resume(returning: reason) }
        }
    }

    func isOpen() async -> Bool { state.withLock { $0.ended == nil && $0.connected } }

    /// Pairs through bluetoothd (`Device1.Pair`, with MITM protection when both sides' IO
    /// capabilities allow it), our agent answering its questions, within the policy's time limit
    /// plus time for a person to type. A device already paired is not paired again: BlueZ
    /// pairs a device once, so `force` says how to start over instead.
    func pair(force: Bool) async throws -> SecurityLevel {
        if state.withLock({ $0.paired }) {
            guard force else { return await securityLevel() }
            throw BluetideError.host(
                "\(address) is already paired through bluetoothd and it pairs a device once: to pair again, "
                    + "bluetide bonds remove \(address) --transport bluez, then connect again")
        }
        guard let agent else {
            throw BluetideError.host("cannot pair through bluetoothd: \(agentProblem ?? "no pairing agent")")
        }
        agent.forget(device)
        do {
            _ = try await bus.call(
                destination: BlueZ.service, path: device, interface: BlueZ.deviceInterface, member: "Pair",
                timeout: pairing.timeout + .seconds(30))
        } catch let error as DBusError {
            if error.name == "org.bluez.Error.AlreadyExists" {
                state.withLock { $0.paired = true }
                return await securityLevel()
            }
            if error.isTimeout {
                _ = try? await bus.call(
                    destination: BlueZ.service, path: device, interface: BlueZ.deviceInterface, member: "CancelPairing", timeout: .seconds(5))
            }
            throw Self.pairingError(error, method: agent.method(of: device))
        }
        state.withLock { $0.paired = true }
        return await securityLevel()
    }

    /// BlueZ's answer to `Pair` in Bluetide's words (the command line explains those).
    static func pairingError(_ error: DBusError, method: BlueZAgent.Method?) -> BluetideError {
        switch error.name {
        case "org.bluez.Error.AuthenticationCanceled", "org.bluez.Error.AuthenticationRejected":
            // Our agent (the user, or a mode that could not answer) said no.
            return .pairingFailed(.localFailure(method == .numericComparison ? .numericComparisonFailed : .passkeyEntryFailed))
        case "org.bluez.Error.AuthenticationTimeout":
            return .pairingFailed(.timeout)
        case _ where error.isTimeout:
            return .pairingFailed(.timeout)
        case "org.bluez.Error.AuthenticationFailed":
            return .host("pairing through bluetoothd failed: \(error.message) (the device refused, or the passkey did not match); check the number and pair again")
        default:
            return .host("pairing through bluetoothd failed: \(error)")
        }
    }

    /// The link's level: none until paired; then the level of the key bluetoothd stored (its key
    /// store, when this process may read it: root), else what our agent saw while pairing
    /// (numeric comparison: authenticated Secure Connections; a passkey: authenticated), else
    /// encrypted (a paired LE link is encrypted, bonded devices from the key on connect).
    func securityLevel() async -> SecurityLevel {
        guard state.withLock({ $0.paired }) else { return .none }
        let text = try? await bus.property("Address", of: BlueZ.deviceInterface, at: device, destination: BlueZ.service, timeout: .seconds(2))
        if let adapterAddress, let text = text?.string, let key = BlueZKeyInfo.read(adapter: adapterAddress, device: text) {
            return key.securityLevel
        }
        switch agent?.method(of: device) {
        case .numericComparison: return .authenticatedSecureConnections
        case .passkey: return .authenticated
        case .justWorks, nil: return .encrypted
        }
    }

    func parameters() async -> ConnectionParameters? { nil }

    func requestParameters(intervalMin: UInt16, intervalMax: UInt16, latency: UInt16, supervisionTimeout: UInt16) async throws {
        throw BluetideError.invalidArgument("bluetoothd chooses the connection parameters itself: use --transport hci-socket:N to set them")
    }

    /// bluetoothd raises the security level and retries by itself.
    var pairsOnSecurityErrors: Bool { false }
}
