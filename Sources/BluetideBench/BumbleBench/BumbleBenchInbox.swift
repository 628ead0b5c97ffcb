import BluetideSupport
import Foundation
import Synchronization

/// Packets from the peer, stamped with their arrival time as the stack hands them over, and
/// taken one at a time with a timeout. Arrival times are taken at push, so a packet that waits
/// in the inbox (while the sender is still busy sending) keeps its true arrival time.
///
/// Timeouts cost no task per packet: one watchdog task sleeps until the waiting reader's
/// deadline, and since each wait's deadline is later than the last, a reader that keeps getting
/// packets costs one watchdog wake-up per timeout period. (A task per wait, cancelled when the
/// packet came, kept its sleep's memory until the sleep's deadline: at 15 000 packets/s and a
/// 10 s stall timeout, 60 MB.)
final class BumbleBenchInbox: Sendable {
    /// Where the inbox reads the time (arrival stamps, deadlines) and how its watchdog waits.
    struct TimeSource: Sendable {
        /// The current time, seconds.
        let now: @Sendable () -> Double
        /// Suspends until `now()` reaches the given time, seconds (throws when cancelled).
        let sleepUntil: @Sendable (Double) async throws -> Void

        /// The monotonic clock (``BumbleBenchInbox/now()``) and real sleeps: what the bench runs on.
        static let system = TimeSource(now: { BumbleBenchInbox.now() }) { deadline in
            let seconds = deadline - BumbleBenchInbox.now()
            if seconds > 0 { try await Task.sleep(for: .microseconds(Int64((seconds * 1_000_000).rounded(.up)))) }
        }

        /// A clock that moves only when `clock` is advanced (tests): no real waiting.
        static func manual(_ clock: ManualClock) -> TimeSource {
            TimeSource(now: { clock.now.offset.inSeconds }) { deadline in
                try await clock.sleep(until: ManualClock.Instant(offset: .seconds(deadline)))
            }
        }
    }

    /// One packet and when it arrived (``BumbleBenchInbox/now()`` seconds).
    struct Arrival: Sendable {
        let bytes: [UInt8]
        let time: Double
    }

    /// Why ``next(timeout:)`` returned no packet.
    enum Failure: Error, Equatable, Sendable {
        /// Nothing arrived within the timeout, seconds.
        case stalled(seconds: Double)
        /// The link ended (with what the stack said).
        case linkLost(String)

        /// True for ``linkLost(_:)``.
        var isLinkLoss: Bool { if case .linkLost = self { true } else { false } }
    }

