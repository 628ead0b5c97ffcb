import Synchronization

/// A request to end a coached run early, with the reason in words (`SIGINT`, `stopped from the
/// dashboard`, `server stopping (SIGTERM)`), which the session stores as its end reason.
///
/// Before a session exists (scanning, connecting) the run is cancelled and throws
/// ``CoachError/stopped(_:)``; once it exists the trainer is sent `stop`, the session is
/// ended with the reason and ``CoachEvent/ended(_:)`` is reported as for any other ending.
/// The first request counts; later ones are ignored.
///
/// It also tells when the run has ended (``waitUntilEnded()``): a caller that left the run's
/// stream early (which cancels the run) can wait until the session's end is stored.
public final class RunStop: Sendable {
    private struct State {
        var reason: String?
        var handlers: [@Sendable (String) -> Void] = []
        var ended = false
        var endWaiters: [UInt64: CheckedContinuation<Void, any Error>] = [:]
        var cancelledWaits: Set<UInt64> = []
        var nextWaiter: UInt64 = 0
    }

    private let state = Mutex(State())

    /// A stop nobody has requested yet.
    public init() {}

    /// Asks the run to end for `reason`. Only the first request counts.
    public func request(_ reason: String) {
        let handlers: [@Sendable (String) -> Void] = state.withLock { state in
            guard state.reason == nil else { return [] }
            state.reason = reason
            defer { state.handlers = [] }
            return state.handlers
        }
        for handler in handlers { handler(reason) }
    }

    /// The reason, once requested.
    public var reason: String? { state.withLock { $0.reason } }

    /// Calls `handler` with the reason when a stop is requested (at once if it was already).
    func onRequest(_ handler: @escaping @Sendable (String) -> Void) {
        let reason: String? = state.withLock { state in
            if state.reason == nil { state.handlers.append(handler) }
            return state.reason
        }
        if let reason { handler(reason) }
    }

    /// True once a run given this stop has ended: its session's end is stored (or it threw
    /// before a session existed). With one stop given to several runs in turn, the first end.
    public var hasEnded: Bool { state.withLock { $0.ended } }

    /// Returns once a run given this stop has ended (see ``hasEnded``), at once if one has;
    /// throws `CancellationError` when the waiting task is cancelled first.
    public func waitUntilEnded() async throws {
        let id = state.withLock { state -> UInt64 in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // nil: waiting; otherwise how the wait ends at once.
                let outcome = state.withLock { state -> Result<Void, any Error>? in
                    if state.cancelledWaits.remove(id) != nil { return .failure(CancellationError()) }
                    if state.ended { return .success(()) }
                    state.endWaiters[id] = continuation
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                if let waiter = state.endWaiters.removeValue(forKey: id) { return waiter }
                state.cancelledWaits.insert(id)  // cancelled before the wait was stored: it ends at once
                return nil
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// The run has ended: wakes ``waitUntilEnded()``.
    func markEnded() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.ended = true
            defer { state.endWaiters = [:] }
            return Array(state.endWaiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }
}
