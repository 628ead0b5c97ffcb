import BluetideBase
import BluetideHost
import BluetideSupport
import Foundation
import Synchronization

/// The central role of a ``Bluetooth`` handle: scans for advertising devices and connects to
/// them. A `Sendable` handle; several tasks may scan and connect at once (connection attempts
/// are queued, since a controller makes one at a time).
///
/// ```swift
/// let strap = try await bluetooth.central.discover(filter: .init(serviceUUIDs: [BluetoothUUID(0x180D)])).first
/// let connection = try await bluetooth.central.connect(to: strap!, policy: .resilient)
/// for try await bpm in try await connection.notifications(of: .heartRateMeasurement, as: HeartRateMeasurement.self) {
///     print(bpm)   // goes on across link losses; ends after connection.disconnect()
/// }
/// ```
public final class Central: Sendable {
    /// The host stack the central drives (the package's layers only); idle when the central
    /// runs on another backend.
    package let stack: HostStack
    /// The stack the central runs over: the own host, or a registered backend (BlueZ…).
    let backend: any CentralBackend
    /// The backend when it is not the own host.
    let external: (any CentralBackend)?
    let registry: CentralRegistry
    /// Default time limit of a connect attempt when ``connect(to:timeout:policy:)`` gets none.
    public let defaultConnectTimeout: Duration
    /// Whether connections pair by themselves when a device refuses an operation for want of
    /// security, then retry it once (``PairingPolicy/pairsWhenRequired``).
    public let pairsWhenRequired: Bool
    /// Whether this host can take part in an authenticated (MITM) pairing: false when its IO
    /// capability is NoInputNoOutput, so pairing again cannot cure Insufficient Authentication
    /// (0x05) on a link that is already encrypted.
    let canAuthenticate: Bool
    /// The clock every wait of the central runs on (``Bluetooth/Configuration/clock``): connect
    /// time limits and retry delays, scan lengths, and each connection's set-up and operation
    /// time limits and reconnect back-off.
    public let clock: BluetideClock
    /// Where the reconnect back-off's jitter comes from when a policy gives no
    /// ``ConnectionPolicy/Reconnect/jitterSeed`` (``Bluetooth/Configuration/randomness``): each
    /// lost link draws the seed of its back-off here, so a seeded host backs off the same way
    /// every run.
    private let jitterSource: Mutex<HostRandomness>

    /// A central over a started `stack`, allowing at most `maximumConnections` connections at a
    /// time, waiting on `clock`, drawing back-off jitter from `randomness`.
    package init(
        stack: HostStack, maximumConnections: Int = 8, defaultConnectTimeout: Duration = .seconds(10),
        pairsWhenRequired: Bool = false, canAuthenticate: Bool = true, backend: (any CentralBackend)? = nil,
        clock: BluetideClock = .continuous, randomness: HostRandomness = .system
    ) {
        self.clock = clock
        jitterSource = Mutex(randomness)
        self.stack = stack
        self.backend = backend ?? HostCentralBackend(stack: stack)
        self.external = backend
        self.pairsWhenRequired = pairsWhenRequired
        self.canAuthenticate = canAuthenticate
        self.registry = CentralRegistry(maximumConnections: maximumConnections)
        self.defaultConnectTimeout = defaultConnectTimeout
    }

    /// The seed of one lost link's back-off jitter, from the host's random source.
    func nextJitterSeed() -> UInt64 { jitterSource.withLock { $0.next() } }

    // MARK: Scanning

