import BluetideBase
import BluetideHCI
import BluetideHost
import BluetideSupport

/// A connection to one device, made by ``Central/connect(to:timeout:policy:)-(BluetoothAddress,_,_)``.
///
/// A `Sendable` handle; its state lives in an actor (``ConnectionDriver``), its decisions in a
/// value (``ConnectionMachine``). Operations (reads, writes, subscriptions,
/// MTU and RSSI requests) run one at a time in the order they were called, each limited to
/// ``ConnectionPolicy/operationTimeout``. The services are discovered once per link and cached.
/// With ``ConnectionPolicy/reconnect`` enabled a lost link is re-made: services are rediscovered,
/// subscriptions restored (their CCCDs written again) and existing notification sequences go on
/// delivering, each value once; an operation called while reconnecting waits for the link
/// (within its time limit), and one interrupted by the link loss runs again on the new link.
///
/// Call ``disconnect()`` when done: dropping the handle does not close the link (the central
/// still lists it in ``Central/connections()``, and it counts towards the maximum).
public final class Connection: Sendable, Hashable, CustomStringConvertible {
    /// The device's address.
    public let address: BluetoothAddress
    /// The policy the connection was made with.
    public let policy: ConnectionPolicy
    /// The clock the connection's waits run on: its central's (``Central/clock``, set by
    /// ``Bluetooth/Configuration/clock``). Apps built on a connection time their own limits,
    /// retries and timestamps on it, so a test's virtual clock drives them too.
    public let clock: BluetideClock
    let driver: ConnectionDriver
    let hub: EventHub

    init(central: Central, address: BluetoothAddress, policy: ConnectionPolicy, slot: Int) {
        self.address = address
        self.policy = policy
        self.clock = central.clock
        let hub = EventHub()
        self.hub = hub
        self.driver = ConnectionDriver(central: central, address: address, policy: policy, slot: slot, hub: hub)
    }

    /// The same connection (identity: two connections to one device are different).
    public static func == (lhs: Connection, rhs: Connection) -> Bool { lhs === rhs }
    /// Hashes the identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    /// "connection to ADDRESS".
    public var description: String { "connection to \(address)" }

    /// What happens to the connection: a new sequence per use, starting with the current status
    /// (``ConnectionEvent/connected`` while the link is up), ending when the connection is
    /// closed for good.
    public var events: AsyncStream<ConnectionEvent> { hub.stream() }

    /// Whether the link is up now (false while reconnecting and once closed).
    public var isConnected: Bool { get async { await driver.isConnected } }

    // MARK: Services

    /// The services discovered on the current link, with their characteristics and descriptors.
    public func services() async throws -> [GATTRemoteService] { try await driver.discoveredServices() }

    // MARK: Reads

    /// Reads a characteristic's value (long values completely, with Read Blob).
    public func read(_ characteristic: BluetoothUUID) async throws -> [UInt8] {
        try await driver.read(characteristic)
    }

    /// Reads a characteristic's value and decodes it as `type`; throws
    /// ``BluetideError/decodingFailed(_:type:_:)`` naming the field when it does not decode.
    public func read<T: GATTDecodable>(_ characteristic: BluetoothUUID, as type: T.Type) async throws -> T {
        let bytes = try await driver.read(characteristic)
        return try Self.decode(bytes, as: type, from: characteristic)
    }

    /// Reads a descriptor of a characteristic (e.g. 0x2902 Client Characteristic Configuration,
    /// 0x2901 User Description), found by type so it survives a reconnect.
    public func readDescriptor(_ descriptor: BluetoothUUID, of characteristic: BluetoothUUID) async throws -> [UInt8] {
        try await driver.readDescriptor(descriptor, of: characteristic)
    }

    // MARK: Writes

    /// Writes `value`'s encoding to a characteristic.
    ///
    /// With response (the default) the device acknowledges; values longer than MTU − 3 octets
    /// are written with Prepare/Execute Write automatically. Without response the value must fit
    /// MTU − 3 octets and 512 (else ``BluetideError/valueTooLong(_:length:maximum:)``); the call waits for
    /// controller buffers when they are full, so no value is ever dropped. For a long byte
    /// stream without response use ``send(_:to:)``.
    public func write(_ value: some GATTEncodable, to characteristic: BluetoothUUID, withResponse: Bool = true) async throws {
        try await driver.write(value.bytes, to: characteristic, withResponse: withResponse)
    }

    /// Sends `bytes` without response in parts of at most MTU − 3 (and at most 512) octets, in order, paced by the
    /// controller's buffers (nothing is dropped). Suits serial-over-BLE characteristics.
    public func send(_ bytes: [UInt8], to characteristic: BluetoothUUID) async throws {
        try await driver.send(bytes, to: characteristic)
    }

    // MARK: Notifications

    /// The values a characteristic notifies (or indicates, when it cannot notify), raw.
    ///
    /// Subscribes (writes the CCCD) before returning. The sequence ends without error after
    /// ``disconnect()``, and with an error (``BluetideError/disconnected(reason:)`` or
    /// ``BluetideError/reconnectFailed(attempts:lastError:)``) when the link is lost and not
    /// restored. Across a reconnect it goes on: values sent while the link was down are missed,
    /// none is repeated. Several sequences of one characteristic share one subscription and each
    /// gets every value; the CCCD is cleared when the last one ends.
    ///
    /// `buffering` bounds what the sequence holds for a reader that falls behind (the newest
    /// 4096 values unless told otherwise); what does not fit is dropped and counted in
    /// ``droppedNotifications``, so memory stays bounded when a consumer stops reading.
    public func notifications(
        of characteristic: BluetoothUUID, buffering: NotificationBuffering = .standard
    ) async throws -> AsyncThrowingStream<[UInt8], any Error> {
        try await driver.subscribe(characteristic, buffering: buffering)
    }

