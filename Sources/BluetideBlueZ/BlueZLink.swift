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
    }

    let bus: DBusConnection
    let device: String
    let address: BluetoothAddress
    private let state = Mutex(State())
    private let watcher = Mutex<Task<Void, Never>?>(nil)

    private init(bus: DBusConnection, device: String, address: BluetoothAddress) {
        self.bus = bus
        self.device = device
        self.address = address
    }

    /// A link whose device is watched from now on.
    static func watch(bus: DBusConnection, device: String, address: BluetoothAddress) async throws -> BlueZLink {
        let link = BlueZLink(bus: bus, device: device, address: address)
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
    static func database(_ objects: BlueZObjects, device: String) -> (services: [GATTRemoteService], characteristics: [UInt16: String], descriptors: [UInt16: String], mtu: Int?) {
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
        return (services.sorted { $0.service.startHandle < $1.service.startHandle }, characteristicPaths, descriptorPaths, mtu)
    }

    func discoverDatabase() async throws -> [GATTRemoteService] {
        let reply = try await bus.call(
            destination: BlueZ.service, path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects",
            timeout: .seconds(10))
        let found = Self.database(BlueZObjects(reply.first ?? .dictionary([:])), device: device)
        state.withLock { state in
            state.characteristicPaths = found.characteristics
            state.descriptorPaths = found.descriptors
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

    func subscribe(to characteristic: GATTCharacteristic) async throws -> AsyncStream<[UInt8]> {
        let path = try path(of: characteristic)
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

    func pair(force: Bool) async throws -> SecurityLevel {
        if state.withLock({ $0.paired }) && !force { return .encrypted }
        do {
            _ = try await bus.call(destination: BlueZ.service, path: device, interface: BlueZ.deviceInterface, member: "Pair", timeout: .seconds(60))
        } catch let error as DBusError where error.name == "org.bluez.Error.AlreadyExists" {
        } catch {
            throw BluetideError.host("pairing through bluetoothd failed: \(error)")
        }
        state.withLock { $0.paired = true }
        return .encrypted
    }

    /// BlueZ says whether a device is paired, not the link's level: paired counts as encrypted.
    func securityLevel() async -> SecurityLevel { state.withLock { $0.paired } ? .encrypted : .none }

    func parameters() async -> ConnectionParameters? { nil }

    func requestParameters(intervalMin: UInt16, intervalMax: UInt16, latency: UInt16, supervisionTimeout: UInt16) async throws {
        throw BluetideError.invalidArgument("bluetoothd chooses the connection parameters itself: use --transport hci-socket:N to set them")
    }

    /// bluetoothd raises the security level and retries by itself.
    var pairsOnSecurityErrors: Bool { false }
}