    /// Scans (actively: scan responses are requested and merged) and reports the advertisements
    /// that pass `filter`, one ``Advertisement`` per device (see ``ScanFilter/allowDuplicates``).
    /// The sequence ends after `timeout` (nil: when the consumer stops iterating or the stack
    /// closes); the controller's scan stops when the last scan ends.
    public func scan(filter: ScanFilter = ScanFilter(), timeout: Duration? = nil) async throws -> AsyncStream<Advertisement> {
        let reports: AsyncStream<Advertisement>
        do {
            reports = try await backend.scan(filter: filter)
        } catch {
            throw BluetideError.from(error, operation: "scan")
        }
        let (stream, continuation) = AsyncStream<Advertisement>.makeStream(bufferingPolicy: .bufferingNewest(4096))
        let pump = Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    var merger = AdvertisementMerger()
                    for await advertisement in reports {
                        guard filter.matches(advertisement),
                              merger.shouldReport(advertisement, allowDuplicates: filter.allowDuplicates) else { continue }
                        continuation.yield(advertisement)
                    }
                }
                if let timeout {
                    let clock = self.clock
                    group.addTask { try? await clock.sleep(for: timeout) }
                }
                _ = await group.next()
                group.cancelAll()
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in pump.cancel() }
        return stream
    }

    /// Scans for `timeout` and returns each device that passed `filter` once (its latest
    /// advertisement), strongest RSSI first (ties: earliest seen first).
    public func discover(filter: ScanFilter = ScanFilter(), timeout: Duration = .seconds(3)) async throws -> [Advertisement] {
        var all = filter
        all.allowDuplicates = true
        var latest: [BluetoothAddress: Advertisement] = [:]
        for await advertisement in try await scan(filter: all, timeout: timeout) {
            latest[advertisement.address] = advertisement
        }
        return RSSIRanking.ranked(Array(latest.values))
    }

    // MARK: Connecting

    /// Connects to the device that sent `advertisement`. See ``connect(to:timeout:policy:)-(BluetoothAddress,_,_)``.
    public func connect(
        to advertisement: Advertisement, timeout: Duration? = nil, policy: ConnectionPolicy = .default
    ) async throws -> Connection {
        try await connect(to: advertisement.address, timeout: timeout, policy: policy)
    }

    /// Connects to the device at `address` (its type matters: /P public, /R random), trying
    /// `policy.retry.attempts` times, each limited to `timeout` (default
    /// ``defaultConnectTimeout``), then asks for the policy's MTU and discovers the services
    /// (within ``ConnectionPolicy/setupTimeout``).
    ///
    /// With `total`, the whole call — every attempt, the waits between them and the set-up —
    /// ends within it: each attempt and the set-up get at most what is left, and a device that
    /// does not answer in time fails with `total` as the time limit. A command that promises
    /// its user a time limit passes it here.
    ///
    /// Throws ``BluetideError/tooManyConnections(limit:)`` when ``maximumConnections`` are
    /// open, ``BluetideError/connectTimedOut(_:seconds:)`` when the device does not answer.
    public func connect(
        to address: BluetoothAddress, timeout: Duration? = nil, policy: ConnectionPolicy = .default, within total: Duration? = nil
    ) async throws -> Connection {
        let slot = try await registry.reserve()
        do {
            // The attempts, the waits between them, the limits and the set-up: the connection's
            // machine decides, its driver does.
            let connection = Connection(central: self, address: address, policy: policy, slot: slot)
            try await connection.driver.connect(attemptTimeout: timeout ?? defaultConnectTimeout, within: total)
            await registry.register(slot, connection)
            return connection
        } catch {
            await registry.release(slot)
            throw error
        }
    }

    /// Connects to a device remembered from an earlier run (no scan needed). See
    /// ``connect(to:timeout:policy:)-(BluetoothAddress,_,_)``.
    public func connect(
        to remembered: RememberedDevice, timeout: Duration? = nil, policy: ConnectionPolicy = .default
    ) async throws -> Connection {
        try await connect(to: remembered.address, timeout: timeout, policy: policy)
    }

    /// Makes one link, queued behind other attempts (the controller makes one at a time).
    func establishLink(to address: BluetoothAddress, timeout: Duration) async throws -> any CentralLink {
        await registry.takeConnectTurn()
        do {
            let link = try await backend.connect(to: address, timeout: timeout)
            await registry.passConnectTurn()
            return link
        } catch {
            await registry.passConnectTurn()
            throw BluetideError.from(error)
        }
    }

    // MARK: Bookkeeping

    /// The most connections this central keeps at a time (reconnecting ones count).
    public var maximumConnections: Int { get async { await registry.maximumConnections } }

    /// Changes ``maximumConnections`` (at least 1); open connections are kept.
    public func setMaximumConnections(_ limit: Int) async { await registry.setMaximum(limit) }

    /// Connections that are open or reconnecting.
    public func connections() async -> [Connection] { await registry.all }

    /// Disconnects every connection (user-initiated: none reconnects).
    public func disconnectAll() async {
        for connection in await registry.all { await connection.disconnect() }
    }
}

/// The central's connection slots and the queue of connection attempts.
actor CentralRegistry {
    private(set) var maximumConnections: Int
    private var reserved: Set<Int> = []
    private var connections: [Int: Connection] = [:]
    private var nextSlot = 0
    /// Connection attempts, one at a time in arrival order (kept here, not on a lock actor).
    private var connectTurns = TurnQueue()

    init(maximumConnections: Int) { self.maximumConnections = max(maximumConnections, 1) }

    func setMaximum(_ limit: Int) { maximumConnections = max(limit, 1) }

    /// Waits for the controller's one connection attempt at a time.
    func takeConnectTurn() async {
        if !connectTurns.take() { await withCheckedContinuation { connectTurns.wait($0) } }
    }

    /// Lets the next connection attempt go.
    func passConnectTurn() { connectTurns.pass() }

    /// Takes a slot or throws ``BluetideError/tooManyConnections(limit:)``.
    func reserve() throws -> Int {
        guard reserved.count < maximumConnections else { throw BluetideError.tooManyConnections(limit: maximumConnections) }
        let slot = nextSlot
        nextSlot += 1
        reserved.insert(slot)
        return slot
    }

    func register(_ slot: Int, _ connection: Connection) {
        guard reserved.contains(slot) else { return }
        connections[slot] = connection
    }

    func release(_ slot: Int) {
        reserved.remove(slot)
        connections[slot] = nil
    }

    var all: [Connection] { connections.keys.sorted().compactMap { connections[$0] } }
}
