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
        /// Counts readings, sleeps and advances: ``advancing(step:yields:_:)`` moves time only
        /// after a scheduling window in which nobody used the clock.
        var activity: UInt64 = 0
        var waiters: [(id: UInt64, count: Int, continuation: CheckedContinuation<Void, Never>)] = []
        /// Waiters cancelled before they were installed.
        var cancelledWaiters: Set<UInt64> = []
        /// Sleepers that ``advance(by:)`` woke and that have not run again yet: time must not
        /// move on before they have seen the instant they were woken at.
        var woken: Set<UInt64> = []

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
    public var now: Instant {
        state.withLock { state in
            state.activity &+= 1
            return state.now
        }
    }

    /// The clock has no resolution limit.
    public var minimumResolution: Duration { .zero }

    /// Number of tasks currently sleeping on this clock.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// Suspends until the clock is advanced to `deadline` (or the task is cancelled).
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            state.activity &+= 1
            return state.nextID
        }
        // Running again: the sleeper has seen the instant it was woken at.
        defer { state.withLock { state in if state.woken.remove(id) != nil { state.activity &+= 1 } } }
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
            state.activity &+= 1
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }.sorted { $0.deadline < $1.deadline }
            state.sleepers.removeAll { $0.deadline <= now }
            state.woken.formUnion(due.map(\.id))
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Moves the clock to the earliest sleeper's deadline and wakes it (and any sleeper due at
    /// the same instant). Returns false when nobody sleeps.
    @discardableResult
    public func advanceToNextDeadline() -> Bool {
        guard let (now, next) = state.withLock({ state in state.sleepers.map(\.deadline).min().map { (state.now, $0) } }) else {
            return false
        }
        advance(by: now < next ? now.duration(to: next) : .zero)
        return true
    }

    /// Returns once at least `count` tasks sleep on this clock (so a test can advance knowing
    /// the sleeps it expects have started), or when the waiting task is cancelled.
    public func waitForSleepers(_ count: Int = 1) async {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if state.cancelledWaiters.remove(id) != nil || state.sleepers.count >= count { return true }
                    state.waiters.append((id, count, continuation))
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                if let index = state.waiters.firstIndex(where: { $0.id == id }) { return state.waiters.remove(at: index).continuation }
                state.cancelledWaiters.insert(id)
                return nil
            }
            waiter?.resume()
        }
    }

    /// Runs `body` in virtual time: while it runs, the clock moves towards the earliest
    /// sleeper's deadline whenever the work already queued to run has had its turn and nobody
    /// used the clock meanwhile. Every sleep on this clock — time limits, retry delays,
    /// reconnect back-offs, a virtual link's advertising intervals and latency — then passes in
    /// almost no wall time, in deadline order; a body that waits for something that never comes
    /// meets its own time limits (on this clock) instead of hanging.
    ///
    /// "The queued work has had its turn" is judged by scheduling, never by wall time: the
    /// driver runs at the caller's priority, yields `yields` times, and moves time only when no
    /// task read the clock, slept on it or was woken by it during those yields, and every sleeper
    /// it woke has run again (however late a starved machine runs it); and it moves at
    /// most `step` at once, so work still in flight on another thread sees at most a few steps
    /// pass (a time limit of seconds needs hundreds of quiet windows to pass). A busy machine
    /// makes the run slower, not different.
    ///
    /// Work in flight can also hide from the yields: a job that a pool thread is running when
    /// the operating system takes that thread off the CPU (two CPU hogs beside the tests do
    /// that) neither waits in the queue nor uses the clock. So virtual time runs at most
    /// `maximumSpeed` times faster than real time, after a burst of at most `burst`: a 10 s
    /// time limit then needs about 90 ms of real time to pass at the default 100×, far longer
    /// than such a pause. Nil `maximumSpeed` lets time run as fast as the quiet windows allow.
    public func advancing<T: Sendable>(
        step: Duration = .milliseconds(10), yields: Int = 8, maximumSpeed: Double? = 100, burst: Duration = .seconds(1),
        _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            // The driver runs at the body's own priority, so that it waits in the same queue as
            // the body's work: each yield puts it behind every job already queued there. (At a
            // lower priority it ran on its own thread beside a queue full of other tests' jobs,
            // and moved time on while the body's work was still waiting for a thread.)
            group.addTask {
                var limit = maximumSpeed.map { VirtualSpeedLimit(speed: $0, burst: burst) }
                while !Task.isCancelled {
                    let before = self.state.withLock { $0.activity }
                    for _ in 0..<yields { await Task.yield() }
                    let quiet = self.state.withLock { state -> (now: Instant, next: Instant)?? in
                        guard state.activity == before, state.woken.isEmpty else { return .some(nil) }
                        guard let next = state.sleepers.map(\.deadline).min() else { return nil }
                        return (state.now, next)
                    }
                    switch quiet {
                    case .none:
                        await self.waitForSleepers(1)
                    case .some(.none):
                        continue
                    case let .some(.some((now, next))):
                        let amount = now < next ? min(now.duration(to: next), step) : .zero
                        if let wait = limit?.wait(before: amount, at: ContinuousClock.now) {
                            // Ahead of `maximumSpeed`: let real time catch up, then look again.
                            try? await Task.sleep(for: wait)
                            continue
                        }
                        self.advance(by: amount)
                    }
                }
                return nil
            }
            defer { group.cancelAll() }
            while let result = try await group.next() {
                if let value = result { return value }
            }
            throw CancellationError()
        }
    }
}

/// The most virtual time ``ManualClock/advancing(step:yields:maximumSpeed:burst:_:)`` may let
/// pass for the real time that passed: a token bucket of virtual time, refilled at `speed`
/// virtual seconds per real second and holding at most `burst`.
struct VirtualSpeedLimit {
    let speed: Double
    let burst: Double
    /// Virtual seconds that may pass now.
    private var allowance: Double
    private var last: ContinuousClock.Instant?

    init(speed: Double, burst: Duration) {
        self.speed = speed.isFinite && speed > 0 ? speed : 1
        self.burst = max(0, burst.inSeconds)
        allowance = self.burst
    }

    /// Nil when `amount` of virtual time may pass at `now` (it is then taken from the
    /// allowance); otherwise the real time to wait first (at most 5 ms, then ask again).
    mutating func wait(before amount: Duration, at now: ContinuousClock.Instant) -> Duration? {
        if let last { allowance = min(burst, allowance + now.seconds(since: last) * speed) }
        last = now
        let needed = amount.inSeconds
        // A full allowance always lets one amount pass (an amount above `burst` included).
        if needed <= allowance + 1e-9 || needed <= 0 || allowance >= burst {
            allowance -= needed
            return nil
        }
        return .microseconds(min(5_000, max(100, Int64((needed - allowance) / speed * 1_000_000))))
    }
}
