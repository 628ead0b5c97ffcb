import BluetideBase
import BluetideHCI
import BluetideSupport

/// The whole Bluetooth LE host as one value: HCI command queue, ACL flow control and
/// reassembly, L2CAP, the ATT bearers, the local GATT server, the GATT client (its procedures
/// — discovery, long reads and writes, subscriptions — run here one at a time per link, in
/// order), GAP (links, connect and its cancel race, scan reference counting, advertising) and
/// per-link security.
///
/// Sans-I/O: inputs and the time go in through ``handle(_:now:into:)``, packets for the
/// controller and events for the driver come out. Nothing inside reads a clock, starts a task,
/// takes a lock or does I/O, so the same inputs at the same times give the same outputs — which
/// is what the golden tests check byte for byte. A driver (``HostStack``) owns one core, feeds
/// it the transport's packet batches and the application's requests, writes the packets, and
/// calls it again with ``HostInput/tick`` at ``nextDeadline``.
///
/// Time is a `Duration` since any fixed origin the driver picks (its start).
public struct HostCore: Sendable {
    /// What the host was set up with.
    public let configuration: HostConfiguration

    var commands: HCICommandQueue
    /// Why each command in flight was sent.
    var purposes: [HCICommandTicket: CommandPurpose] = [:]
    /// The commands of a multi-command request still to finish, in order.
    var procedures: [HostRequestID: [HCICommandTicket]] = [:]
    var flow: ACLFlowControl?
    var flowWaiters: [UInt16: [FlowWaiter]] = [:]
    var reassembler = ACLReassembler()
    var server: GATTServer
    var links: [UInt16: HostLink] = [:]
    var connectAttempt: ConnectAttempt = .idle
    /// Connects waiting for a cancelled attempt to settle, in order.
    var queuedConnects: [ConnectRequest] = []
    var scanners: Set<Int> = []
    /// The GATT client procedures running and waiting on each link.
    var gattClient = GATTClientProcedures()
    /// ATT PDUs were handed out since the driver last said it wrote its outputs.
    var attAwaitsSending = false
    var scanning = false
    /// Per-link security: where SMP, Encryption Change, Key Refresh and LTK Requests go.
    public internal(set) var security: HostSecurity
    /// Set once stopped: every later request fails with it.
    public private(set) var stopped: HostError?

    /// Fragments queued on a handle beyond which ``HostInput/waitForBuffers(_:handle:)`` waits.
    public static let backlogLimit = 8
    /// Seconds a timed-out connect's cancel waits for the Connection Complete that ends it.
    static let cancelSettleTime = 2.0

    /// A core with nothing sent yet; ACL data flows after ``HostInput/configureBuffers(_:)``.
    public init(configuration: HostConfiguration) {
        self.configuration = configuration
        commands = HCICommandQueue(defaultTimeout: configuration.commandTimeout)
        var server = GATTServer(
            deviceName: configuration.deviceName, appearance: configuration.appearance, services: configuration.services)
        server.localMTU = configuration.localMTU
        self.server = server
        var security = HostSecurity(policy: configuration.security, randomness: configuration.randomness)
        security.localAddress = configuration.randomAddress ?? BluetoothAddress(value: 0, type: .public)
        self.security = security
    }

    // MARK: - The one entry point

    /// Handles one input at time `now` and appends what it causes to `outputs`.
    public mutating func handle(_ input: HostInput, now: Duration, into outputs: inout HostOutputs) {
        let t = now.hostSeconds
        if let stopped {
            if let request = input.request { outputs.events.append(.finished(request, .failure(stopped))) }
            return
        }
        switch input {
        case let .received(packet):
            receive(packet, now: t, into: &outputs)
        case .tick:
            expire(now: t, into: &outputs)
        case let .configureBuffers(size):
            flow = ACLFlowControl(bufferSize: size)
        case let .command(request, opcode, parameters, timeout):
            startProcedure(request, [CommandStep(opcode, parameters, timeout: timeout)], scanner: nil, now: t, into: &outputs)
        case let .attRequest(request, handle, pdu):
            attRequest(request, pdu, on: handle, now: t, into: &outputs)
        case let .gattProcedure(request, handle, procedure):
            submitGATTProcedure(request, procedure, on: handle, now: t, into: &outputs)
        case let .cancelGATTProcedure(request):
            cancelGATTProcedure(request, into: &outputs)
        case let .waitForBuffers(request, handle):
            waitForBuffers(request, on: handle, now: t, into: &outputs)
        case let .connect(request, address, parameters, timeout):
            connect(ConnectRequest(id: request, address: address, parameters: parameters, timeout: timeout), now: t, into: &outputs)
        case let .disconnect(request, handle, reason, timeout):
            disconnect(request, handle: handle, reason: reason, timeout: timeout, now: t, into: &outputs)
        case let .startScan(request, scanner, active):
            startScan(request, scanner: scanner, active: active, now: t, into: &outputs)
        case let .stopScan(scanner):
            stopScan(scanner, now: t, into: &outputs)
        case let .startAdvertising(request, data, scanResponse, units):
            startAdvertising(request, data: data, scanResponse: scanResponse, intervalUnits: units, now: t, into: &outputs)
        case let .stopAdvertising(request):
            startProcedure(request, [CommandStep(LESetAdvertisingEnable(enable: false))], scanner: nil, now: t, into: &outputs)
        case .pair, .answerPairing, .removeBond:
            handleSecurity(input, now: t, into: &outputs)
        case let .stop(error):
            stop(error, into: &outputs)
        }
        if !gattClient.arrived.isEmpty { settleGATTProcedures(now: t, into: &outputs) }
    }

