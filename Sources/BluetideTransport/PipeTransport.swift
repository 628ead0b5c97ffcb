import BluetideHCI

/// Two transport ends connected in process: what one end sends, the other receives, in order.
/// For tests: give one end to the host, drive the other as a scripted controller.
///
/// Closing one end finishes its own stream normally and the other end's stream with
/// ``TransportError/closedByPeer(_:)``; sending from either end then throws.
public final class PipeTransport: HCITransport {
    public let packets: AsyncThrowingStream<HCIPacket, any Error>
    private let ownContinuation: AsyncThrowingStream<HCIPacket, any Error>.Continuation
    private let peerContinuation: AsyncThrowingStream<HCIPacket, any Error>.Continuation
    /// Names this end in errors ("host" or "controller").
    public let name: String

    private init(
        name: String, packets: AsyncThrowingStream<HCIPacket, any Error>,
        own: AsyncThrowingStream<HCIPacket, any Error>.Continuation,
        peer: AsyncThrowingStream<HCIPacket, any Error>.Continuation
    ) {
        self.name = name
        self.packets = packets
        self.ownContinuation = own
        self.peerContinuation = peer
    }

    /// A connected pair: `host` is what a host stack uses, `controller` plays the controller.
    public static func makePair() -> (host: PipeTransport, controller: PipeTransport) {
        let (hostPackets, toHost) = AsyncThrowingStream<HCIPacket, any Error>.makeStream()
        let (controllerPackets, toController) = AsyncThrowingStream<HCIPacket, any Error>.makeStream()
        return (
            PipeTransport(name: "pipe host end", packets: hostPackets, own: toHost, peer: toController),
            PipeTransport(name: "pipe controller end", packets: controllerPackets, own: toController, peer: toHost)
        )
    }

    public func send(_ packet: HCIPacket) async throws {
        if case .terminated = peerContinuation.yield(packet) {
            throw TransportError.closed(name)
        }
    }

    /// Ends this end's stream with `error`, as a failing transport would (for tests of failure paths).
    public func fail(with error: any Error) {
        ownContinuation.finish(throwing: error)
    }

    public func close() async {
        ownContinuation.finish()
        peerContinuation.finish(throwing: TransportError.closedByPeer(name))
    }
}
