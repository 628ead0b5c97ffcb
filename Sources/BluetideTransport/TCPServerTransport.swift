import BluetideHCI
import NIOCore
import NIOPosix
import Synchronization

/// H4 over TCP where the controller connects to us (`tcp-server:HOST:PORT`): listens, accepts
/// **one client at a time** (a second connection while one is active is closed at once), and
/// frames each client with its own parser, so a client that dies mid-packet cannot garble the
/// next one. When the client disconnects the transport has lost its controller: `packets`
/// finishes with ``TransportError/closedByPeer(_:)`` and the listener closes.
///
/// Reads and writes happen on the client connection's event loop: every read cycle becomes one
/// batch for the reader, and everything sent before the loop gets to it leaves in one flush.
public final class TCPServerTransport: HCITransport {
    /// What the event loop knows about the accepted client; touched on `loop` only.
    private struct ClientSlot {
        var client: (any Channel)?
        var closed = false
        var waiters: [EventLoopPromise<Void>] = []
    }

    private let inbox: InboundPackets
    private let outbound: ClientWriterSlot
    private let serverChannel: any Channel
    private let loop: any EventLoop
    private let slot: NIOLoopBoundBox<ClientSlot>
    /// The spec this transport was opened with, for messages.
    public let name: String
    /// The TCP port actually listened on (useful after asking for port 0).
    public let localPort: Int

    private init(
        serverChannel: any Channel, loop: any EventLoop, slot: NIOLoopBoundBox<ClientSlot>, name: String,
        inbox: InboundPackets, outbound: ClientWriterSlot
    ) {
        self.serverChannel = serverChannel
        self.loop = loop
        self.slot = slot
        self.name = name
        self.inbox = inbox
        self.outbound = outbound
        self.localPort = serverChannel.localAddress?.port ?? 0
    }

    /// Starts listening on `host` (nil = 127.0.0.1, this computer only) and `port` (0 = any free port; see
    /// ``localPort``). Returns at once; use ``waitForClient()`` to wait for the controller.
    public static func listen(host: String?, port: Int) async throws -> TCPServerTransport {
        let name = "tcp-server:\(host ?? "_"):\(port)"
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let slot = try await loop.submit { NIOLoopBoundBox(ClientSlot(), eventLoop: loop) }.get()
        let inbox = InboundPackets(name: name)
        let outbound = ClientWriterSlot()
        // One event loop for the listener and its clients, so `slot` is only touched there.
        let bootstrap = ServerBootstrap(group: loop)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            // Every packet to the host leaves at once (no Nagle wait for the previous ACK).
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { child in
                child.eventLoop.makeCompletedFuture {
                    if slot.value.client != nil || slot.value.closed {
                        child.close(promise: nil)  // one client at a time
                        return
                    }
                    let peer = child.remoteAddress.map { "\($0)" } ?? "?"
                    // Ahead of the H4 handler: when the client leaves, the listener is marked
                    // closed before `packets` ends, so nobody who saw the end can still find a
                    // "connected" client.
                    try child.pipeline.syncOperations.addHandler(ClientDepartureHandler {
                        slot.value.closed = true
                    })
                    let clientName = "\(name) (client \(peer))"
                    try child.pipeline.syncOperations.addHandler(H4ChannelHandler(name: clientName, inbox: inbox))
                    slot.value.client = child
                    outbound.connect(ChannelBatchWriter(channel: child, name: name))
                    let waiters = slot.value.waiters
                    slot.value.waiters = []
                    waiters.forEach { $0.succeed() }
                    child.closeFuture.whenComplete { _ in
                        slot.value.client = nil
                        child.parent?.close(promise: nil)
                    }
                }
            }
        let serverChannel: any Channel
        do {
            serverChannel = try await bootstrap.bind(host: host ?? "127.0.0.1", port: port).get()
        } catch {
            inbox.finish(throwing: error)
            throw TransportError.openFailed(
                "\(name): cannot listen (\(error)). Is the port already in use? Pick another one, or 0 for any free port.")
        }
        // Once the listener is gone (closed, or its client left) nobody else can connect.
        serverChannel.closeFuture.whenComplete { _ in
            slot.value.closed = true
            let waiters = slot.value.waiters
            slot.value.waiters = []
            waiters.forEach { $0.fail(TransportError.closed(name)) }
        }
        return TCPServerTransport(
            serverChannel: serverChannel, loop: loop, slot: slot, name: name, inbox: inbox, outbound: outbound)
    }

