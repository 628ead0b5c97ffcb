import BluetideHCI
import Logging

/// Turns the raw bytes a transport reads into batches of packets for its reader: H4 framing of
/// arbitrary chunks, one batch per ``flush()``, and the end of the stream on the first framing
/// error.
///
/// Every byte-oriented transport (TCP, serial, the user channel) feeds its reads through one of
/// these, so partial reads, several packets per read and garbage behave the same everywhere.
struct H4PacketReceiver: Sendable {
    private var framer = H4Framer()
    private let inbox: InboundPackets
    /// Packets framed since the last ``flush()``.
    private var batch: [HCIPacket] = []
    /// True once the stream has been finished (by an error or by `finish`); later bytes are dropped.
    private(set) var isFinished = false

    /// Framing errors (label `bluetide.transport`).
    private static let log = Logger(label: "bluetide.transport")

    init(inbox: InboundPackets) {
        self.inbox = inbox
    }

    /// Frames `bytes` (borrowed for the call) into the pending batch. On a framing error, the
    /// packets completed before the garbage are delivered, then the stream finishes with the
    /// `H4FramingError`. Returns false once the stream is finished (stop reading and close).
    @discardableResult
    mutating func append(bytes: UnsafeRawBufferPointer) -> Bool {
        guard !isFinished else { return false }
        do {
            try framer.append(bytes: bytes, into: &batch)
            return true
        } catch {
            Self.log.debug("H4 framing failed; the transport ends", metadata: ["error": "\(error)"])
            finish(throwing: error)
            return false
        }
    }

    /// Delivers the packets framed since the last call as one batch (nothing when there are none).
    mutating func flush() {
        guard !batch.isEmpty else { return }
        inbox.deliver(batch)
        batch = []
        batch.reserveCapacity(8)
    }

    /// Frames `chunk` and delivers what it completes as one batch (one read, one batch).
    @discardableResult
    mutating func receive<C: Collection>(_ chunk: C) -> Bool where C.Element == UInt8 {
        let accepted = chunk.withContiguousStorageIfAvailable { append(bytes: UnsafeRawBufferPointer($0)) }
            ?? Array(chunk).withUnsafeBytes { append(bytes: $0) }
        flush()
        return accepted
    }

    /// Ends the stream, after the packets framed so far: normally when `error` is nil.
    mutating func finish(throwing error: (any Error)? = nil) {
        guard !isFinished else { return }
        isFinished = true
        flush()
        inbox.finish(throwing: error)
    }
}
