import BluetideHCI
import Logging

/// Turns the raw bytes a transport reads into packets on its stream: H4 framing of arbitrary
/// chunks, and the end of the stream on the first framing error.
///
/// Every byte-oriented transport (TCP, serial, the user channel) feeds its reads through one of
/// these, so partial reads, several packets per read and garbage behave the same everywhere.
struct H4PacketReceiver: Sendable {
    private var framer = H4Framer()
    private let continuation: AsyncThrowingStream<HCIPacket, any Error>.Continuation
    /// True once the stream has been finished (by an error or by `finish`); later bytes are dropped.
    private(set) var isFinished = false

    /// Framing errors (label `bluetide.transport`).
    private static let log = Logger(label: "bluetide.transport")

    init(continuation: AsyncThrowingStream<HCIPacket, any Error>.Continuation) {
        self.continuation = continuation
    }

    /// Frames `chunk` and yields every packet it completes. On a framing error, the packets
    /// completed before the garbage are yielded, then the stream finishes with the `H4FramingError`.
    /// Returns false once the stream is finished (the caller should stop reading and close).
    @discardableResult
    mutating func receive<C: Collection>(_ chunk: C) -> Bool where C.Element == UInt8 {
        guard !isFinished else { return false }
        do {
            for packet in try framer.append(chunk) { continuation.yield(packet) }
            // Garbage found after complete packets is reported by the framer on its next call:
            // surface it now rather than on the next read, which might never come.
            _ = try framer.append(EmptyCollection<UInt8>())
            return true
        } catch {
            Self.log.debug("H4 framing failed; the transport ends", metadata: ["error": "\(error)"])
            finish(throwing: error)
            return false
        }
    }

    /// Ends the stream: normally when `error` is nil.
    mutating func finish(throwing error: (any Error)? = nil) {
        guard !isFinished else { return }
        isFinished = true
        continuation.finish(throwing: error)
    }
}