    /// Returns once a client is connected (at once if one already is). Throws
    /// ``TransportError/closed(_:)`` if the transport is closed first. Cancel the task to stop waiting.
    public func waitForClient() async throws {
        let loop = self.loop
        let slot = self.slot
        let name = self.name
        let future: EventLoopFuture<Void> = loop.flatSubmit {
            if slot.value.closed { return loop.makeFailedFuture(TransportError.closed(name)) }
            if slot.value.client != nil { return loop.makeSucceededVoidFuture() }
            let promise = loop.makePromise(of: Void.self)
            slot.value.waiters.append(promise)
            return promise.futureResult
        }
        try await withTaskCancellationHandler {
            try await future.get()
        } onCancel: {
            loop.execute {
                let waiters = slot.value.waiters
                slot.value.waiters = []
                waiters.forEach { $0.fail(CancellationError()) }
            }
        }
    }

    public var packets: AsyncThrowingStream<HCIPacket, any Error> { inbox.packets }

    public var packetBatches: AsyncThrowingStream<[HCIPacket], any Error> { inbox.packetBatches }

    public func send(_ packet: HCIPacket) async throws {
        try outbound.writer(name: name).enqueue([packet])
    }

    public func send(batch packets: [HCIPacket]) async throws {
        try sendImmediately(batch: packets)
    }

    /// True: a batch is queued for the event loop's next flush and the call returns.
    public var sendsImmediately: Bool { true }

    public func sendImmediately(batch packets: [HCIPacket]) throws(TransportError) {
        try outbound.writer(name: name).enqueue(packets)
    }

    /// Whether TCP_NODELAY is on for the connected client's socket (for tests); nil when no
    /// client is connected.
    func isClientNoDelayEnabled() async throws -> Bool? {
        let slot = self.slot
        guard let client = try await loop.submit({ slot.value.client }).get() else { return nil }
        return try await client.getOption(.tcpOption(.tcp_nodelay)).get() != 0
    }

    /// Writes raw bytes to the current client as they are (tests use it to split packets).
    func sendRaw(_ bytes: [UInt8]) async throws {
        try outbound.writer(name: name).enqueue(raw: bytes)
    }

    /// Flushes done on the current client's connection (tests: a batch is one flush); nil
    /// when no client is connected.
    var flushCount: Int? { try? outbound.writer(name: name).flushCount }

    public func close() async {
        inbox.finish()
        await outbound.close()
        let slot = self.slot
        let name = self.name
        let client = try? await loop.submit {
            slot.value.closed = true
            let waiters = slot.value.waiters
            slot.value.waiters = []
            waiters.forEach { $0.fail(TransportError.closed(name)) }
            return slot.value.client
        }.get()
        if let client = client ?? nil { try? await client.close().get() }
        try? await serverChannel.close().get()
    }
}

/// Runs `onDeparture` on the event loop when the client's channel goes inactive.
private final class ClientDepartureHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    private let onDeparture: () -> Void
    init(_ onDeparture: @escaping () -> Void) { self.onDeparture = onDeparture }
    func channelInactive(context: ChannelHandlerContext) {
        onDeparture()
        context.fireChannelInactive()
    }
}

/// The connected client's writer, for senders on any thread: set on the event loop when the
/// client is accepted; sending before that, or after ``close()``, throws.
private final class ClientWriterSlot: Sendable {
    private struct State {
        var writer: ChannelBatchWriter?
        var closed = false
    }

    private let state = Mutex(State())

    /// The client arrived.
    func connect(_ writer: ChannelBatchWriter) {
        state.withLock { $0.writer = $0.closed ? nil : writer }
    }

    /// The writer to the client; throws when the transport is closed or no client came yet.
    func writer(name: String) throws(TransportError) -> ChannelBatchWriter {
        try state.withLock { (state) throws(TransportError) -> ChannelBatchWriter in
            if state.closed { throw .closed(name) }
            guard let writer = state.writer else {
                throw .ioFailed("\(name): no controller has connected yet (nothing to send to)")
            }
            return writer
        }
    }

    /// No more sends; what was queued is written first.
    func close() async {
        let writer = state.withLock { state in
            state.closed = true
            return state.writer
        }
        await writer?.drain()
    }
}
