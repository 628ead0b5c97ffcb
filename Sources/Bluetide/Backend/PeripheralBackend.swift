import BluetideBase
import BluetideHost
import Synchronization

// The seam under the public peripheral: `Peripheral` (services from the `@Characteristic` DSL
// or definitions, advertising, value updates, connected centrals, subscriptions) runs over a
// `PeripheralBackend`. Bluetide's own host is one implementation (`HostPeripheralBackend`,
// below); BlueZ over D-Bus (`BluetideBlueZ`) is another. A central backend that can also serve
// conforms to `PeripheralBackendProvider`; `Bluetooth.open(transport:)` then gives its
// `Bluetooth.peripheral` that backend — no switch to edit for a third one.
//
// What stays in `Peripheral` for every backend: binding `@Characteristic` properties to their
// values, ordering value updates, re-advertising after connections, fanning events out to
// subscribers. What a backend does: put the services where centrals reach them, answer reads
// and writes through each characteristic's `read`/`write` (which apply the DSL's decoding and
// validation), send notifications, advertise, and report what centrals do.

/// A central backend (``CentralBackend``) whose stack can also take the peripheral role.
public protocol PeripheralBackendProvider: CentralBackend {
    /// The peripheral role on the same stack and adapter (made once, at open).
    func makePeripheral() async throws -> any PeripheralBackend
}

/// The peripheral role of a Bluetooth stack: what ``Peripheral`` needs of it.
///
/// Values are named by ``ServedValue`` (a handle in the own host's layout: the same numbers
/// on every backend, so code that lays a database out ahead of time keeps working); centrals by
/// ``ConnectedCentral`` and their connection handle (a backend without HCI handles numbers its
/// centrals itself).
public protocol PeripheralBackend: Sendable {
    /// Serves `services` in place of everything served before (an empty list serves nothing).
    /// Reads and writes of centrals go through each characteristic's
    /// ``PeripheralBackendCharacteristic/read(offset:connection:)`` and
    /// ``PeripheralBackendCharacteristic/write(_:connection:)``.
    func setServices(_ services: [PeripheralBackendService]) async throws
    /// Serves `services` at exactly the handles they give; a backend whose stack lays handles
    /// out itself throws, saying what to use instead.
    func serve(placed services: [GATTServicePlacement]) async throws
    /// Starts (or changes) connectable advertising: the caller's advertising data and scan
    /// response, `intervalMilliseconds` apart (20…10 240). A stack that builds the packets
    /// itself takes the fields it knows (flags are its own).
    func startAdvertising(_ advertising: AdvertisingData, scanResponse: AdvertisingData?, intervalMilliseconds: Double) async throws
    /// Stops advertising.
    func stopAdvertising() async throws
    /// Whether the stack stops advertising when a central connects (the controller does;
    /// ``Peripheral`` then starts it again while there is room).
    var advertisingStopsOnConnection: Bool { get }
    /// Sets a value and notifies (or indicates) every central subscribed to it.
    func updateValue(_ bytes: [UInt8], of value: ServedValue) async
    /// Notifies every connected central of `value`, subscribed or not (a stack that cannot
    /// notifies the subscribed ones).
    func notifyEveryCentral(_ bytes: [UInt8], of value: ServedValue) async
    /// What centrals do, in order: one sequence for the backend's life, read by one task.
    var events: AsyncStream<PeripheralBackendEvent> { get }
    /// The central on `connection`, when it is still connected.
    func central(on connection: UInt16) async -> ConnectedCentral?
    /// Why this backend cannot take the peripheral role now, in one line saying what to use
    /// instead; nil when it can.
    var unavailable: String? { get }
    /// Unregisters everything (services, advertising); the stack stays open.
    func close() async
}

extension PeripheralBackend {
    /// Not every stack lets the caller choose handles.
    public func serve(placed services: [GATTServicePlacement]) async throws {
        throw BluetideError.invalidArgument(
            "this backend lays GATT handles out itself: a device that must keep given handles (a clone) needs the own host (--transport hci-socket:N)")
    }

    public var unavailable: String? { nil }
}

/// Something a central did to a ``PeripheralBackend``.
public enum PeripheralBackendEvent: Sendable {
    /// A central connected (``ConnectedCentral/waitForDisconnection()`` tells when it leaves).
    case connected(ConnectedCentral)
    /// A central's write to `value` was accepted (after ``PeripheralBackendCharacteristic/write(_:connection:)``).
    case written(ServedValue, bytes: [UInt8], connection: UInt16)
    /// A central's subscription to `value` changed (empty configuration: unsubscribed).
    case subscriptionChanged(ServedValue, configuration: GATTClientConfiguration, connection: UInt16)
    /// A central asks for a characteristic that needs the app's authorisation (the own host).
    case authorizationRequested(AuthorizationRequest)
}

