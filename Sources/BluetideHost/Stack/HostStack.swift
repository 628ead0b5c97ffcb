import BluetideCore
import BluetideHCI
import BluetideTransport
import Synchronization

/// One Bluetooth LE host: HCI, L2CAP, ATT and GATT (client and server) over one transport.
///
/// The actor is the single owner of the stack's mutable state (principle 2). The protocol layers
/// it drives are value-type state machines without I/O (``HCICommandQueue``, ``ACLFlowControl``,
/// ``ACLReassembler``, ``L2CAPRouter``, ``ATTBearer``, ``GATTServer``); the actor feeds them
/// packets and the time, and carries out what they return. Packets leave through one ordered
/// outbox drained by a single writer task, so fragments of one PDU are never interleaved.
public actor HostStack {
    /// How the stack sets itself up.
    public struct Configuration: Sendable {
        /// A random static address to use as our own (recommended: Bumble's controllers all share
        /// the public address 00:00:00:00:00:00). Nil uses the controller's public address.
        public var randomAddress: BluetoothAddress?
        /// GAP device name served in 0x2A00.
        public var deviceName: String
        /// GAP appearance served in 0x2A01.
        public var appearance: UInt16
        /// Services of the local GATT server (GAP and GATT services are added automatically).
        public var services: [GATTServiceDefinition]
        /// Seconds an HCI command may wait for its Command Complete / Status.
        public var commandTimeout: Double
        /// Seconds an ATT transaction may wait for its response (30 s in the specification).
        public var attTransactionTimeout: Double
        /// Our ATT MTU (the largest the peer may use towards us), 23…517.
        public var localMTU: Int

        public init(
            randomAddress: BluetoothAddress? = nil, deviceName: String = "Bluetide", appearance: UInt16 = 0,
            services: [GATTServiceDefinition] = [], commandTimeout: Double = 10, attTransactionTimeout: Double = 30,
            localMTU: Int = 517
        ) {
            self.randomAddress = randomAddress
            self.deviceName = deviceName
            self.appearance = appearance
            self.services = services
            self.commandTimeout = commandTimeout
            self.attTransactionTimeout = attTransactionTimeout
            self.localMTU = min(max(localMTU, 23), 517)
        }
    }

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
    private let clock = ContinuousClock()
    private let origin: ContinuousClock.Instant

    private var commands: HCICommandQueue
    private var commandWaiters: [HCICommandTicket: CheckedContinuation<HCICommandResponse, any Error>] = [:]
    private var flow: ACLFlowControl?
    private var flowWaiters: [UInt16: [FlowWaiter]] = [:]

    /// A sender waiting for the controller's ACL buffers; it gives up at `deadline` (seconds).
    private struct FlowWaiter {
        let continuation: CheckedContinuation<Void, any Error>
        let deadline: Double
    }
    private var reassembler = ACLReassembler()
    /// Bytes of partial L2CAP PDUs the reassembler holds, all handles together.
    var pendingReassemblyBytes: Int { reassembler.pendingBytes }
    private var server: GATTServer
    private var links: [UInt16: Link] = [:]
    private var pendingConnect: PendingConnect?
    private var connectCancellation: Task<Void, Never>?
    private var expectingCancelledConnection = false
    /// The cancel of a timed-out attempt, waiting for the LE Connection Complete that ends it.
    private var cancelledConnectionWaiter: CheckedContinuation<Void, Never>?
    private var scanners: [Int: AsyncStream<AdvertisementReport>.Continuation] = [:]
    private var nextScannerID = 0
    private var scanning = false
    private var scanTransition: Task<Void, Never>?
    private var incomingContinuation: AsyncStream<HostConnection>.Continuation
    /// Connections peers made to us (peripheral role), in order.
    public nonisolated let incomingConnections: AsyncStream<HostConnection>
    private var serverEventContinuation: AsyncStream<ServerEvent>.Continuation
    /// Writes and subscription changes made by remote clients to the local GATT server.
    public nonisolated let serverEvents: AsyncStream<ServerEvent>
    private var outbox: AsyncStream<HCIPacket>.Continuation
    private let outboxStream: AsyncStream<HCIPacket>
    /// Values and link ends for the connections' GATT clients, handed over by one task in
    /// arrival order (a task per value could reorder them, or end a subscription before its
    /// last values).
    private let deliveries: AsyncStream<ClientDelivery>.Continuation
    private let deliveryStream: AsyncStream<ClientDelivery>

    /// Something for a connection's ``GATTClient``.
    private enum ClientDelivery: Sendable {
        case notification(GATTClient, handle: UInt16, value: [UInt8])
        case indication(GATTClient, handle: UInt16, value: [UInt8])
        case closed(GATTClient)
    }
    private var tasks: [Task<Void, Never>] = []
    /// Controller facts, available after ``start()``.
    public private(set) var controller: ControllerInfo?

    private struct PendingConnect {
        let address: BluetoothAddress
        let deadline: Double
        let timeout: Double
        let continuation: CheckedContinuation<HostConnection, any Error>
    }

    /// Per-connection state.
    private struct Link {
        let connection: HostConnection
        var router: L2CAPRouter
        var bearer: ATTBearer
        var attWaiters: [ATTTransactionID: CheckedContinuation<ATTPDU, any Error>] = [:]
        var disconnectWaiters: [CheckedContinuation<HCIStatus, Never>] = []
        var parameters: HostConnection.Parameters
    }

    /// A stack on `transport`; nothing is sent until ``start()``.
    public init(transport: any HCITransport, configuration: Configuration = Configuration()) {
        self.transport = transport
        self.configuration = configuration
        self.origin = clock.now
        var queue = HCICommandQueue(defaultTimeout: configuration.commandTimeout)
        queue.defaultTimeout = configuration.commandTimeout
        self.commands = queue
        var server = GATTServer(
            deviceName: configuration.deviceName, appearance: configuration.appearance, services: configuration.services)
        server.localMTU = configuration.localMTU
        self.server = server
        (incomingConnections, incomingContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        (serverEvents, serverEventContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        (outboxStream, outbox) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        (deliveryStream, deliveries) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    /// Stack time: the time fed to the protocol state machines, in seconds. It follows the
    /// monotonic clock but advances at most ``maximumStep`` per reading, so when the whole
    /// process is starved (a loaded machine, a debugger) answers already queued are handled
    /// before any timeout can fire: timeouts measure time the stack could have run.
    private var stackTime = 0.0
    private var lastWallTime = 0.0
    private static let maximumStep = 0.5

    private func now() -> Double {
        let elapsed = clock.now - origin
        let wall = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        stackTime += min(max(wall - lastWallTime, 0), Self.maximumStep)
        lastWallTime = wall
        return stackTime
    }

    // MARK: - Life cycle

    /// Starts the reader, writer and timer tasks and initialises the controller: Reset, version,
    /// addresses, buffer sizes, event masks, our random address; advertising and scanning off.
    public func start() async throws {
        guard case .idle = state else { throw HostError.notRunning }
        state = .running
        let packets = transport.packets
        tasks.append(Task { [weak self] in
            do {
                for try await packet in packets { await self?.receive(packet) }
                await self?.stop(.transportFailed("the controller closed the transport"))
            } catch {
                await self?.stop(.transportFailed("\(error)"))
            }
        })
        // Not cancelled on stop: it drains what is queued (link ends included) and then ends,
        // because ``stop(_:)`` finishes the stream.
        let delivered = deliveryStream
        Task {
            for await delivery in delivered {
                switch delivery {
                case let .notification(client, handle, value):
                    if !(await client.receiveNotification(handle: handle, value: value)) {
                        HostLog.gatt.debug("dropped a notification nobody subscribed to", metadata: ["attribute": "\(handle)"])
                    }
                case let .indication(client, handle, value):
                    if !(await client.receiveIndication(handle: handle, value: value)) {
                        HostLog.gatt.debug("dropped an indication nobody subscribed to", metadata: ["attribute": "\(handle)"])
                    }
                case let .closed(client): await client.connectionClosed()
                }
            }
        }
        let outgoing = outboxStream
        let transport = self.transport
        tasks.append(Task { [weak self] in
            for await packet in outgoing {
                do { try await transport.send(packet) } catch {
                    await self?.stop(.transportFailed("\(error)"))
                    return
                }
            }
        })
        tasks.append(Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(50))
                guard let self, await self.tick() else { return }
            }
        })
        try await initialise()
    }

    private func initialise() async throws {
        _ = try await run(HCIReset())
        let version = try await run(HCIReadLocalVersionInformation())
        let publicAddress = try await run(HCIReadBDADDR()).address
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
        flow = ACLFlowControl(bufferSize: ACLBufferSize(packetLength: max(length, 27), packetCount: max(count, 1)))
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
        state = .stopped(error)
        for id in Array(stopWaiters.keys) { resumeStopWaiter(id, error) }
        for completion in commands.failAll("\(error)") { resumeCommand(completion) }
        for (handle, _) in links { tearDown(handle, reason: .localHostTerminated, error: error) }
        if let pending = pendingConnect {
            pendingConnect = nil
            pending.continuation.resume(throwing: error)
        }
        endCancelledConnectionWait()
        for (_, scanner) in scanners { scanner.finish() }
        scanners.removeAll()
        for waiters in flowWaiters.values { for waiter in waiters { waiter.continuation.resume(throwing: error) } }
        flowWaiters.removeAll()
        incomingContinuation.finish()
        serverEventContinuation.finish()
        outbox.finish()
        deliveries.finish()
        for task in tasks { task.cancel() }
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
        if let error = runningError { throw error }
        let (ticket, output) = commands.enqueue(
            C.opcode, parameters: command.parameterBytes, now: now(), timeout: timeout)
        return try await withCheckedThrowingContinuation { continuation in
            commandWaiters[ticket] = continuation
            apply(output)
        }
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

    private func apply(_ output: HCICommandQueueOutput) {
        for packet in output.packets { outbox.yield(packet) }
        for completion in output.completions { resumeCommand(completion) }
    }

    private func resumeCommand(_ completion: HCICommandOutcome) {
        guard let waiter = commandWaiters.removeValue(forKey: completion.ticket) else { return }
        switch completion.result {
        case let .success(response): waiter.resume(returning: response)
        case let .failure(error): waiter.resume(throwing: HostError.command(error.description))
        }
    }

    // MARK: - Timers

    /// Runs the timeouts of every state machine; false once the stack has stopped.
    private func tick() -> Bool {
        guard case .running = state else { return false }
        let t = now()
        apply(commands.expire(now: t))
        for handle in Array(links.keys) {
            guard var link = links[handle] else { continue }
            let events = link.bearer.tick(now: t)
            links[handle] = link
            handleBearerEvents(events, on: handle)
        }
        expireFlowWaiters(now: t)
        if let pending = pendingConnect, t >= pending.deadline {
            pendingConnect = nil
            pending.continuation.resume(throwing: HostError.connectTimedOut(pending.address, seconds: pending.timeout))
            expectingCancelledConnection = true
            connectCancellation = Task { await self.cancelConnectAttempt() }
        }
        return true
    }

    // MARK: - Incoming packets

    private func receive(_ packet: HCIPacket) {
        guard case .running = state else { return }
        switch packet {
        case .event:
            receiveEvent(packet)
        case let .acl(handle, boundary, _, data):
            // Data for a handle with no connection is dropped before reassembly, so a controller
            // cannot make the host keep partial PDUs for handles that will never complete.
            guard links[handle & 0x0FFF] != nil else { return }
            let output = reassembler.receive(handle: handle, boundary: boundary, data: data)
            for error in output.errors { HostLog.hci.debug("\(error)") }
            if let pdu = output.pdu { receivePDU(pdu.bytes, on: pdu.handle) }
        default:
            HostLog.hci.debug("dropped an HCI packet a host does not take", metadata: ["packet": "\(packet)"])
        }
    }

    private func receiveEvent(_ packet: HCIPacket) {
        // A known event with short parameters is dropped: a command it should have answered
        // fails at its timeout, naming the command.
        let decoded: HCIEvent?
        do {
            decoded = try HCIEvent(packet: packet)
        } catch {
            HostLog.hci.debug("dropped a malformed HCI event", metadata: ["error": "\(error)"])
            return
        }
        guard let event = decoded else { return }
        apply(commands.handle(event, now: now()))
        if var flow {
            for out in flow.handle(event) { outbox.yield(out) }
            self.flow = flow
            releaseFlowWaiters()
        }
        switch event {
        case let .disconnectionComplete(done) where done.status == .success:
            // Handles are 12 bits; BluetideHCI keeps the reserved top bits as sent.
            let handle = done.handle & 0x0FFF
            tearDown(handle, reason: done.reason, error: .disconnected(handle, reason: done.reason))
        case let .leMeta(meta):
            receiveMeta(meta)
        default:
            break
        }
    }

    private func receiveMeta(_ meta: LEMetaEvent) {
        switch meta {
        case let .connectionComplete(c):
            connectionCompleted(
                status: c.status, handle: c.handle, role: c.role, peer: c.peerAddress, interval: c.interval,
                latency: c.latency, timeout: c.supervisionTimeout)
        case let .enhancedConnectionComplete(c):
            connectionCompleted(
                status: c.status, handle: c.handle, role: c.role, peer: c.peerAddress, interval: c.interval,
                latency: c.latency, timeout: c.supervisionTimeout)
        case let .connectionUpdateComplete(update) where update.status == .success:
            links[update.handle]?.parameters = HostConnection.Parameters(
                intervalMilliseconds: Double(update.interval) * 1.25, latency: update.latency,
                supervisionTimeoutMilliseconds: Double(update.supervisionTimeout) * 10)
        case .advertisingReport, .extendedAdvertisingReport:
            let reports = AdvertisementReport.reports(in: meta)
            for report in reports { for (_, scanner) in scanners { scanner.yield(report) } }
        default:
            break
        }
    }

    private func connectionCompleted(
        status: HCIStatus, handle: UInt16, role: HCIRole, peer: BluetoothAddress, interval: UInt16, latency: UInt16,
        timeout: UInt16
    ) {
        let handle = handle & 0x0FFF
        guard role == .central || role == .peripheral else {
            // Neither central nor peripheral: a controller fault nobody could use. Ask the
            // controller to drop the link rather than surface it (or let it answer a connect).
            if status == .success {
                Task { _ = try? await self.execute(HCIDisconnect(handle: handle, reason: .remoteUserTerminated)) }
            }
            return
        }
        let isCentral = role == .central
        if isCentral, expectingCancelledConnection, pendingConnect == nil {
            // The end of a cancelled attempt (status 0x02), or a connection that won the race
            // with the cancel: nobody waits for it.
            endCancelledConnectionWait()
            if status == .success {
                Task { _ = try? await self.execute(HCIDisconnect(handle: handle, reason: .remoteUserTerminated)) }
            }
            return
        }
        guard status == .success else {
            if isCentral, let pending = pendingConnect {
                pendingConnect = nil
                pending.continuation.resume(throwing: HostError.connectFailed(pending.address, status: status))
            }
            return
        }
        if links[handle] != nil {
            // The controller reused an open handle, so the old link is gone (its Disconnection
            // Complete was lost): close it, or its waiters would hang on a link that no longer exists.
            tearDown(handle, reason: .unspecifiedError, error: .disconnected(handle, reason: .unspecifiedError))
        }
        let connection = HostConnection(
            stack: self, handle: handle, peer: peer, role: isCentral ? .central : .peripheral)
        var bearer = ATTBearer(localMTU: configuration.localMTU, transactionTimeout: configuration.attTransactionTimeout)
        _ = bearer.tick(now: now())
        links[handle] = Link(
            connection: connection, router: L2CAPRouter(role: isCentral ? .central : .peripheral), bearer: bearer,
            parameters: HostConnection.Parameters(
                intervalMilliseconds: Double(interval) * 1.25, latency: latency,
                supervisionTimeoutMilliseconds: Double(timeout) * 10))
        server.connect(handle)
        if isCentral {
            if let pending = pendingConnect {
                pendingConnect = nil
                pending.continuation.resume(returning: connection)
            } else {
                // A connection that completed after its attempt timed out: nobody wants it.
                Task { try? await connection.disconnect() }
            }
        } else {
            incomingContinuation.yield(connection)
        }
    }

    private func tearDown(_ handle: UInt16, reason: HCIStatus, error: HostError) {
        guard var link = links.removeValue(forKey: handle) else { return }
        _ = link.bearer.close()
        for (_, waiter) in link.attWaiters { waiter.resume(throwing: error) }
        link.attWaiters.removeAll()
        for waiter in link.disconnectWaiters { waiter.resume(returning: reason) }
        server.disconnect(handle)
        reassembler.disconnected(handle)
        if var flow {
            _ = flow.disconnected(handle)
            for out in flow.sendQueued() { outbox.yield(out) }
            self.flow = flow
        }
        for waiter in flowWaiters.removeValue(forKey: handle) ?? [] { waiter.continuation.resume(throwing: error) }
        releaseFlowWaiters()
        deliveries.yield(.closed(link.connection.gatt))
        link.connection.closed(reason: reason)
    }

    private func receivePDU(_ pdu: [UInt8], on handle: UInt16) {
        guard var link = links[handle] else {
            HostLog.hci.debug("dropped an L2CAP PDU on a handle with no connection", metadata: ["handle": "\(handle)", "pdu": "\(pdu.logHex)"])
            return
        }
        let routing = link.router.receive(pdu)
        links[handle] = link
        if let dropped = routing.dropped {
            HostLog.l2cap.debug("dropped an L2CAP PDU", metadata: ["handle": "\(handle)", "reason": "\(dropped)", "pdu": "\(pdu.logHex)"])
        }
        for frame in routing.outgoing { sendFrame(frame, on: handle) }
        for event in routing.signalingEvents {
            if case let .connectionParameterUpdateRequested(p, accepted: true) = event {
                let update = LEConnectionUpdate(
                    handle: handle,
                    connection: LEConnectionParameters(
                        intervalMin: p.intervalMin, intervalMax: p.intervalMax, maxLatency: p.peripheralLatency,
                        supervisionTimeout: p.supervisionTimeout))
                Task { _ = try? await self.execute(update) }
            }
        }
        guard let att = routing.att else { return }
        let served = links[handle]!.bearer.receive(att, now: now(), server: &server, connection: handle)
        for event in served.server { serverEventContinuation.yield(ServerEvent(connection: handle, event: event)) }
        handleBearerEvents(served.bearer, on: handle)
    }

    private func handleBearerEvents(_ events: [ATTBearerEvent], on handle: UInt16) {
        for event in events {
            switch event {
            case let .send(bytes):
                sendFrame(L2CAPRouter.attFrame(bytes), on: handle)
            case let .response(id, pdu):
                links[handle]?.attWaiters.removeValue(forKey: id)?.resume(returning: pdu)
            case let .failed(id, error):
                links[handle]?.attWaiters.removeValue(forKey: id)?.resume(throwing: error)
            case let .notification(valueHandle, value):
                guard let client = links[handle]?.connection.gatt else { continue }
                deliveries.yield(.notification(client, handle: valueHandle, value: value))
            case let .indication(valueHandle, value):
                guard let client = links[handle]?.connection.gatt else { continue }
                deliveries.yield(.indication(client, handle: valueHandle, value: value))
            case let .closed(error):
                if let waiters = links[handle]?.attWaiters {
                    links[handle]?.attWaiters.removeAll()
                    for (_, waiter) in waiters { waiter.resume(throwing: error) }
                }
            case let .ignored(bytes, reason):
                HostLog.att.debug("dropped an ATT PDU", metadata: ["handle": "\(handle)", "reason": "\(reason)", "pdu": "\(bytes.logHex)"])
            default:
                break
            }
        }
    }

    private func sendFrame(_ frame: L2CAPFrame, on handle: UInt16) {
        guard var flow else { return }
        for packet in flow.send(frame.bytes, on: handle) { outbox.yield(packet) }
        self.flow = flow
    }

    // MARK: - Flow control back-pressure

    /// Fragments queued on a handle beyond which ``waitForBuffers(on:)`` waits.
    private let backlogLimit = 8

    /// Waits until the handle's queue of ACL fragments is short, so a sender that loops on
    /// write-without-response (or a server that notifies in a loop) is paced by the controller's
    /// buffers instead of growing memory. Throws ``HostError/timedOut(_:seconds:)`` after the ATT
    /// transaction timeout when the controller returns no buffers.
    public func waitForBuffers(on handle: UInt16) async throws {
        if let error = runningError { throw error }
        guard links[handle] != nil else { throw HostError.noSuchConnection(handle) }
        guard let flow, flow.queuedFragments(on: handle) > backlogLimit else { return }
        try await withCheckedThrowingContinuation { continuation in
            flowWaiters[handle, default: []].append(
                FlowWaiter(continuation: continuation, deadline: now() + configuration.attTransactionTimeout))
        }
    }

    /// Fails senders that waited longer than the ATT transaction timeout: a controller that
    /// stops returning ACL buffers (no Number Of Completed Packets) must not hang them.
    private func expireFlowWaiters(now t: Double) {
        for (handle, waiters) in flowWaiters {
            let expired = waiters.filter { $0.deadline <= t }
            guard !expired.isEmpty else { continue }
            let kept = waiters.filter { $0.deadline > t }
            flowWaiters[handle] = kept.isEmpty ? nil : kept
            let error = HostError.timedOut(
                "waiting for the controller's ACL buffers on connection 0x\(String(handle, radix: 16)) "
                    + "(no Number Of Completed Packets)", seconds: configuration.attTransactionTimeout)
            for waiter in expired { waiter.continuation.resume(throwing: error) }
        }
    }

    private func releaseFlowWaiters() {
        guard let flow else { return }
        for (handle, waiters) in flowWaiters where flow.queuedFragments(on: handle) <= backlogLimit {
            flowWaiters[handle] = nil
            for waiter in waiters { waiter.continuation.resume() }
        }
    }

    // MARK: - ATT for connections

    /// Sends an ATT request and waits for its response. Cancelling the calling task ends the
    /// wait with `CancellationError` at once; the transaction itself cannot be withdrawn (ATT has
    /// no cancel), so later requests still queue behind it until it is answered or times out.
    func attRequest(_ pdu: ATTPDU, on handle: UInt16) async throws -> ATTPDU {
        if let error = runningError { throw error }
        guard links[handle] != nil else { throw HostError.noSuchConnection(handle) }
        let transaction = PendingTransaction()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard !Task.isCancelled else {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                guard var link = links[handle] else {
                    continuation.resume(throwing: HostError.noSuchConnection(handle))
                    return
                }
                let (id, events) = link.bearer.enqueue(request: pdu, now: now())
                link.attWaiters[id] = continuation
                links[handle] = link
                transaction.id.withLock { $0 = id }
                handleBearerEvents(events, on: handle)
            }
        } onCancel: {
            // Runs after the request is registered: the actor is busy registering it until the
            // continuation suspends, and this task needs the actor.
            Task { await self.abandonATTRequest(transaction, on: handle) }
        }
    }

    /// Stops waiting for a request whose caller was cancelled; its response is dropped.
    private func abandonATTRequest(_ transaction: PendingTransaction, on handle: UInt16) {
        guard let id = transaction.id.withLock({ $0 }),
              let waiter = links[handle]?.attWaiters.removeValue(forKey: id) else { return }
        waiter.resume(throwing: CancellationError())
    }

    /// The transaction ID of one ``attRequest(_:on:)``, shared with its cancellation handler.
    private final class PendingTransaction: Sendable {
        let id = Mutex<ATTTransactionID?>(nil)
    }

    func attCommand(_ pdu: ATTPDU, on handle: UInt16) async throws {
        try await waitForBuffers(on: handle)
        guard let link = links[handle] else { throw HostError.noSuchConnection(handle) }
        let events = try link.bearer.send(command: pdu)
        handleBearerEvents(events, on: handle)
    }

    func attMTU(on handle: UInt16) -> Int {
        links[handle]?.bearer.mtu ?? 23
    }

    func parameters(of handle: UInt16) -> HostConnection.Parameters? {
        links[handle]?.parameters
    }

    /// Waits for the link's Disconnection Complete; nil when the link is already gone (its
    /// ``HostConnection`` then holds the reason).
    func waitForDisconnection(of handle: UInt16) async -> HCIStatus? {
        guard links[handle] != nil else { return nil }
        return await withCheckedContinuation { continuation in
            links[handle]!.disconnectWaiters.append(continuation)
        }
    }

    func isOpen(_ handle: UInt16) -> Bool { links[handle] != nil }

    // MARK: - Central role

    /// Connects to an advertising device. Throws ``HostError/connectTimedOut(_:seconds:)`` when
    /// it does not answer within `timeout` seconds (the attempt is then cancelled).
    public func connect(
        to address: BluetoothAddress, timeout: Double = 10,
        parameters: LEConnectionParameters = LEConnectionParameters()
    ) async throws -> HostConnection {
        if let error = runningError { throw error }
        if let cancellation = connectCancellation {
            await cancellation.value
            connectCancellation = nil
        }
        guard pendingConnect == nil else { throw HostError.connectInProgress }
        let own: LEAddressType = configuration.randomAddress == nil ? .public : .random
        let command = LECreateConnection(peerAddress: address, ownAddressType: own, connection: parameters)
        // The attempt is recorded before the command goes out: a controller may report the
        // connection right after its Command Status, before this task runs again.
        return try await withCheckedThrowingContinuation { continuation in
            pendingConnect = PendingConnect(
                address: address, deadline: now() + timeout, timeout: timeout, continuation: continuation)
            Task {
                do { try await self.execute(command) } catch { self.failPendingConnect(to: address, error) }
            }
        }
    }

    /// Asks the controller to stop a timed-out attempt and waits (at most 2 s) for the LE
    /// Connection Complete that ends it, so it cannot be taken for the next attempt's answer.
    /// A controller that never answers the cancel (Bumble, with stale state) is tolerated.
    private func cancelConnectAttempt() async {
        do {
            try await execute(LECreateConnectionCancel(), timeout: 2)
        } catch {
            expectingCancelledConnection = false
            return
        }
        guard expectingCancelledConnection, case .running = state else {
            expectingCancelledConnection = false
            return
        }
        let timer = Task { [weak self] in
            try? await Task.sleep(for: .seconds(2))
            await self?.endCancelledConnectionWait()
        }
        await withCheckedContinuation { cancelledConnectionWaiter = $0 }
        timer.cancel()
    }

    /// The attempt a cancel waited for has ended (its Connection Complete came, the wait timed
    /// out, or the stack stopped): the next connect may go ahead.
    private func endCancelledConnectionWait() {
        expectingCancelledConnection = false
        cancelledConnectionWaiter?.resume()
        cancelledConnectionWaiter = nil
    }

    private func failPendingConnect(to address: BluetoothAddress, _ error: any Error) {
        guard let pending = pendingConnect, pending.address == address else { return }
        pendingConnect = nil
        pending.continuation.resume(throwing: error)
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
        if !scanning {
            scanning = true
            let own: LEAddressType = configuration.randomAddress == nil ? .public : .random
            do {
                try await execute(LESetScanParameters(active: active, ownAddressType: own))
                try await execute(LESetScanEnable(enable: true, filterDuplicates: false))
            } catch {
                scanning = false
                scanners[id] = nil
                continuation.finish()
                throw error
            }
        }
        return stream
    }

    private func scannerEnded(_ id: Int) async {
        scanners[id] = nil
        guard scanners.isEmpty, scanning, case .running = state else { return }
        scanning = false
        _ = try? await execute(LESetScanEnable(enable: false))
    }

    // MARK: - Peripheral role

    /// Starts connectable undirected advertising with `data` and `scanResponse` (an empty scan
    /// response when nil), every `intervalMilliseconds` (20…10240 ms).
    public func startAdvertising(
        _ data: AdvertisingData, scanResponse: AdvertisingData? = nil, intervalMilliseconds: Double = 100
    ) async throws {
        let units = UInt16(min(max(intervalMilliseconds / 0.625, 0x20), 0x4000))
        let own: LEAddressType = configuration.randomAddress == nil ? .public : .random
        _ = try? await execute(LESetAdvertisingEnable(enable: false))
        try await execute(LESetAdvertisingParameters(intervalMin: units, intervalMax: units, ownAddressType: own))
        try await execute(LESetAdvertisingData(data: data.bytes))
        // Always set: controllers keep the previous scan response, which would otherwise go on
        // answering scans after advertising without one.
        try await execute(LESetScanResponseData(data: scanResponse?.bytes ?? []))
        try await execute(LESetAdvertisingEnable(enable: true))
    }

    /// Stops advertising.
    public func stopAdvertising() async throws {
        try await execute(LESetAdvertisingEnable(enable: false))
    }

    // MARK: - Local GATT server

    /// Replaces the local GATT server's services (GAP and GATT are kept). Open connections stay
    /// up; their subscriptions are cleared and clients that subscribed to Service Changed are
    /// told to rediscover.
    public func setServices(_ services: [GATTServiceDefinition]) {
        var fresh = GATTServer(
            deviceName: configuration.deviceName, appearance: configuration.appearance, services: services)
        fresh.localMTU = configuration.localMTU
        let previous = server
        for handle in links.keys { fresh.connect(handle) }
        // Keep who asked for Service Changed indications, so they can be told.
        if let changed = previous.database.valueHandle(of: .serviceChanged, in: .genericAttribute),
           let newChanged = fresh.database.valueHandle(of: .serviceChanged, in: .genericAttribute),
           let cccd = fresh.database.attributes(in: newChanged &+ 1, newChanged &+ 2)
               .first(where: { $0.type == .clientCharacteristicConfiguration })?.handle {
            for handle in links.keys where previous.configuration(of: changed, for: handle).contains(.indication) {
                _ = fresh.handle(.writeRequest(handle: cccd, value: [0x02, 0x00]), from: handle, mtu: links[handle]?.bearer.mtu ?? 23)
            }
        }
        server = fresh
        let t = now()
        for push in server.indicateServiceChanged() {
            guard var link = links[push.connection] else { continue }
            let events = link.bearer.send(push, now: t)
            links[push.connection] = link
            handleBearerEvents(events, on: push.connection)
        }
    }

    /// The value handle of a characteristic in the local server.
    public func valueHandle(of characteristic: BluetoothUUID, in service: BluetoothUUID? = nil) -> UInt16? {
        server.database.valueHandle(of: characteristic, in: service)
    }

    /// The current value of a local attribute.
    public func localValue(at handle: UInt16) -> [UInt8]? {
        server.database.attributes(in: handle, handle).first?.value
    }

    /// Sets a local characteristic's value and notifies every subscribed client (or indicates,
    /// for clients that subscribed to indications). Returns how many clients it was sent to.
    @discardableResult
    public func updateValue(_ value: [UInt8], at handle: UInt16) -> Int {
        server.setValue(value, at: handle)
        var pushes = server.notify(valueHandle: handle, value: value)
        pushes += server.indicate(valueHandle: handle, value: value)
        let t = now()
        for push in pushes {
            guard var link = links[push.connection] else { continue }
            let events = link.bearer.send(push, now: t)
            links[push.connection] = link
            handleBearerEvents(events, on: push.connection)
        }
        return Set(pushes.map(\.connection)).count
    }

    /// Connections currently open, by handle.
    public var openConnections: [HostConnection] { links.values.map(\.connection).sorted { $0.handle < $1.handle } }
}
