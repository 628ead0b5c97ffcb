import BluetideHCI
import NIOCore
import Synchronization

/// Writes packets to one NIO channel in H4 framing, batched: whatever is queued before the event
/// loop gets to it leaves in one write and one flush (one `writev`), and the caller never waits
/// for a write.
///
/// ``enqueue(_:)`` encodes the packets into a pending buffer under a lock and, when the buffer was
/// empty, asks the event loop once to write it. A failed write is remembered and closes the
/// channel (its reader then sees the end); once the channel is closed, enqueueing throws
/// ``TransportError/closed(_:)``, or the write error. HCI's own flow control (command credits,
/// ACL buffer credits) bounds what can be queued.
final class ChannelBatchWriter: Sendable {
    private struct State {
        /// Bytes waiting for the event loop; nil when no write is scheduled.
        var pending: ByteBuffer?
        /// Set when the channel closed or a write failed: nothing more is accepted.
        var failure: TransportError?
        /// Flushes done on the channel (for tests and benchmarks).
        var flushes = 0
        /// The last write handed to the channel, so closing can wait for it.
        var lastWrite: EventLoopFuture<Void>?
    }

    private let channel: any Channel
    private let name: String
    private let state = Mutex(State())

    /// Writes to `channel`; `name` is the transport spec or peer, for errors.
    init(channel: any Channel, name: String) {
        self.channel = channel
        self.name = name
        channel.closeFuture.whenComplete { [weak self] _ in
            self?.state.withLock { state in
                if state.failure == nil { state.failure = .closed(name) }
            }
        }
    }

    /// Queues `packets` in order and returns at once; they leave with the next flush.
    func enqueue(_ packets: [HCIPacket]) throws(TransportError) {
        try enqueue(byteCount: packets.reduce(0) { $0 + $1.h4Count }) { buffer in
            for packet in packets { buffer.writeH4(packet) }
        }
    }

    /// Queues one packet and returns at once; it leaves with the next flush.
    func enqueue(_ packet: HCIPacket) throws(TransportError) {
        try enqueue(byteCount: packet.h4Count) { $0.writeH4(packet) }
    }

    /// Queues raw bytes as they are (serial padding, tests that split or garble packets).
    func enqueue(raw bytes: [UInt8]) throws(TransportError) {
        try enqueue(byteCount: bytes.count) { $0.writeBytes(bytes) }
    }

    private func enqueue(byteCount: Int, _ write: (inout ByteBuffer) -> Void) throws(TransportError) {
        let schedule = try state.withLock { (state) throws(TransportError) -> Bool in
            if let failure = state.failure { throw failure }
            if state.pending == nil {
                var buffer = channel.allocator.buffer(capacity: max(byteCount, 1024))
                write(&buffer)
                state.pending = buffer
                return true
            }
            write(&state.pending!)
            return false
        }
        guard schedule else { return }
        if channel.eventLoop.inEventLoop {
            flushPending()
        } else {
            channel.eventLoop.execute { self.flushPending() }
        }
    }

    /// On the event loop: writes and flushes everything queued so far.
    private func flushPending() {
        let name = self.name
        let channel = self.channel
        guard let buffer = state.withLock({ state -> ByteBuffer? in
            defer { state.pending = nil }
            return state.pending
        }) else { return }
        let promise = channel.eventLoop.makePromise(of: Void.self)
        promise.futureResult.whenFailure { [weak self] error in
            let failure: TransportError = if let error = error as? ChannelError, error == .ioOnClosedChannel || error == .alreadyClosed {
                .closed(name)
            } else {
                .ioFailed("\(name): write failed: \(error)")
            }
            self?.state.withLock { state in
                if state.failure == nil { state.failure = failure }
            }
            channel.close(promise: nil)
        }
        state.withLock { state in
            state.flushes += 1
            state.lastWrite = promise.futureResult
        }
        channel.writeAndFlush(buffer, promise: promise)
    }

    /// Flushes done so far.
    var flushCount: Int { state.withLock { $0.flushes } }

    /// Refuses further packets and waits until what was queued has been written (or has failed),
    /// at most `limit`: a peer that stopped reading (a stalled controller) must not hold a close
    /// up for ever; closing the channel then fails what is still queued.
    func drain(within limit: TimeAmount = .seconds(1)) async {
        let closed: TransportError = .closed(name)
        state.withLock { state in
            if state.failure == nil { state.failure = closed }
        }
        // The scheduled flush (if any) runs before this on the loop; then its write is the last.
        guard let last = try? await channel.eventLoop.submit({ self.state.withLock { $0.lastWrite } }).get() else { return }
        // Both callbacks run on the channel's loop; a promise completed twice keeps the first.
        let done = channel.eventLoop.makePromise(of: Void.self)
        last.whenComplete { _ in done.succeed(()) }
        let timer = channel.eventLoop.scheduleTask(in: limit) { done.succeed(()) }
        _ = try? await done.futureResult.get()
        timer.cancel()
    }
}
