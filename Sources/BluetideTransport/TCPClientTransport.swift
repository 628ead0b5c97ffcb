import BluetideHCI
import NIOCore
import NIOPosix

/// H4 over a TCP connection to a controller (`tcp-client:HOST:PORT`), e.g. a Bumble virtual
/// controller (`python -m bumble.apps.controllers tcp-server:_:9000 tcp-server:_:9001`) or an
/// emulator. TCP_NODELAY is on, so each batch leaves at once.
///
/// Reads and writes happen on the connection's NIO event loop: every read cycle becomes one
/// batch for the reader, and everything sent before the loop gets to it leaves in one flush.
public final class TCPClientTransport: HCITransport {
    private let inbox: InboundPackets
    private let writer: ChannelBatchWriter
    /// The connection (tests add handlers to watch it).
    let channel: any Channel
    /// The spec this transport was opened with, for messages.
    public let name: String

    private init(channel: any Channel, name: String, inbox: InboundPackets) {
        self.channel = channel
        self.name = name
        self.inbox = inbox
        self.writer = ChannelBatchWriter(channel: channel, name: name)
    }

    /// Connects to `host`:`port`. Throws ``TransportError/openFailed(_:)`` naming the address and
    /// the reason (refused, unknown host, ...).
    public static func connect(host: String, port: Int) async throws -> TCPClientTransport {
        let name = "tcp-client:\(host):\(port)"
        let inbox = InboundPackets(name: name)
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(10))
            // Each HCI packet must leave at once: with Nagle's algorithm a small packet waits for
            // the ACK of the previous one, and delayed ACKs add ~40 ms per packet (measured
            // against Bumble's controllers). Set explicitly, not left to the bootstrap's default.
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(H4ChannelHandler(name: name, inbox: inbox))
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: host, port: port).get()
        } catch {
            inbox.finish(throwing: error)
            throw TransportError.openFailed(
                "\(name): cannot connect (\(error)). Is the controller listening there? For a Bumble virtual "
                    + "controller run: python -m bumble.apps.controllers tcp-server:_:9000 tcp-server:_:9001")
        }
        return TCPClientTransport(channel: channel, name: name, inbox: inbox)
    }

    public var packets: AsyncThrowingStream<HCIPacket, any Error> { inbox.packets }

    public var packetBatches: AsyncThrowingStream<[HCIPacket], any Error> { inbox.packetBatches }

    public func send(_ packet: HCIPacket) async throws {
        try writer.enqueue([packet])
    }

    public func send(batch packets: [HCIPacket]) async throws {
        try writer.enqueue(packets)
    }

    /// True: a batch is queued for the event loop's next flush and the call returns.
    public var sendsImmediately: Bool { true }

    public func sendImmediately(batch packets: [HCIPacket]) throws(TransportError) {
        try writer.enqueue(packets)
    }

    /// Whether TCP_NODELAY is on for the socket (read back from the kernel; for tests).
    func isNoDelayEnabled() async throws -> Bool {
        try await channel.getOption(.tcpOption(.tcp_nodelay)).get() != 0
    }

    /// Writes raw bytes as they are (tests use it to split packets and to inject garbage).
    func sendRaw(_ bytes: [UInt8]) async throws {
        try writer.enqueue(raw: bytes)
    }

    /// Flushes done on the connection so far (tests: a batch is one flush).
    var flushCount: Int { writer.flushCount }

    public func close() async {
        inbox.finish()
        await writer.drain()
        try? await channel.close().get()
    }
}
