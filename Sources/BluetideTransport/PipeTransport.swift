import BluetideHCI

/// Two transport ends connected in process: what one end sends, the other receives, in order,
/// batch for batch. For tests: give one end to the host, drive the other as a scripted controller.
///
/// Closing one end finishes its own stream normally and the other end's stream with
/// ``TransportError/closedByPeer(_:)``; sending from either end then throws.
public final class PipeTransport: HCITransport {
    private let own: InboundPackets
    private let peer: InboundPackets
    /// Names this end in errors ("host" or "controller").
    public let name: String

    private init(name: String, own: InboundPackets, peer: InboundPackets) {
        self.name = name
        self.own = own
        self.peer = peer
    }

    /// A connected pair: `host` is what a host stack uses, `controller` plays the controller.
    public static func makePair() -> (host: PipeTransport, controller: PipeTransport) {
        let toHost = InboundPackets(name: "pipe host end")
        let toController = InboundPackets(name: "pipe controller end")
        return (
            PipeTransport(name: "pipe host end", own: toHost, peer: toController),
            PipeTransport(name: "pipe controller end", own: toController, peer: toHost)
        )
    }

    public var packets: AsyncThrowingStream<HCIPacket, any Error> { own.packets }

    public var packetBatches: AsyncThrowingStream<[HCIPacket], any Error> { own.packetBatches }

    public func send(_ packet: HCIPacket) async throws {
        try await send(batch: [packet])
    }

    /// Hands `packets` to the other end as one batch.
    public func send(batch packets: [HCIPacket]) async throws {
        guard !packets.isEmpty else {
            if peer.isFinished { throw TransportError.closed(name) }
            return
        }
        guard peer.deliver(packets) else { throw TransportError.closed(name) }
    }

    /// Ends this end's stream with `error`, as a failing transport would (for tests of failure paths).
    public func fail(with error: any Error) {
        own.finish(throwing: error)
    }

    public func close() async {
        own.finish()
        peer.finish(throwing: TransportError.closedByPeer(name))
    }
}
