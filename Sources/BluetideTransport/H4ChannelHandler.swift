import BluetideHCI
import NIOCore

/// NIO inbound handler that frames the bytes of one byte-stream channel into HCI packets, one
/// batch per read cycle (every packet completed by the reads before `channelReadComplete`), and
/// ends the stream when the channel ends: with ``TransportError/closedByPeer(_:)`` when the other
/// side goes away, with the `H4FramingError` on garbage (and closes the channel), or with
/// ``TransportError/ioFailed(_:)`` on an I/O error.
///
/// Frames straight from NIO's read buffer (no copy but the packets' payloads). Lives on its
/// channel's event loop only (NIO confines handlers), so it needs no locking.
final class H4ChannelHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private var receiver: H4PacketReceiver
    private let name: String

    /// `name` is the transport spec or peer, used in error messages.
    init(name: String, inbox: InboundPackets) {
        self.name = name
        self.receiver = H4PacketReceiver(inbox: inbox)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = Self.unwrapInboundIn(data)
        let accepted = buffer.withUnsafeReadableBytes { receiver.append(bytes: $0) }
        if !accepted {
            context.close(promise: nil)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        receiver.flush()
        context.fireChannelReadComplete()
    }

    func channelInactive(context: ChannelHandlerContext) {
        // After a local close() the stream is already finished normally and this is ignored.
        receiver.finish(throwing: TransportError.closedByPeer(name))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        receiver.finish(throwing: TransportError.ioFailed("\(name): \(error)"))
        context.close(promise: nil)
    }
}
