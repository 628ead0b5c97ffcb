import Foundation
import Synchronization

extension Duration {
    /// The duration in seconds, as the host stack's time values are.
    var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}

/// Runs `body`, throwing `onTimeout()` when it has not finished after `limit` (nil: no limit).
///
/// At the limit the body is cancelled and the call returns at once, without waiting for the body
/// to notice: host stack waits (an ATT transaction, a link coming back) are not all cancellable,
/// and a time limit must hold regardless. Cancelling the caller cancels the body.
func withTimeLimit<T: Sendable>(
    _ limit: Duration?, onTimeout: @escaping @Sendable () -> any Error,
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    guard let limit else { return try await body() }
    let outcome = FirstOutcome<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            outcome.install(continuation)
            let work = Task {
                do { outcome.finish(.success(try await body())) } catch { outcome.finish(.failure(error)) }
            }
            let timer = Task {
                try? await Task.sleep(for: limit)
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

/// A first-come first-served lock for async code: holders run one at a time, in the order they
/// asked. Used to keep a connection's operations, and the controller's one connection attempt at
/// a time, in order.
actor AsyncLock {
    private var held = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// Waits for the lock.
    func acquire() async {
        if !held {
            held = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    /// Passes the lock to the next waiter, or frees it.
    func release() {
        if waiters.isEmpty { held = false } else { waiters.removeFirst().resume() }
    }

    /// Runs `body` holding the lock.
    func run<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        await acquire()
        do {
            let value = try await body()
            release()
            return value
        } catch {
            release()
            throw error
        }
    }
}