/// One served service as a backend sees it.
public struct PeripheralBackendService: Sendable {
    /// The service type.
    public let uuid: BluetoothUUID
    /// Primary (discoverable) or secondary.
    public let isPrimary: Bool
    /// The characteristics, in declaration order.
    public let characteristics: [PeripheralBackendCharacteristic]
    /// The definition as given (the own host serves it as is).
    package let definition: GATTServiceDefinition

    init(_ definition: GATTServiceDefinition, values: [ServedValue]) {
        uuid = definition.uuid
        isPrimary = definition.isPrimary
        self.definition = definition
        characteristics = zip(definition.characteristics, values).map { PeripheralBackendCharacteristic($0, value: $1) }
    }
}

/// One served characteristic as a backend sees it: its declaration and the operations that
/// apply the definition's rules (read handler, write validation, maximum length) to a value
/// kept here — the same rules the own host applies.
public struct PeripheralBackendCharacteristic: Sendable {
    /// The characteristic type.
    public let uuid: BluetoothUUID
    /// What centrals may do.
    public let properties: GATTCharacteristicProperties
    /// Access rules (encryption, authentication, authorisation needed).
    public let permissions: GATTPermissions
    /// Which value this is, for ``PeripheralBackend/updateValue(_:of:)`` and events.
    public let value: ServedValue
    /// Longest value a central may write, octets.
    public let maximumLength: Int
    /// Descriptors other than the CCCD (the stack adds that one): type, permissions and value.
    public let descriptors: [(uuid: BluetoothUUID, permissions: GATTPermissions, value: [UInt8])]
    private let definition: GATTCharacteristicDefinition
    private let stored: Stored

    /// The current value when no read handler computes it.
    private final class Stored: Sendable {
        let value: Mutex<[UInt8]>
        init(_ value: [UInt8]) { self.value = Mutex(value) }
    }

    init(_ definition: GATTCharacteristicDefinition, value: ServedValue) {
        uuid = definition.uuid
        properties = definition.properties
        permissions = definition.permissions
        self.value = value
        maximumLength = definition.maximumLength
        descriptors = definition.descriptors.map { ($0.uuid, $0.permissions, $0.value) }
        self.definition = definition
        stored = Stored(definition.value)
    }

    /// The value a central reads from `offset` on `connection`, or the ATT error that refuses it.
    public func read(offset: Int = 0, connection: UInt16) -> Result<[UInt8], ATTErrorCode> {
        let whole: [UInt8]
        if let onRead = definition.onRead {
            switch onRead(GATTReadContext(connection: connection, handle: value.valueHandle, offset: offset)) {
            case let .failure(code): return .failure(code)
            case let .success(bytes): whole = bytes
            }
        } else {
            whole = stored.value.withLock { $0 }
        }
        guard offset <= whole.count else { return .failure(.invalidOffset) }
        return .success(Array(whole[offset...]))
    }

    /// Applies a central's write (the whole value) from `connection`: nil when accepted (the
    /// value is stored), else the ATT error that refuses it (too long: Invalid Attribute Value
    /// Length; the definition's validation, e.g. the DSL's decoding and `validate`).
    public func write(_ bytes: [UInt8], connection: UInt16) -> ATTErrorCode? {
        guard bytes.count <= maximumLength else { return .invalidAttributeValueLength }
        if let validate = definition.validateWrite,
           let code = validate(GATTWriteContext(connection: connection, handle: value.valueHandle, uuid: uuid, value: bytes)) {
            return code
        }
        stored.value.withLock { $0 = bytes }
        return nil
    }

    /// Stores a value the app set (``Peripheral/updateValue(_:of:)``, a property assignment).
    public func store(_ bytes: [UInt8]) { stored.value.withLock { $0 = bytes } }
}

/// A central connected to a backend's peripheral: what ``ConnectedCentral`` needs of it.
public protocol PeripheralCentralLink: Sendable {
    /// The central's address.
    var address: BluetoothAddress { get }
    /// The connection's number on this backend (the HCI handle on the own host).
    var handle: UInt16 { get }
    /// Identity of the link: equal for the same connection.
    var identity: AnyHashable { get }
    /// The effective ATT MTU, octets.
    func mtu() async -> Int
    /// Disconnects the central within `timeout` seconds.
    func disconnect(timeout: Double) async throws
    /// Waits until the link closes and returns the reason.
    func waitForDisconnection() async -> DisconnectReason
    /// The link's security level now.
    func securityLevel() async -> SecurityLevel
    /// Asks the central to secure the link; the level reached.
    func requestSecurity() async throws -> SecurityLevel
    /// Authorises the central for `security: .authorized` characteristics until it leaves.
    func authorize() async
    /// Waits until the link has room for more notifications.
    func waitForRoom() async throws
    /// Whether the link is still open.
    func isConnected() async -> Bool
}

