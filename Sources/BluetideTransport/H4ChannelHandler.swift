import BluetideHCI
import NIOCore

/// NIO inbound handler that frames the bytes of one byte-stream channel into HCI packets and ends
/// the packet stream when the channel ends: with ``TransportError/closedByPeer(_:)`` when the other
/// side goes away, with the `H4FramingError` on garbage (and closes the channel), or with
/// ``TransportError/ioFailed(_:)`` on an I/O error.
///
/// Lives on its channel's event loop only (NIO confines handlers), so it needs no locking.
final class H4ChannelHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private var receiver: H4PacketReceiver
    private let name: String

    /// `name` is the transport spec or peer, used in error messages.
    init(name: String, continuation: AsyncThrowingStream<HCIPacket, any Error>.Continuation) {
        self.name = name
        self.receiver = H4PacketReceiver(continuation: continuation)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = Self.unwrapInboundIn(data)
        if !receiver.receive(buffer.readableBytesView) {
            context.close(promise: nil)
        }
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

/// Writes packets to a NIO channel and maps NIO's errors onto ``TransportError``.
enum ChannelWriter {
    /// Writes `bytes` (one or more whole H4 packets) and flushes.
    static func write(_ bytes: [UInt8], to channel: any Channel, name: String) async throws {
        let buffer = channel.allocator.buffer(bytes: bytes)
        do {
            try await channel.writeAndFlush(buffer).get()
        } catch let error as ChannelError where error == .ioOnClosedChannel || error == .alreadyClosed {
            throw TransportError.closed(name)
        } catch {
            throw TransportError.ioFailed("\(name): write failed: \(error)")
        }
    }
}
