import Synchronization

/// Received bytes waiting for the reader of ``SerialLink/bytes``: a bounded buffer whose fill
/// level holds the link's writer back.
///
/// Policy (docs/uart.md): while more than ``highWaterMark`` bytes wait for the reader, the link
/// writes nothing more to the device (so ``SerialLink/send(_:)`` waits at its own small queue and
/// the pipe, pty and TCP bridges stop reading their input); writing resumes once the reader has
/// taken the level down to ``lowWaterMark``. A device that echoes what it gets therefore never
/// sends more than the buffer holds. Bytes a device sends on its own while ``limit`` bytes
/// already wait are dropped (BLE notifications cannot be paused) and counted in ``dropped``.
///
/// The reader pulls: a chunk leaves the buffer only when the consumer asks for the next one.
final class ReceiveBuffer: Sendable {
    /// Most bytes held; chunks arriving beyond it are dropped.
    let limit: Int
    /// Above this many held bytes the writer pauses.
    let highWaterMark: Int
    /// The writer resumes once the held bytes are down to this.
    let lowWaterMark: Int

    private struct State {
        var chunks: [[UInt8]] = []
        var head = 0
        var held = 0
        var dropped = 0
        var finished = false
        var reader: CheckedContinuation<[UInt8]?, Never>?
        var readerID = 0
        var roomWaiters: [CheckedContinuation<Void, Never>] = []
        /// Set once the held bytes passed the high-water mark, until they are down to low water.
        var full = false
    }
    private let state = Mutex(State())

    /// A buffer of at most `limit` bytes (at least 1 KB): high water at half, low water at a quarter.
    init(limit: Int) {
        self.limit = max(limit, 1024)
        highWaterMark = self.limit / 2
        lowWaterMark = self.limit / 4
    }

    /// Bytes waiting for the reader.
    var heldBytes: Int { state.withLock { $0.held } }
    /// Bytes dropped because the buffer was full.
    var dropped: Int { state.withLock { $0.dropped } }

    /// Adds a received chunk for the reader; false when it was dropped (buffer full or finished).
    @discardableResult
    func push(_ chunk: [UInt8]) -> Bool {
        guard !chunk.isEmpty else { return true }
        enum Outcome { case handed(CheckedContinuation<[UInt8]?, Never>), kept, dropped }
        let outcome = state.withLock { s -> Outcome in
            if s.finished { return .dropped }
            if let reader = s.reader {
                s.reader = nil
                return .handed(reader)
            }
            if s.held + chunk.count > limit {
                s.dropped += chunk.count
                return .dropped
            }
            s.chunks.append(chunk)
            s.held += chunk.count
            if s.held > highWaterMark { s.full = true }
            return .kept
        }
        switch outcome {
        case let .handed(reader):
            reader.resume(returning: chunk)
            return true
        case .kept: return true
        case .dropped: return false
        }
    }

    /// The next chunk, waiting for one; nil once finished and empty, or when the waiting task is
    /// cancelled.
    func next() async -> [UInt8]? {
        let id = state.withLock { s -> Int in
            s.readerID += 1
            return s.readerID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[UInt8]?, Never>) in
                enum Outcome { case chunk([UInt8], [CheckedContinuation<Void, Never>]), end, wait }
                let outcome = state.withLock { s -> Outcome in
                    if s.head < s.chunks.count {
                        let chunk = s.chunks[s.head]
                        s.chunks[s.head] = []
                        s.head += 1
                        s.held -= chunk.count
                        if s.head == s.chunks.count {
                            s.chunks.removeAll(keepingCapacity: s.chunks.count <= 256)
                            s.head = 0
                        } else if s.head >= 1024 {
                            s.chunks.removeFirst(s.head)
                            s.head = 0
                        }
                        var woken: [CheckedContinuation<Void, Never>] = []
                        if s.full, s.held <= lowWaterMark {
                            s.full = false
                            woken = s.roomWaiters
                            s.roomWaiters = []
                        }
                        return .chunk(chunk, woken)
                    }
                    if s.finished || Task.isCancelled { return .end }
                    s.reader = continuation
                    s.readerID = id
                    return .wait
                }
                switch outcome {
                case let .chunk(chunk, woken):
                    for waiter in woken { waiter.resume() }
                    continuation.resume(returning: chunk)
                case .end: continuation.resume(returning: nil)
                case .wait: break
                }
            }
        } onCancel: {
            let reader = state.withLock { s -> CheckedContinuation<[UInt8]?, Never>? in
                guard s.readerID == id, let reader = s.reader else { return nil }
                s.reader = nil
                return reader
            }
            reader?.resume(returning: nil)
        }
    }

    /// Returns once the writer may go on: at once unless the buffer passed its high-water mark
    /// and has not been read down to low water yet; always at once after ``finish()``.
    func waitForRoom() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { s -> Bool in
                if !s.full || s.finished { return true }
                s.roomWaiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Whether the writer would wait now.
    var isFull: Bool { state.withLock { $0.full && !$0.finished } }

    /// No more chunks: the reader gets what is held, then nil; the writer is released.
    func finish() {
        let (reader, waiters) = state.withLock { s -> (CheckedContinuation<[UInt8]?, Never>?, [CheckedContinuation<Void, Never>]) in
            s.finished = true
            let reader = s.head < s.chunks.count ? nil : s.reader
            if reader != nil { s.reader = nil }
            defer { s.roomWaiters = [] }
            return (reader, s.roomWaiters)
        }
        reader?.resume(returning: nil)
        for waiter in waiters { waiter.resume() }
    }
}
