import Synchronization

/// A clock that only moves when told to: tests (and fast simulations) advance it explicitly,
/// and every `sleep` on it resumes when the clock reaches its deadline — no real waiting.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
public final class ManualClock: Clock, Sendable {
    /// A point on the manual clock: the time elapsed since the clock's zero.
    public struct Instant: InstantProtocol, CustomStringConvertible {
        /// Time since the clock's zero.
        public var offset: Duration

        public init(offset: Duration) {
            self.offset = offset
        }

        public func advanced(by duration: Duration) -> Instant {
            Instant(offset: offset + duration)
        }

        public func duration(to other: Instant) -> Duration {
            other.offset - offset
        }

        public static func < (lhs: Instant, rhs: Instant) -> Bool {
            lhs.offset < rhs.offset
        }

        public var description: String { "\(offset)" }
    }

    private struct Sleeper {
        var id: UInt64
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [Sleeper] = []
        var cancelled: Set<UInt64> = []
        var nextID: UInt64 = 0
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

        /// Resumes the waiters satisfied by the current number of sleepers.
        mutating func notifyWaiters() {
            let ready = waiters.filter { sleepers.count >= $0.count }
            waiters.removeAll { sleepers.count >= $0.count }
            for waiter in ready { waiter.continuation.resume() }
        }
    }

    private let state = Mutex(State())

    public init() {}

    /// The current instant.
    public var now: Instant { state.withLock { $0.now } }

    /// The clock has no resolution limit.
    public var minimumResolution: Duration { .zero }

    /// Number of tasks currently sleeping on this clock.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// Suspends until the clock is advanced to `deadline` (or the task is cancelled).
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome { case wait, due, cancelled }
                let outcome = state.withLock { state -> Outcome in
                    if state.cancelled.remove(id) != nil { return .cancelled }
                    if deadline <= state.now { return .due }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    state.notifyWaiters()
                    return .wait
                }
                switch outcome {
                case .wait: break
                case .due: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                if let index = state.sleepers.firstIndex(where: { $0.id == id }) {
                    return state.sleepers.remove(at: index)
                }
                state.cancelled.insert(id)
                return nil
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock forward by `duration`, waking every sleeper whose deadline is reached
    /// (earliest first).
    public func advance(by duration: Duration) {
        let due = state.withLock { state -> [Sleeper] in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }.sorted { $0.deadline < $1.deadline }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Moves the clock to the earliest sleeper's deadline and wakes it (and any sleeper due at
    /// the same instant). Returns false when nobody sleeps.
    @discardableResult
    public func advanceToNextDeadline() -> Bool {
        guard let next = state.withLock({ $0.sleepers.map(\.deadline).min() }) else { return false }
        let now = self.now
        advance(by: now < next ? now.duration(to: next) : .zero)
        return true
    }

    /// Returns once at least `count` tasks sleep on this clock (so a test can advance knowing
    /// the sleeps it expects have started).
    public func waitForSleepers(_ count: Int = 1) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.sleepers.count >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }
}