    /// The one reader waiting for a packet.
    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Arrival, any Error>
        /// When it stops waiting (``now()`` seconds), and the timeout that set it; nil: never.
        let deadline: Double?
        let timeout: Double
    }

    private struct State {
        /// Packets not taken yet: `queue[head...]`.
        var queue: [Arrival] = []
        var head = 0
        var ended: String?
        var waiter: Waiter?
        var nextID: UInt64 = 0
        /// A cancellation that came before its waiter was registered.
        var cancelledID: UInt64?
        /// The watchdog task and the time it sleeps until; nil when none runs.
        var watchdog: Task<Void, Never>?
        var watchdogWake: Double?
        /// Watchdog tasks started so far (tests check that waits do not start one each).
        var watchdogsStarted = 0
    }

    private let state = Mutex(State())
    private let time: TimeSource

    /// An empty inbox stamping arrivals and timing waits with `time`.
    init(time: TimeSource = .system) {
        self.time = time
    }

    /// The monotonic clock every bench time is read from, seconds.
    static func now() -> Double { ProcessInfo.processInfo.systemUptime }

    /// Watchdog tasks started so far: about one per timeout period while a reader keeps waiting,
    /// not one per packet.
    var watchdogsStarted: Int { state.withLock { $0.watchdogsStarted } }

    /// Whether a reader is waiting in ``next(timeout:)`` (tests wait for it instead of sleeping).
    var hasWaiter: Bool { state.withLock { $0.waiter != nil } }

    /// Packets queued and not taken yet.
    var queuedCount: Int { state.withLock { $0.queue.count - $0.head } }

    /// Adds a packet that arrived now (called from the stack's delivery path).
    func push(_ bytes: [UInt8]) {
        let arrival = Arrival(bytes: bytes, time: time.now())
        let waiter = state.withLock { state -> Waiter? in
            guard state.ended == nil else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.queue.append(arrival)
            return nil
        }
        waiter?.continuation.resume(returning: arrival)
    }

    /// Ends the inbox: packets already queued are still handed out, then ``Failure/linkLost(_:)``.
    func end(_ reason: String) {
        let (waiter, watchdog) = state.withLock { state -> (Waiter?, Task<Void, Never>?) in
            if state.ended == nil { state.ended = reason }
            defer {
                state.waiter = nil
                state.watchdog = nil
                state.watchdogWake = nil
            }
            return (state.waiter, state.watchdog)
        }
        watchdog?.cancel()
        waiter?.continuation.resume(throwing: Failure.linkLost(reason))
    }

    /// The next packet; throws ``Failure/stalled(seconds:)`` when none arrives within `timeout`
    /// seconds (nil waits for ever), ``Failure/linkLost(_:)`` once the link ended and the queue
    /// is empty, or `CancellationError` when the calling task is cancelled.
    func next(timeout: Double?) async throws -> Arrival {
        // Most takes find a packet queued: no continuation, no timer.
        let first = state.withLock { state -> First in
            if let arrival = Self.takeQueued(&state) { return .arrival(arrival) }
            if let reason = state.ended { return .failure(.linkLost(reason)) }
            state.nextID &+= 1
            return .wait(id: state.nextID)
        }
        let id: UInt64
        switch first {
        case let .arrival(arrival): return arrival
        case let .failure(failure): throw failure
        case let .wait(waitID): id = waitID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let immediate = state.withLock { state -> Result<Arrival, any Error>? in
                    if let arrival = Self.takeQueued(&state) { return .success(arrival) }
                    if let reason = state.ended { return .failure(Failure.linkLost(reason)) }
                    if Task.isCancelled || state.cancelledID == id {
                        state.cancelledID = nil
                        return .failure(CancellationError())
                    }
                    let deadline = timeout.map { time.now() + max($0, 0) }
                    state.waiter = Waiter(id: id, continuation: continuation, deadline: deadline, timeout: timeout ?? 0)
                    if let deadline { armWatchdog(&state, until: deadline) }
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            fail(id, CancellationError())
        }
    }

    /// What ``next(timeout:)`` finds before it waits.
    private enum First {
        case arrival(Arrival)
        case failure(Failure)
        /// Nothing yet: wait as waiter `id`.
        case wait(id: UInt64)
    }

    /// Takes the oldest queued packet, if any; keeps the queue's storage bounded by what is
    /// queued (the taken prefix is dropped once it outweighs the rest).
    private static func takeQueued(_ state: inout State) -> Arrival? {
        guard state.head < state.queue.count else { return nil }
        let arrival = state.queue[state.head]
        state.head += 1
        if state.head == state.queue.count {
            state.queue.removeAll(keepingCapacity: true)
            state.head = 0
        } else if state.head >= 1024, state.head * 2 >= state.queue.count {
            state.queue.removeSubrange(..<state.head)
            state.head = 0
        }
        return arrival
    }

    /// Makes sure the watchdog wakes by `deadline`: a watchdog already due earlier just sleeps
    /// again when it wakes (deadlines only move later while packets keep coming).
    private func armWatchdog(_ state: inout State, until deadline: Double) {
        if let wake = state.watchdogWake, wake <= deadline { return }
        state.watchdog?.cancel()
        state.watchdogWake = deadline
        state.watchdogsStarted += 1
        let time = self.time
        state.watchdog = Task { [weak self] in
            var wake = deadline
            while true {
                if wake > time.now() {
                    do { try await time.sleepUntil(wake) } catch { return }
                }
                guard let self, let next = self.watchdogWoke() else { return }
                wake = next
            }
        }
    }

    /// The watchdog woke: fails the waiter whose deadline passed; returns when to wake next
    /// (the waiter's later deadline), or nil to stop (the next wait starts a new watchdog).
    private func watchdogWoke() -> Double? {
        let (expired, next) = state.withLock { state -> (Waiter?, Double?) in
            guard !Task.isCancelled else { return (nil, nil) }
            if let waiter = state.waiter, let deadline = waiter.deadline {
                if deadline <= time.now() {
                    state.waiter = nil
                } else {
                    state.watchdogWake = deadline
                    return (nil, deadline)
                }
                state.watchdog = nil
                state.watchdogWake = nil
                return (waiter, nil)
            }
            state.watchdog = nil
            state.watchdogWake = nil
            return (nil, nil)
        }
        if let expired { expired.continuation.resume(throwing: Failure.stalled(seconds: expired.timeout)) }
        return next
    }

    /// Fails the waiter `id` (cancelled), if it still waits; remembers a cancellation that came
    /// before the waiter was registered.
    private func fail(_ id: UInt64, _ error: any Error) {
        let waiter = state.withLock { state -> Waiter? in
            guard let waiter = state.waiter, waiter.id == id else {
                if state.waiter == nil { state.cancelledID = id }
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.continuation.resume(throwing: error)
    }
}