    /// The driver wrote the packets handed out so far (call it once per batch of inputs, after
    /// writing, not between the inputs of a batch): the ATT requests among them are on their
    /// way, so responses read from now on can answer them. A response read in the same batch
    /// as the answer that released a request cannot be that request's answer: it is a second
    /// answer to an earlier one, and ends the bearer as a protocol violation.
    public mutating func outputsSent() {
        guard attAwaitsSending else { return }
        attAwaitsSending = false
        for index in links.values.indices { links.values[index].bearer.outputsSent() }
    }

    /// The earliest time at which a ``HostInput/tick`` has something to do (a command, ATT
    /// transaction, connect, disconnect, buffer wait or security timer running out), if any.
    public var nextDeadline: Duration? {
        guard stopped == nil else { return nil }
        var earliest = commands.nextDeadline
        func consider(_ time: Double?) {
            guard let time else { return }
            if let current = earliest, current <= time { return }
            earliest = time
        }
        for link in links.values {
            consider(link.bearer.nextDeadline)
            for request in link.disconnectRequests { consider(request.deadline) }
        }
        for waiters in flowWaiters.values { for waiter in waiters { consider(waiter.deadline) } }
        switch connectAttempt {
        case let .connecting(_, deadline): consider(deadline)
        case let .cancelling(deadline): consider(deadline)
        case .idle: break
        }
        consider(security.nextDeadline)
        consider(server.nextAuthorizationDeadline)
        return earliest.map(Duration.hostSeconds)
    }

    /// ``nextDeadline``, read where the core lives: `mutating` only so that a driver holding
    /// the core in a class or actor property reads it in place. Reading the property there made
    /// the optimizer copy the whole core (a retain and a release of every field) once per round:
    /// 9 % of a loopback bench's CPU.
    public mutating func nextDeadlineInPlace() -> Duration? { nextDeadline }

    // MARK: - Queries

    /// The links open now, by handle.
    public var openLinks: [HostLinkInfo] { links.values.map(\.info).sorted { $0.handle < $1.handle } }
    /// The link with `handle`, if open.
    public func link(_ handle: UInt16) -> HostLinkInfo? { links[handle & 0x0FFF]?.info }
    /// The effective ATT MTU of a link (23 when it is not open).
    public func attMTU(on handle: UInt16) -> Int { links[handle & 0x0FFF]?.bearer.mtu ?? ATTBearer.defaultMTU }
    /// Bytes of partial L2CAP PDUs held for reassembly, all handles together.
    public var pendingReassemblyBytes: Int { reassembler.pendingBytes }
    /// The local GATT server's attributes.
    public var database: GATTDatabase { server.database }

    // MARK: - Finishing requests

    mutating func finish(_ request: HostRequestID, _ result: Result<HostReply, any Error>, into outputs: inout HostOutputs) {
        // An answer to a GATT procedure's request is the procedure's, at the end of the round.
        if gattClient.isRunning(request) { return gattClient.arrived.append((request, result)) }
        outputs.events.append(.finished(request, result))
    }

    // MARK: - Stop

    private mutating func stop(_ error: HostError, into outputs: inout HostOutputs) {
        stopped = error
        if case let .connecting(request, _) = connectAttempt { finish(request.id, .failure(error), into: &outputs) }
        connectAttempt = .idle
        for queued in queuedConnects { finish(queued.id, .failure(error), into: &outputs) }
        queuedConnects.removeAll()
        for handle in links.keys.sorted() { tearDown(handle, reason: .localHostTerminated, error: error, into: &outputs) }
        for completion in commands.failAll("\(error)") { complete(completion, now: 0, into: &outputs) }
        for waiters in flowWaiters.values {
            for waiter in waiters { finish(waiter.request, .failure(error), into: &outputs) }
        }
        flowWaiters.removeAll()
        for (request, _) in procedures { finish(request, .failure(error), into: &outputs) }
        procedures.removeAll()
        purposes.removeAll()
        scanners.removeAll()
        scanning = false
    }

    // MARK: - Timers

    private mutating func expire(now t: Double, into outputs: inout HostOutputs) {
        apply(commands.expire(now: t), now: t, into: &outputs)
        for handle in links.keys.sorted() {
            guard let events = links[handle]?.bearer.tick(now: t) else { continue }
            handleBearerEvents(events, on: handle, now: t, into: &outputs)
            expireDisconnectRequests(on: handle, now: t, into: &outputs)
        }
        expireFlowWaiters(now: t, into: &outputs)
        expireConnectAttempt(now: t, into: &outputs)
        expireAuthorizations(now: t, into: &outputs)
        var actions = HostSecurity.Actions()
        security.expire(now: t, into: &actions)
        apply(actions, now: t, into: &outputs)
    }
}

extension HostInput {
    /// The request this input carries, if it is one.
    var request: HostRequestID? {
        switch self {
        case let .command(id, _, _, _), let .attRequest(id, _, _), let .gattProcedure(id, _, _), let .waitForBuffers(id, _),
             let .connect(id, _, _, _),
             let .disconnect(id, _, _, _), let .startScan(id, _, _), let .startAdvertising(id, _, _, _),
             let .stopAdvertising(id), let .pair(id, _, _):
            id
        case .received, .tick, .configureBuffers, .stopScan, .stop, .answerPairing, .removeBond, .cancelGATTProcedure: nil
        }
    }
}

extension Duration {
    /// Seconds as a `Double` (the unit the protocol state machines count in).
    var hostSeconds: Double { inSeconds }

    /// A duration of `seconds` (a `Double`).
    static func hostSeconds(_ seconds: Double) -> Duration {
        .nanoseconds(Int64((seconds * 1e9).rounded(.up)))
    }
}
