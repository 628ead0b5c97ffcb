import BluetideHCI
import Synchronization

/// What a transport has read from its controller, handed to its one reader as batches (one per
/// read) or packet by packet: the reader's first use of ``packetBatches`` or ``packets`` picks
/// the form, and what arrived before that is kept and delivered first.
///
/// Delivering a batch costs one lock and one stream hand-over, whatever its size, from any thread
/// (an event loop, a reader thread, a task).
final class InboundPackets: Sendable {
    private enum Mode {
        /// No reader yet: batches and the end are kept.
        case undecided(kept: [[HCIPacket]], end: End?)
        case packets(AsyncThrowingStream<HCIPacket, any Error>, AsyncThrowingStream<HCIPacket, any Error>.Continuation)
        case batches(AsyncThrowingStream<[HCIPacket], any Error>, AsyncThrowingStream<[HCIPacket], any Error>.Continuation)
    }

    /// How the stream ended before anybody read it.
    private enum End {
        case normally
        case failed(any Error)
        var error: (any Error)? { if case let .failed(error) = self { error } else { nil } }
    }

    private struct State {
        var mode = Mode.undecided(kept: [], end: nil)
        var finished = false
    }

    private let state = Mutex(State())
    /// Names the transport in the error a reader gets when it asks for both forms.
    private let name: String

    init(name: String) {
        self.name = name
    }

    /// True once the stream has ended (``finish(throwing:)``); later batches are dropped.
    var isFinished: Bool { state.withLock { $0.finished } }

    /// Hands `batch` (in arrival order) to the reader. Returns false when the stream has ended.
    @discardableResult
    func deliver(_ batch: [HCIPacket]) -> Bool {
        state.withLock { state in
            guard !state.finished else { return false }
            switch state.mode {
            case var .undecided(kept, end):
                state.mode = .undecided(kept: [], end: end)  // no second copy of `kept` while appending
                kept.append(batch)
                state.mode = .undecided(kept: kept, end: end)
            case let .packets(_, continuation):
                for packet in batch { continuation.yield(packet) }
            case let .batches(_, continuation):
                continuation.yield(batch)
            }
            return true
        }
    }

    /// Ends the stream: normally when `error` is nil. Only the first call counts.
    func finish(throwing error: (any Error)? = nil) {
        state.withLock { state in
            guard !state.finished else { return }
            state.finished = true
            switch state.mode {
            case let .undecided(kept, _):
                state.mode = .undecided(kept: kept, end: error.map { .failed($0) } ?? .normally)
            case let .packets(_, continuation):
                continuation.finish(throwing: error)
            case let .batches(_, continuation):
                continuation.finish(throwing: error)
            }
        }
    }

    /// The packets one by one (the reader's choice when it asks for this first).
    var packets: AsyncThrowingStream<HCIPacket, any Error> {
        state.withLock { state in
            switch state.mode {
            case let .packets(stream, _):
                return stream
            case .batches:
                return AsyncThrowingStream { $0.finish(throwing: self.bothFormsError) }
            case let .undecided(kept, end):
                let (stream, continuation) = AsyncThrowingStream<HCIPacket, any Error>.makeStream()
                for batch in kept { for packet in batch { continuation.yield(packet) } }
                if let end { continuation.finish(throwing: end.error) }
                state.mode = .packets(stream, continuation)
                return stream
            }
        }
    }

    /// The packets in batches as they were read (the reader's choice when it asks for this first).
    var packetBatches: AsyncThrowingStream<[HCIPacket], any Error> {
        state.withLock { state in
            switch state.mode {
            case let .batches(stream, _):
                return stream
            case .packets:
                return AsyncThrowingStream { $0.finish(throwing: self.bothFormsError) }
            case let .undecided(kept, end):
                let (stream, continuation) = AsyncThrowingStream<[HCIPacket], any Error>.makeStream()
                for batch in kept { continuation.yield(batch) }
                if let end { continuation.finish(throwing: end.error) }
                state.mode = .batches(stream, continuation)
                return stream
            }
        }
    }

    private var bothFormsError: TransportError {
        .ioFailed("\(name): packets and packetBatches were both asked for; a transport has one reader, which uses one of them")
    }
}
