import Synchronization

/// Runs `body`, throwing `onTimeout()` when it has not finished after `limit` (nil: no limit)
/// on the monotonic clock. See ``withTimeLimit(_:clock:onTimeout:_:)``.
public func withTimeLimit<T: Sendable>(
    _ limit: Duration?, onTimeout: @escaping @Sendable () -> any Error,
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withTimeLimit(limit, clock: ContinuousClock(), onTimeout: onTimeout, body)
}

/// Runs `body`, throwing `onTimeout()` when it has not finished after `limit` (nil: no limit)
/// on `clock` (a ``ManualClock`` in tests: the limit passes only when the test moves time).
///
/// At the limit the body is cancelled and the call returns at once, without waiting for the body
/// to notice: host stack waits (an ATT transaction, a link coming back) are not all cancellable,
/// and a time limit must hold regardless. Cancelling the caller cancels the body.
public func withTimeLimit<T: Sendable, C: Clock>(
    _ limit: Duration?, clock: C, onTimeout: @escaping @Sendable () -> any Error,
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T where C.Duration == Duration {
    guard let limit else { return try await body() }
    let outcome = FirstOutcome<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            outcome.install(continuation)
            let work = Task {
                do { outcome.finish(.success(try await body())) } catch { outcome.finish(.failure(error)) }
            }
            let timer = Task {
                try? await clock.sleep(for: limit)
                if !Task.isCancelled, outcome.finish(.failure(onTimeout())) { work.cancel() }
            }
            outcome.onFinish { timer.cancel() }
            outcome.onCancel { work.cancel() }
        }
    } onCancel: {
        outcome.cancel()
    }
}

/// The first of a body's result, a timeout and a cancellation: resumes the waiting
/// continuation exactly once. State behind a Mutex.
private final class FirstOutcome<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var early: Result<T, any Error>?
        var done = false
        var cancelled = false
        var finishActions: [@Sendable () -> Void] = []
        var cancelActions: [@Sendable () -> Void] = []
    }

    private let state = Mutex(State())

    func install(_ continuation: CheckedContinuation<T, any Error>) {
        let early = state.withLock { state -> Result<T, any Error>? in
            if let early = state.early { return early }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    /// Delivers `result` if nothing was delivered yet; returns whether it was.
    @discardableResult
    func finish(_ result: Result<T, any Error>) -> Bool {
        let (continuation, actions, delivered) = state.withLock { state -> (CheckedContinuation<T, any Error>?, [@Sendable () -> Void], Bool) in
            guard !state.done else { return (nil, [], false) }
            state.done = true
            let continuation = state.continuation
            state.continuation = nil
            if continuation == nil { state.early = result }
            defer { state.finishActions = [] }
            return (continuation, state.finishActions, true)
        }
        continuation?.resume(with: result)
        for action in actions { action() }
        return delivered
    }

    func onFinish(_ action: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state -> Bool in
            if state.done { return true }
            state.finishActions.append(action)
            return false
        }
        if runNow { action() }
    }

    func onCancel(_ action: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state -> Bool in
            if state.cancelled { return true }
            state.cancelActions.append(action)
            return false
        }
        if runNow { action() }
    }

    /// The caller was cancelled: cancel the body and end the wait with CancellationError.
    func cancel() {
        let actions = state.withLock { state -> [@Sendable () -> Void] in
            state.cancelled = true
            defer { state.cancelActions = [] }
            return state.cancelActions
        }
        for action in actions { action() }
        finish(.failure(CancellationError()))
    }
}

/// Runs `body` and returns its value, or throws `onTimeout()` once `seconds` of *run time* have
/// passed: a guard against hangs in tests, not a timing assertion.
///
/// Run time is wall time counted in steps of at most 0.25 s, measured by a watchdog task that
/// wakes every 100 ms. When the whole test process is starved (two cores shared by CPU-heavy
/// suites, a loaded CI machine), the watchdog is starved too and the limit stretches with the
/// stall; when only the body hangs, the watchdog runs and the limit holds.
public func withRunTimeLimit<T: Sendable>(
    _ seconds: Double, onTimeout: @escaping @Sendable () -> any Error,
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            let clock = ContinuousClock()
            var remaining = seconds
            var last = clock.now
            while remaining > 0 {
                try await Task.sleep(for: .milliseconds(100))
                let now = clock.now
                let elapsed = now - last
                last = now
                let step = elapsed.inSeconds
                remaining -= min(max(step, 0), 0.25)
            }
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw onTimeout() }
        return value
    }
}
