import Foundation

extension Duration {
    /// The duration in seconds, as the host stack's time values are.
    var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}

/// Runs `body`, throwing `onTimeout()` when it has not finished after `limit` (nil: no limit).
/// The body is cancelled when the limit is reached.
func withTimeLimit<T: Sendable>(
    _ limit: Duration?, onTimeout: @escaping @Sendable () -> any Error,
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    guard let limit else { return try await body() }
    return try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: limit)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw onTimeout() }
        return value
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
