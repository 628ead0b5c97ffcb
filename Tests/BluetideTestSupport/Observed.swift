import Synchronization

/// A value that events change and tests wait on: every change re-checks the waiting conditions
/// and resumes those that now hold, so a test waits for the event itself — no sleeping, no
/// polling. Put a hang guard around a wait (`withRunTimeLimit`, a test's `within`/`withGuard`):
/// cancelling the waiting task ends the wait with `CancellationError`.
public final class Observed<Value: Sendable>: Sendable {
    private struct Waiter {
        let id: UInt64
        let condition: @Sendable (Value) -> Bool
        let continuation: CheckedContinuation<Value, any Error>
    }

    private struct State {
        var value: Value
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
        var cancelled: Set<UInt64> = []
    }

    private let state: Mutex<State>

    public init(_ value: Value) {
        state = Mutex(State(value: value))
    }

    /// The value now.
    public var value: Value { state.withLock { $0.value } }

    /// Changes the value and resumes the waiters whose condition now holds.
    @discardableResult
    public func update<R>(_ change: (inout Value) -> R) -> R {
        let (result, ready, value) = state.withLock { state -> (R, [CheckedContinuation<Value, any Error>], Value) in
            let result = change(&state.value)
            var ready: [CheckedContinuation<Value, any Error>] = []
            state.waiters.removeAll { waiter in
                guard waiter.condition(state.value) else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return (result, ready, state.value)
        }
        for continuation in ready { continuation.resume(returning: value) }
        return result
    }

    /// Returns the value once `condition` holds for it (at once when it already does).
    @discardableResult
    public func wait(until condition: @escaping @Sendable (Value) -> Bool) async throws -> Value {
        let id = state.withLock { state -> UInt64 in
            defer { state.nextID += 1 }
            return state.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                // nil: waiting; otherwise how the wait ends at once.
                let outcome = state.withLock { state -> Result<Value, any Error>? in
                    if state.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    if condition(state.value) { return .success(state.value) }
                    state.waiters.append(Waiter(id: id, condition: condition, continuation: continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Value, any Error>? in
                if let index = state.waiters.firstIndex(where: { $0.id == id }) { return state.waiters.remove(at: index).continuation }
                state.cancelled.insert(id)  // cancelled before the wait was stored: it ends at once
                return nil
            }
            waiter?.resume(throwing: CancellationError())
        }
    }
}

extension Observed where Value: RangeReplaceableCollection, Value.Element: Sendable {
    /// Appends `element` (an event, a line) and resumes the waiters that now hold.
    public func append(_ element: Value.Element) {
        update { $0.append(element) }
    }

    /// The first element that matches `predicate`, waiting for it to arrive.
    public func first(where predicate: @escaping @Sendable (Value.Element) -> Bool) async throws -> Value.Element {
        let value = try await wait { $0.contains(where: predicate) }
        guard let found = value.first(where: predicate) else { throw CancellationError() }  // cannot happen: it held
        return found
    }
}
