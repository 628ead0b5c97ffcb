import Synchronization

/// Received bytes waiting for the reader of ``SerialLink/bytes``: a bounded buffer whose fill
/// level holds the link's writer back.
///
/// Policy (docs/uart.md): while more than ``highWaterMark`` bytes wait for the reader, the link
/// writes nothing more to the device (so ``SerialLink/send(_:)`` waits at its own small queue and
/// the pipe, pty and TCP bridges stop reading their input); writing resumes once the reader has
/// taken the level down to ``lowWaterMark``. Bytes a device sends on its own while ``limit``
/// bytes already wait are dropped (BLE notifications cannot be paused) and counted in ``dropped``.
///
/// The level alone does not see bytes still on their way back: an echo in the device, on the
/// link or in this host's queues (on a busy machine the task that receives can lag the one that
/// writes by many kilobytes). So while the reader is not waiting for data (it stopped, or is busy
/// with the last chunk), the writer also keeps what it wrote beyond what came back (the
/// *outstanding* bytes) within ``headroom`` = `limit − highWaterMark`: a device that echoes what
/// it gets then never sends more than the buffer holds, however the tasks are scheduled. A reader
/// that waits for data lets the writer go freely, so a device that answers little or nothing is
/// never held back by a reader that keeps up.
///
/// The reader pulls: a chunk leaves the buffer only when the consumer asks for the next one.
final class ReceiveBuffer: Sendable {
    private typealias LevelWaiter = (id: Int, condition: @Sendable (ReceiveLevel) -> Bool, continuation: CheckedContinuation<ReceiveLevel, Never>)
    /// Most bytes held; chunks arriving beyond it are dropped.
    let limit: Int
    /// Above this many held bytes the writer pauses.
    let highWaterMark: Int
    /// The writer resumes once the held bytes are down to this.
    let lowWaterMark: Int
    /// Most bytes written beyond those received while the reader is not waiting for data.
    let headroom: Int

    private struct State {
        var chunks: [[UInt8]] = []
        var head = 0
        var held = 0
        var dropped = 0
        var finished = false
        var reader: CheckedContinuation<[UInt8]?, Never>?
        var readerID = 0
        var roomWaiters: [(bytes: Int, continuation: CheckedContinuation<Void, Never>)] = []
        /// Set once the held bytes passed the high-water mark, until they are down to low water.
        var full = false
        /// Bytes the writer wrote, and bytes the device sent (kept or dropped), since the start.
        var written = 0
        var received = 0
        var levelWaiters: [LevelWaiter] = []
        var nextLevelWaiter = 0

        var level: ReceiveLevel { ReceiveLevel(unread: held, dropped: dropped, written: written, received: received) }

        /// Whether the writer may write `bytes` more now (see ``ReceiveBuffer``).
        func hasRoom(for bytes: Int, headroom: Int) -> Bool {
            if finished { return true }
            if full { return false }
            if reader != nil { return true }
            return max(written - received, 0) + bytes <= headroom
        }

        /// Takes the room waiters that may go on now.
        mutating func wakeable(headroom: Int) -> [CheckedContinuation<Void, Never>] {
            guard !roomWaiters.isEmpty else { return [] }
            var woken: [CheckedContinuation<Void, Never>] = []
            var staying: [(bytes: Int, continuation: CheckedContinuation<Void, Never>)] = []
            for waiter in roomWaiters {
                if hasRoom(for: waiter.bytes, headroom: headroom) { woken.append(waiter.continuation) } else { staying.append(waiter) }
            }
            roomWaiters = staying
            return woken
        }
    }
    private let state = Mutex(State())

    /// A buffer of at most `limit` bytes (at least 1 KB): high water at half, low water at a quarter.
    init(limit: Int) {
        self.limit = max(limit, 1024)
        highWaterMark = self.limit / 2
        lowWaterMark = self.limit / 4
        headroom = self.limit - self.limit / 2
    }

    /// Bytes waiting for the reader.
    var heldBytes: Int { state.withLock { $0.held } }
    /// Bytes dropped because the buffer was full.
    var dropped: Int { state.withLock { $0.dropped } }

    /// Waits until `condition` holds for the counters (checked after every change) or the buffer
    /// is finished, and returns them; returns at once when the waiting task is cancelled.
    func waitForLevel(where condition: @escaping @Sendable (ReceiveLevel) -> Bool) async -> ReceiveLevel {
        let id = state.withLock { s -> Int in
            s.nextLevelWaiter += 1
            return s.nextLevelWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<ReceiveLevel, Never>) in
                let now = state.withLock { s -> ReceiveLevel? in
                    if s.finished || Task.isCancelled || condition(s.level) { return s.level }
                    s.levelWaiters.append((id, condition, continuation))
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            let waiter = state.withLock { s -> (CheckedContinuation<ReceiveLevel, Never>, ReceiveLevel)? in
                guard let index = s.levelWaiters.firstIndex(where: { $0.id == id }) else { return nil }
                return (s.levelWaiters.remove(at: index).continuation, s.level)
            }
            if let (continuation, level) = waiter { continuation.resume(returning: level) }
        }
    }