    /// The values a characteristic notifies, decoded as `type`. A value that does not decode
    /// ends the sequence with ``BluetideError/decodingFailed(_:type:_:)`` (use the raw
    /// ``notifications(of:buffering:)`` to skip bad values instead). Otherwise, buffering
    /// included, as ``notifications(of:buffering:)``.
    public func notifications<T: GATTDecodable>(
        of characteristic: BluetoothUUID, as type: T.Type, buffering: NotificationBuffering = .standard
    ) async throws -> AsyncThrowingStream<T, any Error> {
        let raw = try await driver.subscribe(characteristic, buffering: buffering)
        let (stream, continuation) = AsyncThrowingStream<T, any Error>.makeStream(bufferingPolicy: buffering.policy(of: T.self))
        let drops = driver.drops
        let task = Task {
            do {
                for try await bytes in raw {
                    if case .dropped = continuation.yield(try Self.decode(bytes, as: type, from: characteristic)) { drops.add(1) }
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Notified values given up since the connection was made because a sequence's buffer was
    /// full (its reader fell behind; see ``NotificationBuffering``), over all its sequences.
    public var droppedNotifications: Int { driver.drops.total }

    // MARK: Link

    /// The effective ATT MTU of the current link, octets (23 until exchanged).
    public var mtu: Int { get async { await driver.mtu } }

    /// Exchanges the ATT MTU, asking for `mtu` octets (23…517); returns the effective MTU (the
    /// smaller of ours and the device's). ATT allows one exchange per link, so when
    /// ``ConnectionPolicy/preferredMTU`` already did it this throws
    /// ``BluetideError/mtuAlreadyExchanged(current:)``. The value is asked for again after a
    /// reconnect.
    @discardableResult
    public func requestMTU(_ mtu: Int) async throws -> Int { try await driver.requestMTU(mtu) }

    /// The link's signal strength as the controller measures it, dBm.
    public func rssi() async throws -> Int { try await driver.rssi() }

    /// Connection interval (ms), peripheral latency (events) and supervision timeout (ms) of the
    /// current link; nil while reconnecting or closed.
    public func parameters() async -> ConnectionParameters? { await driver.parameters() }

    /// Asks the controller for new connection parameters: interval between `minimumInterval` and
    /// `maximumInterval` (7.5 ms…4 s), `latency` connection events (0…499) and a supervision
    /// timeout (100 ms…32 s). The change is applied when the controller reports it; read it with
    /// ``parameters()``.
    public func requestParameters(
        minimumInterval: Duration, maximumInterval: Duration, latency: Int = 0, supervisionTimeout: Duration = .seconds(4)
    ) async throws {
        let toUnits = { (d: Duration, unit: Double) in UInt16(clamping: Int((d.seconds * 1000 / unit).rounded())) }
        let parameters = LEConnectionParameters(
            intervalMin: toUnits(minimumInterval, 1.25), intervalMax: toUnits(maximumInterval, 1.25),
            maxLatency: UInt16(clamping: latency), supervisionTimeout: toUnits(supervisionTimeout, 10))
        guard parameters.intervalMin >= 6, parameters.intervalMax <= 3200, parameters.intervalMin <= parameters.intervalMax,
              parameters.maxLatency <= 499, parameters.supervisionTimeout >= 10, parameters.supervisionTimeout <= 3200
        else {
            throw BluetideError.invalidArgument(
                "connection parameters out of range: interval 7.5 ms…4 s (min ≤ max), latency 0…499, supervision timeout 100 ms…32 s")
        }
        try await driver.requestParameters(parameters)
    }

    // MARK: Security

    /// Secures the link and returns its security level: encrypts with the stored bond, or pairs
    /// with the host's ``PairingPolicy`` (prompts arrive on ``Bluetooth/pairingPrompts``). With
    /// `force`, pairs again even when bonded (for stronger keys). Pairing is bounded by the
    /// 30 s SMP timeout. Throws ``BluetideError/pairingFailed(_:)`` (wrong passkey, timeout,
    /// refused) or ``BluetideError/disconnected(reason:)``.
    @discardableResult
    public func pair(force: Bool = false) async throws -> SecurityLevel {
        do { return try await driver.pair(force: force) } catch { throw BluetideError.from(error, operation: "pairing") }
    }

    /// The link's security level now (``SecurityLevel/none`` while not encrypted or not up).
    public var securityLevel: SecurityLevel { get async { await driver.securityLevel } }

    /// Disconnects (no reconnection follows) and waits until the link is closed. Notification
    /// and event sequences end without error. Idempotent.
    public func disconnect() async { await driver.disconnect() }

    static func decode<T: GATTDecodable>(_ bytes: [UInt8], as type: T.Type, from characteristic: BluetoothUUID) throws -> T {
        do {
            return try T(bytes: bytes)
        } catch {
            throw BluetideError.decodingFailed(characteristic, type: String(describing: type), error)
        }
    }
}