// MARK: The own host

/// A central connected to the own host.
struct HostCentralPeer: PeripheralCentralLink {
    let connection: HostConnection
    let stack: HostStack

    var address: BluetoothAddress { connection.peer }
    var handle: UInt16 { connection.handle }
    var identity: AnyHashable { AnyHashable(connection) }
    func mtu() async -> Int { await connection.mtu() }
    func disconnect(timeout: Double) async throws { _ = try await connection.disconnect(timeout: timeout) }
    func waitForDisconnection() async -> DisconnectReason { DisconnectReason(await connection.waitForDisconnection()) }
    func securityLevel() async -> SecurityLevel { await stack.securityLevel(of: handle) }
    func requestSecurity() async throws -> SecurityLevel { try await stack.pair(handle) }
    func authorize() async { await stack.authorize(.allowAll(connection: handle)) }
    func waitForRoom() async throws { try await stack.waitForBuffers(on: handle) }
    func isConnected() async -> Bool { await connection.isOpen() }
}

/// Bluetide's own host as a peripheral backend.
final class HostPeripheralBackend: PeripheralBackend {
    let stack: HostStack
    let unavailable: String?
    let events: AsyncStream<PeripheralBackendEvent>
    private let pump: Task<Void, Never>

    init(stack: HostStack, unavailable: String? = nil) {
        self.stack = stack
        self.unavailable = unavailable
        let (events, sink) = AsyncStream.makeStream(of: PeripheralBackendEvent.self, bufferingPolicy: .unbounded)
        self.events = events
        // Connections and server events come on two streams; one task each, feeding one queue.
        pump = Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await connection in stack.incomingConnections {
                        sink.yield(.connected(ConnectedCentral(HostCentralPeer(connection: connection, stack: stack))))
                    }
                }
                group.addTask {
                    for await event in stack.serverEvents {
                        switch event.event {
                        case let .valueWritten(connection, handle, _, value):
                            sink.yield(.written(ServedValue(valueHandle: handle), bytes: value, connection: connection))
                        case let .subscriptionChanged(connection, handle, configuration):
                            sink.yield(.subscriptionChanged(ServedValue(valueHandle: handle), configuration: configuration, connection: connection))
                        case let .authorizationRequested(request):
                            // Nobody to ask when the central is already gone: refused.
                            guard let link = await stack.openConnections.first(where: { $0.handle == request.connection }) else {
                                await stack.authorize(.deny(request))
                                continue
                            }
                            let central = ConnectedCentral(HostCentralPeer(connection: link, stack: stack))
                            sink.yield(.authorizationRequested(AuthorizationRequest(request, central: central)))
                        default:
                            break
                        }
                    }
                }
            }
            sink.finish()
        }
    }

    func setServices(_ services: [PeripheralBackendService]) async throws {
        await stack.setServices(services.map(\.definition))
    }

    func serve(placed services: [GATTServicePlacement]) async throws {
        let database: GATTDatabase
        do { database = try GATTDatabase(placing: services) } catch {
            throw BluetideError.invalidArgument("GATT layout: \(error)")
        }
        await stack.setDatabase(database)
    }

    func startAdvertising(_ advertising: AdvertisingData, scanResponse: AdvertisingData?, intervalMilliseconds: Double) async throws {
        try await stack.startAdvertising(advertising, scanResponse: scanResponse, intervalMilliseconds: intervalMilliseconds)
    }

    func stopAdvertising() async throws { try await stack.stopAdvertising() }
    var advertisingStopsOnConnection: Bool { true }
    func updateValue(_ bytes: [UInt8], of value: ServedValue) async { await stack.updateValue(bytes, at: value.valueHandle) }
    func notifyEveryCentral(_ bytes: [UInt8], of value: ServedValue) async {
        await stack.notifyEveryConnection(bytes, at: value.valueHandle)
    }

    func central(on connection: UInt16) async -> ConnectedCentral? {
        await stack.openConnections.first { $0.handle == connection }.map { ConnectedCentral(HostCentralPeer(connection: $0, stack: stack)) }
    }

    func close() async { pump.cancel() }

    deinit { pump.cancel() }
}