    /// Resumes the level waiters whose condition holds now (all of them once finished).
    private func levelChanged() {
        let ready = state.withLock { s -> [(CheckedContinuation<ReceiveLevel, Never>, ReceiveLevel)] in
            guard !s.levelWaiters.isEmpty else { return [] }
            let level = s.level
            var ready: [(CheckedContinuation<ReceiveLevel, Never>, ReceiveLevel)] = []
            s.levelWaiters.removeAll { waiter in
                guard s.finished || waiter.condition(level) else { return false }
                ready.append((waiter.continuation, level))
                return true
            }
            return ready
        }
        for (continuation, level) in ready { continuation.resume(returning: level) }
    }

    /// Adds a received chunk for the reader; false when it was dropped (buffer full or finished).
    @discardableResult
    func push(_ chunk: [UInt8]) -> Bool {
        defer { levelChanged() }
        guard !chunk.isEmpty else { return true }
        enum Outcome { case handed(CheckedContinuation<[UInt8]?, Never>), kept, dropped }
        let (outcome, woken) = state.withLock { s -> (Outcome, [CheckedContinuation<Void, Never>]) in
            if s.finished { return (.dropped, []) }
            s.received += chunk.count
            if let reader = s.reader {
                s.reader = nil
                return (.handed(reader), s.wakeable(headroom: headroom))
            }
            if s.held + chunk.count > limit {
                s.dropped += chunk.count
                return (.dropped, s.wakeable(headroom: headroom))
            }
            s.chunks.append(chunk)
            s.held += chunk.count
            if s.held > highWaterMark { s.full = true }
            return (.kept, s.wakeable(headroom: headroom))
        }
        for waiter in woken { waiter.resume() }
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
                enum Outcome { case chunk([UInt8], [CheckedContinuation<Void, Never>]), end, wait([CheckedContinuation<Void, Never>]) }
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
                        if s.full, s.held <= lowWaterMark { s.full = false }
                        return .chunk(chunk, s.wakeable(headroom: headroom))
                    }
                    if s.finished || Task.isCancelled { return .end }
                    s.reader = continuation
                    s.readerID = id
                    // A reader waiting for data lets the writer go on.
                    return .wait(s.wakeable(headroom: headroom))
                }
                switch outcome {
                case let .chunk(chunk, woken):
                    for waiter in woken { waiter.resume() }
                    levelChanged()
                    continuation.resume(returning: chunk)
                case .end: continuation.resume(returning: nil)
                case let .wait(woken):
                    for waiter in woken { waiter.resume() }
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

    /// Returns once the writer may write `bytes` more (see ``ReceiveBuffer``): at once unless
    /// the buffer passed its high-water mark and has not been read down to low water yet, or
    /// the reader is not waiting and `bytes` would take the outstanding bytes past ``headroom``;
    /// always at once after ``finish()``. The caller then reports the write with ``wrote(_:)``.
    func waitForRoom(toWrite bytes: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { s -> Bool in
                if s.hasRoom(for: bytes, headroom: headroom) { return true }
                s.roomWaiters.append((bytes, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Counts `bytes` handed to the device (before the write, so an echo that comes back
    /// first is never counted as more than was written).
    func wrote(_ bytes: Int) {
        state.withLock { $0.written += bytes }
        levelChanged()
    }

    /// Whether the writer could write `bytes` more now without waiting.
    func hasRoom(toWrite bytes: Int) -> Bool {
        state.withLock { $0.hasRoom(for: bytes, headroom: headroom) }
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
            return (reader, s.roomWaiters.map(\.continuation))
        }
        reader?.resume(returning: nil)
        for waiter in waiters { waiter.resume() }
        levelChanged()
    }
}

/// A serial link's receive counters at one moment (``SerialLink/waitForReceiveLevel(where:)``).
public struct ReceiveLevel: Sendable, Equatable {
    /// Received bytes waiting for the reader of ``SerialLink/bytes``.
    public var unread: Int
    /// Received bytes dropped because the buffer was full.
    public var dropped: Int
    /// Bytes handed to the device since the link was made (counted as each write starts).
    public var written: Int
    /// Bytes the device sent since the link was made: kept, handed to the reader or dropped.
    public var received: Int
}
