import BluetideBase
import BluetideHCI
import BluetideTransport
import Synchronization

/// One Bluetooth LE host: HCI, L2CAP, ATT and GATT (client and server) over one transport.
///
/// A thin driver over ``HostCore``, which holds every piece of protocol state and does no I/O.
/// The actor owns the core and does three things: it feeds the core the transport's packet
/// batches and the application's requests, writes each round's packets with one
/// `send(batch:)`, and sleeps on its clock until the core's ``HostCore/nextDeadline``. Waiters
/// (commands, ATT responses, connects, disconnects) resume from the core's events;
/// notifications reach subscribers through a stream made once per subscription, with no task
/// or hop per value.
public actor HostStack {
    /// How the stack sets itself up.
    public typealias Configuration = HostConfiguration

    /// Something that happened to the local GATT server.
    public struct ServerEvent: Sendable, Equatable {
        /// The connection (HCI handle) of the client.
        public var connection: UInt16
        /// What it did.
        public var event: GATTServerEvent
    }

    /// Facts about the controller read at start-up.
    public struct ControllerInfo: Sendable, Equatable {
        /// Our own address (the random one when configured, else the public one).
        public var address: BluetoothAddress
        /// The controller's public address.
        public var publicAddress: BluetoothAddress
        /// ACL data bytes per packet and packet count the controller buffers.
        public var aclBufferLength: Int
        public var aclBufferCount: Int
        /// HCI version (9 = Core 5.0, 0x0C = 5.3, …).
        public var hciVersion: UInt8
    }

    private enum State { case idle, running, stopped(HostError) }

    let transport: any HCITransport
    public let configuration: Configuration
    private var state: State = .idle

    private var core: HostCore
    /// The outputs of the current round, reused from round to round.
    private var outputs = HostOutputs()
    private var waiters: [HostRequestID: CheckedContinuation<HostReply, any Error>] = [:]
    /// GATT procedures whose callers gave up, noted by their cancellation handlers.
    private nonisolated let gattCancellations = Mutex<[HostRequestID]>([])
    private var nextRequestID: UInt64 = 1

    private var connections: [UInt16: HostConnection] = [:]
    /// The connection a finished connect request opened, taken when its reply is carried out:
    /// by the time the connecting task runs, that link may have closed and a new link may have
    /// the same handle.
    private var openedConnections: [HostRequestID: HostConnection] = [:]
    private var disconnectWaiters: [UInt16: [CheckedContinuation<HCIStatus, Never>]] = [:]
    /// Subscribers by link, then value handle, then subscription.
    private var subscriptions: [UInt16: [UInt16: [Int: AsyncStream<[UInt8]>.Continuation]]] = [:]
    private var nextSubscriptionID = 0
    /// Values a subscription's full buffer gave up, by link (``HostConnection/droppedValues``);
    /// kept after the link closes, until its handle is reused.
    private var droppedValues: [UInt16: Int] = [:]
    /// Values each subscription's stream holds for a reader that fell behind: the newest are
    /// kept, older ones dropped and counted, so a consumer that stops reading cannot grow the
    /// host's memory without bound (4096 values of up to 512 octets: at most about 2 MB).
    public static let subscriptionBuffer = 4096
    private var scanners: [Int: AsyncStream<AdvertisementReport>.Continuation] = [:]
    private var nextScannerID = 0

    private var incomingContinuation: AsyncStream<HostConnection>.Continuation
    /// Connections peers made to us (peripheral role), in order.
    public nonisolated let incomingConnections: AsyncStream<HostConnection>
    private var serverEventContinuation: AsyncStream<ServerEvent>.Continuation
    /// Writes, subscription changes and authorisation requests (answer with ``authorize(_:)``)
    /// of remote clients of the local GATT server.
    public nonisolated let serverEvents: AsyncStream<ServerEvent>
    private var securityContinuation: AsyncStream<HostSecurityEvent>.Continuation
    /// Pairing prompts (answer with ``answerPairing(_:on:)``), pairing outcomes, security level
    /// changes and changed bonds, in order.
    public nonisolated let securityEvents: AsyncStream<HostSecurityEvent>
    /// Whether each round's packets go straight to the transport from this actor (transports
    /// whose sends never wait: the in-process link, TCP) rather than through the writer task.
    private let sendsDirectly: Bool
    /// Each round's packets, in order, for the one writer task (transports whose sends wait).
    private let outbox: AsyncStream<[HCIPacket]>.Continuation
    private let outboxStream: AsyncStream<[HCIPacket]>
    private var tasks: [Task<Void, Never>] = []
    /// Controller facts, available after ``start()``.
    public private(set) var controller: ControllerInfo?

    // Time.
    private let readClock: @Sendable () -> Duration
    private let sleepUntil: @Sendable (Duration) async throws -> Void
    private let maximumStep: Duration?
    private var stackTime: Duration = .zero
    private var lastWallTime: Duration = .zero
    private var timer: Task<Void, Never>?
    private var timerDeadline: Duration?
    /// The clock reading the timer sleeps until: that sleep was the stack's own choice, so the
    /// reading it wakes to counts in full (only the overshoot is clamped).
    private var timerWake: Duration?

    /// A stack on `transport` with the monotonic clock; nothing is sent until ``start()``.
    ///
    /// Stack time follows the clock but advances at most 0.5 s per reading beyond the sleeps
    /// the stack itself chose (its timer), so when the whole process is starved (a loaded
    /// machine, a debugger) answers already queued are handled before any timeout can fire:
    /// timeouts measure time the stack could have run, and a timeout of T seconds fires after T.
    public init(transport: any HCITransport, configuration: Configuration = Configuration()) {
        self.init(transport: transport, configuration: configuration, clock: ContinuousClock(), maximumStep: .milliseconds(500))
    }

    /// A stack on `transport` whose timeouts run on `clock` (tests pass a `ManualClock`: every
    /// timeout then fires exactly when the test advances the clock past it).
    public init<C: Clock>(transport: any HCITransport, configuration: Configuration = Configuration(), clock: C)
    where C.Duration == Duration {
        self.init(transport: transport, configuration: configuration, clock: clock, maximumStep: nil)
    }

    private init<C: Clock>(transport: any HCITransport, configuration: Configuration, clock: C, maximumStep: Duration?)
    where C.Duration == Duration {
        self.transport = transport
        self.configuration = configuration
        self.core = HostCore(configuration: configuration)
        let origin = clock.now
        self.readClock = { origin.duration(to: clock.now) }
        self.sleepUntil = { try await clock.sleep(until: origin.advanced(by: $0), tolerance: nil) }
        self.maximumStep = maximumStep
        self.sendsDirectly = transport.sendsImmediately
        (incomingConnections, incomingContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        (serverEvents, serverEventContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        (securityEvents, securityContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(256))
        (outboxStream, outbox) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    /// Stack time: the clock's reading, each step clamped to ``maximumStep`` when set — beyond
    /// the timer's own sleep when the timer woke it (`woken`: the reading it slept until).
    private func now(woken: Duration? = nil) -> Duration {
        let wall = readClock()
        var step = wall - lastWallTime
        if step < .zero { step = .zero }
        if let maximumStep {
            let chosen = woken.map { max($0 - lastWallTime, .zero) } ?? .zero
            if step > chosen + maximumStep { step = chosen + maximumStep }
        }
        stackTime += step
        lastWallTime = wall
        return stackTime
    }

    // MARK: - Rounds

    /// Feeds one input to the core and carries out what it produced.
    private func feed(_ input: HostInput) {
        core.handle(input, now: now(), into: &outputs)
        carryOut()
    }

    /// Writes the round's packets (one batch), resumes waiters and feeds streams, then arms
    /// the timer for the core's next deadline.
    private func carryOut() {
        // Whatever the core handed out is written below (or queued for the writer, in order,
        // ahead of anything a later answer could cause).
        core.outputsSent()
        if !outputs.packets.isEmpty {
            PacketTrace.log(outputs.packets, outbound: true)
            if sendsDirectly {
                do {
                    try transport.sendImmediately(batch: outputs.packets)
                } catch {
                    // As the writer task does; stopping here, mid-round, would feed the core
                    // from inside its own round.
                    let reason = "\(error)"
                    Task { self.stop(.transportFailed(reason)) }
                }
            } else {
                outbox.yield(outputs.packets)
            }
            // Kept for the next round: a transport that handled the batch where it was handed
            // in (the virtual link, a NIO channel's writer) holds no reference, so the buffer is
            // reused instead of allocated again; one that keeps it (the writer task's queue)
            // makes this a fresh buffer, as before.
            outputs.packets.removeAll(keepingCapacity: true)
        }
        for event in outputs.events { carryOut(event) }
        outputs.events.removeAll(keepingCapacity: true)
        armTimer()
    }

    private func carryOut(_ event: HostEvent) {
        switch event {
        case let .finished(request, result):
            guard let waiter = waiters.removeValue(forKey: request) else { return }
            // The core reports a link open before the connect request it finishes.
            if case let .success(.link(info)) = result { openedConnections[request] = connections[info.handle] }
            waiter.resume(with: result)
        case let .linkOpened(info):
            let connection = HostConnection(stack: self, info: info)
            connections[info.handle] = connection
            droppedValues[info.handle] = nil
            if info.role == .peripheral { incomingContinuation.yield(connection) }
        case let .linkClosed(handle, reason, _):
            connections.removeValue(forKey: handle)?.closed(reason: reason)
            for byValue in (subscriptions.removeValue(forKey: handle) ?? [:]).values {
                for subscriber in byValue.values { subscriber.finish() }
            }
            for waiter in disconnectWaiters.removeValue(forKey: handle) ?? [] { waiter.resume(returning: reason) }
        case let .notification(handle, valueHandle, value), let .indication(handle, valueHandle, value):
            guard let subscribers = subscriptions[handle]?[valueHandle], !subscribers.isEmpty else {
                HostLog.gatt.debug("dropped a value nobody subscribed to", metadata: ["attribute": "\(valueHandle)"])
                return
            }
            for subscriber in subscribers.values {
                if case .dropped = subscriber.yield(value) { droppedValues[handle, default: 0] += 1 }
            }
        case let .server(handle, serverEvent):
            serverEventContinuation.yield(ServerEvent(connection: handle, event: serverEvent))
        case let .advertisement(report):
            for scanner in scanners.values { scanner.yield(report) }
        case .encryptionChanged:
            break
        case let .security(securityEvent):
            if case let .bondsChanged(store) = securityEvent { saveBonds(store) }
            securityContinuation.yield(securityEvent)
        }
    }

    /// Arms (or moves earlier) the one timer that wakes the core at its next deadline. A
    /// deadline later than the armed one needs nothing: the timer fires, finds nothing due,
    /// and is armed again.
    private func armTimer() {
        guard case .running = state, let deadline = core.nextDeadlineInPlace() else { return }
        if let armed = timerDeadline, armed <= deadline { return }
        timer?.cancel()
        timerDeadline = deadline
        let wake = lastWallTime + (deadline - stackTime)
        timerWake = wake
        let sleep = sleepUntil
        timer = Task { [weak self] in
            do { try await sleep(wake) } catch { return }
            await self?.timerFired()
        }
    }

    private func timerFired() {
        timer = nil
        timerDeadline = nil
        let wake = timerWake
        timerWake = nil
        guard case .running = state else { return }
        // The sleep to `wake` counts in full: a 5 s timeout fires after 5 s, not after the
        // 27.5 s that ten 0.5 s readings spread over shrinking sleeps took.
        core.handle(.tick, now: now(woken: wake), into: &outputs)
        carryOut()
    }

    /// Sends a request to the core and waits for its reply.
    private func request(_ make: (HostRequestID) -> HostInput) async throws -> HostReply {
        if let error = runningError { throw error }
        let id = makeRequestID()
        return try await withCheckedThrowingContinuation { continuation in
            waiters[id] = continuation
            feed(make(id))
        }
    }

    private func makeRequestID() -> HostRequestID {
        defer { nextRequestID &+= 1 }
        return HostRequestID(rawValue: nextRequestID)
    }

    // MARK: - Life cycle

    /// Starts the reader and writer tasks and initialises the controller: Reset, version,
    /// addresses, buffer sizes, event masks, our random address; advertising and scanning off.
    public func start() async throws {
        guard case .idle = state else { throw HostError.notRunning }
        if let path = configuration.bondFile { core.security.loadBonds(try BondFile(path: path).load()) }
        state = .running
        _ = now()
        let batches = transport.packetBatches
        tasks.append(Task { [weak self] in
            do {
                for try await batch in batches {
                    guard let self else { return }
                    await self.receive(batch)
                }
                await self?.stop(.transportFailed("the controller closed the transport"))
            } catch {
                await self?.stop(.transportFailed("\(error)"))
            }
        })
        let outgoing = outboxStream
        let transport = self.transport
        if !sendsDirectly {
            tasks.append(Task { [weak self] in
                for await batch in outgoing {
                    do { try await transport.send(batch: batch) } catch {
                        await self?.stop(.transportFailed("\(error)"))
                        return
                    }
                }
            })
        }
        try await initialise()
    }

    /// One batch from the controller: every packet at the same time, one round of outputs.
    private func receive(_ batch: [HCIPacket]) {
        guard case .running = state else { return }
        let t = now()
        takeGATTCancellations(now: t)
        PacketTrace.log(batch, outbound: false)
        for packet in batch { core.handle(.received(packet), now: t, into: &outputs) }
        carryOut()
    }

    private func initialise() async throws {
        _ = try await run(HCIReset())
        let version = try await run(HCIReadLocalVersionInformation())
        let publicAddress = try await run(HCIReadBDADDR()).address
        if configuration.randomAddress == nil { core.security.localAddress = publicAddress }
        _ = try await run(HCISetEventMask(mask: 0x3FFF_FFFF_FFFF_FFFF))
        // LE events: connection complete, advertising report, connection update, remote
        // features, LTK request, data length change, PHY update, extended advertising report.
        _ = try await run(LESetEventMask(mask: 0x1F | 0x40 | 0x800 | 0x1000))
        var length = 0
        var count = 0
        if let le = try? await run(LEReadBufferSize()), le.leACLDataPacketLength > 0, le.totalNumLEACLDataPackets > 0 {
            length = Int(le.leACLDataPacketLength)
            count = Int(le.totalNumLEACLDataPackets)
        } else {
            let shared = try await run(HCIReadBufferSize())
            length = Int(shared.aclDataPacketLength)
            count = Int(shared.totalNumACLDataPackets)
        }
        feed(.configureBuffers(ACLBufferSize(packetLength: max(length, 27), packetCount: max(count, 1))))
        if let random = configuration.randomAddress {
            _ = try await run(LESetRandomAddress(address: random))
        }
        // A controller left advertising or scanning by an earlier host refuses new parameters.
        _ = try? await run(LESetAdvertisingEnable(enable: false))
        _ = try? await run(LESetScanEnable(enable: false))
        controller = ControllerInfo(
            address: configuration.randomAddress ?? publicAddress, publicAddress: publicAddress,
            aclBufferLength: max(length, 27), aclBufferCount: max(count, 1), hciVersion: version.hciVersion)
    }

    /// Stops everything: open connections are abandoned (not disconnected), waiters fail, streams
    /// finish and the transport is closed.
    public func close() async {
        stop(.notRunning)
        await transport.close()
    }

    /// Waits until the stack stops — the controller went away (transport closed, framing
    /// error) or ``close()`` — and returns why. Cancelling the wait returns ``HostError/notRunning``.
    public func waitUntilStopped() async -> HostError {
        if case let .stopped(error) = state { return error }
        let id = nextStopWaiter
        nextStopWaiter += 1
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<HostError, Never>) in
                if case let .stopped(error) = state { return continuation.resume(returning: error) }
                stopWaiters[id] = continuation
            }
        } onCancel: {
            Task { await self.resumeStopWaiter(id, .notRunning) }
        }
    }

    private func resumeStopWaiter(_ id: Int, _ error: HostError) {
        stopWaiters.removeValue(forKey: id)?.resume(returning: error)
    }

    private var stopWaiters: [Int: CheckedContinuation<HostError, Never>] = [:]
    private var nextStopWaiter = 0

    private func stop(_ error: HostError) {
        if case .stopped = state { return }
        if case .running = state { feed(.stop(error)) }
        state = .stopped(error)
        for id in Array(stopWaiters.keys) { resumeStopWaiter(id, error) }
        for waiter in waiters.values { waiter.resume(throwing: error) }
        waiters.removeAll()
        for waiters in disconnectWaiters.values { for waiter in waiters { waiter.resume(returning: .localHostTerminated) } }
        disconnectWaiters.removeAll()
        for byValue in subscriptions.values { for subscribers in byValue.values { for s in subscribers.values { s.finish() } } }
        subscriptions.removeAll()
        for (_, scanner) in scanners { scanner.finish() }
        scanners.removeAll()
        incomingContinuation.finish()
        serverEventContinuation.finish()
        securityContinuation.finish()
        outbox.finish()
        timer?.cancel()
        timer = nil
        for task in tasks { task.cancel() }
    }

    // MARK: - Security

    /// Secures a link and returns its security level: as central, encrypts with the stored
    /// bond (unless `force`) or pairs; as peripheral, asks the central with a Security Request.
    /// Prompts arrive on ``securityEvents``. Throws ``SMPPairingError`` when pairing fails (its
    /// 30 s SMP timeout bounds the wait) or ``HostError`` when the link closes first.
    public func pair(_ handle: UInt16, force: Bool = false) async throws -> SMPSecurityLevel {
        guard case let .secured(level) = try await request({ .pair($0, handle: handle, force: force) }) else {
            throw HostError.malformed("unexpected reply to a pair request")
        }
        return level
    }

    /// The user's answer to a pairing prompt of ``securityEvents``.
    public func answerPairing(_ answer: PairingAnswer, on handle: UInt16) {
        guard runningError == nil else { return }
        feed(.answerPairing(handle: handle, answer))
    }

    /// A link's security level (``SMPSecurityLevel/none`` when not encrypted or not open).
    public func securityLevel(of handle: UInt16) -> SMPSecurityLevel {
        core.security.manager.securityLevel(handle: handle & 0x0FFF)
    }

    /// The bonded devices.
    public var bonds: [Bond] { core.security.manager.bonds.bonds }

    /// Forgets the bond with `address` (and rewrites the bond file); false when there was none.
    @discardableResult
    public func removeBond(_ address: BluetoothAddress) -> Bool {
        let before = bonds.count
        feed(.removeBond(address))
        return bonds.count < before
    }

    /// Writes the bonds to the bond file, if one is configured; a failure is logged.
    private func saveBonds(_ store: BondStore) {
        guard let path = configuration.bondFile else { return }
        do {
            try BondFile(path: path).save(store)
        } catch {
            HostLog.hci.error("could not save the bonds", metadata: ["error": "\(error)"])
        }
    }

    private var runningError: HostError? {
        switch state {
        case .running: nil
        case .idle: .notRunning
        case let .stopped(error): error
        }
    }

    // MARK: - HCI commands

    /// Sends a command and waits for its Command Complete (or Command Status for commands
    /// answered that way), failing on a non-zero status or a timeout.
    @discardableResult
    public func execute<C: HCICommand>(_ command: C, timeout: Double? = nil) async throws -> HCICommandResponse {
        let reply = try await request { .command($0, opcode: C.opcode, parameters: command.parameterBytes, timeout: timeout) }
        guard case let .command(response) = reply else { throw HostError.malformed("HCI \(C.name): no command response") }
        return response
    }

    /// Sends a command answered by Command Complete and decodes its return parameters.
    public func run<C: HCICommand>(_ command: C, timeout: Double? = nil) async throws -> C.ReturnParameters {
        let response = try await execute(command, timeout: timeout)
        guard case let .complete(bytes) = response else {
            throw HostError.malformed("HCI \(C.name) was answered with Command Status, expected Command Complete")
        }
        do {
            return try C.ReturnParameters(parameters: bytes)
        } catch {
            throw HostError.malformed("HCI \(C.name) return parameters: \(error)")
        }
    }

    // MARK: - Flow control back-pressure

    /// Bytes of partial L2CAP PDUs the reassembler holds, all handles together.
    var pendingReassemblyBytes: Int { core.pendingReassemblyBytes }

    /// Waits until the handle's queue of ACL fragments is short, so a sender that loops on
    /// write-without-response (or a server that notifies in a loop) is paced by the controller's
    /// buffers instead of growing memory. Throws ``HostError/timedOut(_:seconds:)`` after the ATT
    /// transaction timeout when the controller returns no buffers.
    public func waitForBuffers(on handle: UInt16) async throws {
        if let error = runningError { throw error }
        guard core.link(handle) != nil else { throw HostError.noSuchConnection(handle) }
        guard !core.hasRoomForData(on: handle) else { return }
        _ = try await request { .waitForBuffers($0, handle: handle) }
    }

    // MARK: - ATT for connections

    /// Runs a GATT client procedure on a link and returns its result: the core sends its
    /// requests one at a time, after the link's procedures asked for before it, so this is one
    /// wait per procedure however many requests it takes. Cancelling the calling task ends the
    /// wait with `CancellationError` at once; the request in flight cannot be withdrawn (ATT has
    /// no cancel), the procedure sends nothing more, and a long write still cancels the
    /// server's prepared-write queue before the next procedure starts.
    func runGATTProcedure(_ request: GATTProcedureRequest, on link: HostLinkToken) async throws -> GATTProcedureResult {
        if let error = runningError { throw error }
        try requireCurrent(link)
        let handle = link.handle
        let id = makeRequestID()
        let reply = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HostReply, any Error>) in
                guard !Task.isCancelled else { return continuation.resume(throwing: CancellationError()) }
                waiters[id] = continuation
                feed(.gattProcedure(id, handle: handle, request))
            }
        } onCancel: {
            // Noted at once, so the core learns of it before any packet that arrives later (a
            // long write must not send its next part after its caller gave up); the task tells
            // the core when no packet comes.
            gattCancellations.withLock { $0.append(id) }
            Task { await self.takeGATTCancellations() }
        }
        guard case let .gatt(result) = reply else { throw HostError.malformed("GATT \(request): no result") }
        return result
    }

    /// Tells the core which procedures' callers gave up; it answers them with `CancellationError`.
    private func takeGATTCancellations(now t: Duration? = nil) {
        let ids = gattCancellations.withLock { ids in
            defer { ids.removeAll() }
            return ids
        }
        guard !ids.isEmpty, case .running = state else { return }
        let time = t ?? now()
        for id in ids where waiters[id] != nil { core.handle(.cancelGATTProcedure(id), now: time, into: &outputs) }
        if t == nil { carryOut() }
    }

    /// Sends a Write Command in one hop (the data path of a sender): waits for buffers only
    /// when the link's queue is long, checks the MTU and sends, without an MTU round trip.
    func writeCommand(_ value: [UInt8], to attribute: UInt16, on link: HostLinkToken) async throws {
        if let error = runningError { throw error }
        try requireCurrent(link)
        let handle = link.handle
        if !core.hasRoomForData(on: handle) { try await waitForBuffers(on: handle) }
        if let error = runningError { throw error }
        try requireCurrent(link)
        try core.sendWriteCommand(value, to: attribute, on: handle, into: &outputs)
        carryOut()
    }

    func attMTU(on link: HostLinkToken) -> Int { isCurrent(link) ? core.attMTU(on: link.handle) : ATTBearer.defaultMTU }

    func parameters(of link: HostLinkToken) -> HostConnection.Parameters? { isCurrent(link) ? core.link(link.handle)?.parameters : nil }

    /// Reads `link`'s RSSI from the controller, dBm.
    func readRSSI(of link: HostLinkToken) async throws -> Int8 {
        try requireCurrent(link)
        return try await run(HCIReadRSSI(handle: link.handle), timeout: 5).rssi
    }

    /// Whether `link` is the link open on its handle now (not one that closed, whose handle a
    /// later link may have taken).
    func isCurrent(_ link: HostLinkToken) -> Bool { connections[link.handle]?.link === link }

    /// Throws ``HostError/disconnected(_:reason:)`` unless `link` is the link open on its handle.
    private func requireCurrent(_ link: HostLinkToken) throws {
        guard isCurrent(link) else {
            throw HostError.disconnected(link.handle, reason: link.reason ?? .unknownConnectionIdentifier)
        }
    }

    /// A stream of the values the peer notifies or indicates on `valueHandle` of link `handle`,
    /// made once; it ends when the link closes or ``endSubscriptions(on:valueHandle:)`` runs.
    func openSubscription(on link: HostLinkToken, valueHandle: UInt16) -> GATTValueSubscription {
        let handle = link.handle
        let (values, continuation) = AsyncStream<[UInt8]>.makeStream(bufferingPolicy: .bufferingNewest(Self.subscriptionBuffer))
        guard runningError == nil, isCurrent(link), core.link(handle) != nil else {
            continuation.finish()
            return GATTValueSubscription(values: values, end: {})
        }
        let id = nextSubscriptionID
        nextSubscriptionID += 1
        subscriptions[handle, default: [:]][valueHandle, default: [:]][id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.removeSubscription(id, on: handle, valueHandle: valueHandle) }
        }
        return GATTValueSubscription(values: values, end: { continuation.finish() })
    }

    /// Values link `handle`'s subscription streams dropped because their reader fell behind.
    func droppedValues(on link: HostLinkToken) -> Int { isCurrent(link) ? droppedValues[link.handle] ?? 0 : 0 }

    /// Ends every stream of `valueHandle` on `link`.
    func endSubscriptions(on link: HostLinkToken, valueHandle: UInt16) {
        guard isCurrent(link), let ended = subscriptions[link.handle]?.removeValue(forKey: valueHandle) else { return }
        for subscriber in ended.values { subscriber.finish() }
    }

    private func removeSubscription(_ id: Int, on handle: UInt16, valueHandle: UInt16) {
        subscriptions[handle]?[valueHandle]?[id] = nil
        if subscriptions[handle]?[valueHandle]?.isEmpty == true { subscriptions[handle]?[valueHandle] = nil }
    }

    // MARK: - Links

    /// Waits for the link's Disconnection Complete; nil when the link is already gone (its
    /// ``HostConnection`` then holds the reason).
    func waitForDisconnection(of link: HostLinkToken) async -> HCIStatus? {
        guard isCurrent(link), core.link(link.handle) != nil, runningError == nil else { return nil }
        return await withCheckedContinuation { continuation in
            disconnectWaiters[link.handle, default: []].append(continuation)
        }
    }

    /// Disconnects a link and waits at most `timeout` seconds for the controller to confirm;
    /// returns its reason, or nil when the link had already closed.
    func disconnect(_ link: HostLinkToken, reason: HCIStatus, timeout: Double) async throws -> HCIStatus? {
        guard isCurrent(link), core.link(link.handle) != nil else { return nil }
        let handle = link.handle
        let reply = try await request { .disconnect($0, handle: handle, reason: reason, timeout: timeout) }
        if case let .disconnected(reason) = reply { return reason }
        return nil
    }

    func isOpen(_ link: HostLinkToken) -> Bool { isCurrent(link) && core.link(link.handle) != nil }

    // MARK: - Central role

    /// Connects to an advertising device. Throws ``HostError/connectTimedOut(_:seconds:)`` when
    /// it does not answer within `timeout` seconds (the attempt is then cancelled).
    public func connect(
        to address: BluetoothAddress, timeout: Double = 10,
        parameters: LEConnectionParameters = LEConnectionParameters()
    ) async throws -> HostConnection {
        var requestID: HostRequestID?
        let reply = try await request { id in
            requestID = id
            return .connect(id, address: address, parameters: parameters, timeout: timeout)
        }
        let opened = requestID.flatMap { openedConnections.removeValue(forKey: $0) }
        guard case .link = reply, let connection = opened else {
            throw HostError.malformed("connect to \(address): no link")
        }
        return connection
    }

    /// Scans for advertisements until the returned stream is dropped or cancelled. Several
    /// scans share one controller scan; it stops when the last one ends.
    public func scan(active: Bool = true) async throws -> AsyncStream<AdvertisementReport> {
        if let error = runningError { throw error }
        let id = nextScannerID
        nextScannerID += 1
        let (stream, continuation) = AsyncStream<AdvertisementReport>.makeStream(bufferingPolicy: .bufferingNewest(4096))
        scanners[id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.scannerEnded(id) }
        }
        do {
            _ = try await request { .startScan($0, scanner: id, active: active) }
        } catch {
            scanners[id] = nil
            continuation.finish()
            throw error
        }
        return stream
    }

    private func scannerEnded(_ id: Int) {
        scanners[id] = nil
        guard case .running = state else { return }
        feed(.stopScan(scanner: id))
    }

    // MARK: - Peripheral role

    /// Starts connectable undirected advertising with `data` and `scanResponse` (an empty scan
    /// response when nil), every `intervalMilliseconds` (20…10240 ms).
    public func startAdvertising(
        _ data: AdvertisingData, scanResponse: AdvertisingData? = nil, intervalMilliseconds: Double = 100
    ) async throws {
        let units = UInt16(min(max(intervalMilliseconds / 0.625, 0x20), 0x4000))
        _ = try await request {
            .startAdvertising($0, data: data.bytes, scanResponse: scanResponse?.bytes ?? [], intervalUnits: units)
        }
    }

    /// Stops advertising.
    public func stopAdvertising() async throws {
        _ = try await request { HostInput.stopAdvertising($0) }
    }

    // MARK: - Local GATT server

    /// Replaces the local GATT server's services (GAP and GATT are kept). Open connections stay
    /// up; their subscriptions are cleared and clients that subscribed to Service Changed are
    /// told to rediscover.
    public func setServices(_ services: [GATTServiceDefinition]) {
        core.setServices(services, now: now(), into: &outputs)
        carryOut()
    }

    /// Replaces the local GATT server's whole database with one laid out by the caller
    /// (``GATTDatabase/init(placing:)``: handles as given, no GAP or GATT service added). Open
    /// connections are treated as by ``setServices(_:)``.
    public func setDatabase(_ database: GATTDatabase) {
        core.setDatabase(database, now: now(), into: &outputs)
        carryOut()
    }

    /// The application's answer to an ``GATTServerEvent/authorizationRequested(_:)`` of
    /// ``serverEvents`` (or a grant ahead of any request): a request held for it is answered.
    public func authorize(_ answer: GATTAuthorizationAnswer) {
        guard runningError == nil else { return }
        core.authorize(answer, now: now(), into: &outputs)
        carryOut()
    }

    /// The value handle of a characteristic in the local server.
    public func valueHandle(of characteristic: BluetoothUUID, in service: BluetoothUUID? = nil) -> UInt16? {
        core.database.valueHandle(of: characteristic, in: service)
    }

    /// The current value of a local attribute.
    public func localValue(at handle: UInt16) -> [UInt8]? {
        core.database.attributes(in: handle, handle).first?.value
    }

    /// Sets a local characteristic's value and notifies every subscribed client (or indicates,
    /// for clients that subscribed to indications). Returns how many clients it was sent to.
    @discardableResult
    public func updateValue(_ value: [UInt8], at handle: UInt16) -> Int {
        let count = core.updateValue(value, at: handle, now: now(), into: &outputs)
        carryOut()
        return count
    }

    /// Notifies `value` at `handle` on every open connection, subscribed or not (see
    /// ``HostCore/notifyEveryLink(_:at:now:into:)``). Returns how many it went to.
    @discardableResult
    public func notifyEveryConnection(_ value: [UInt8], at handle: UInt16) -> Int {
        let count = core.notifyEveryLink(value, at: handle, now: now(), into: &outputs)
        carryOut()
        return count
    }

    /// Connections currently open, by handle.
    public var openConnections: [HostConnection] { connections.values.sorted { $0.handle < $1.handle } }
}
