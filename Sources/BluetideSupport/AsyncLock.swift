/// A first-come first-served lock for async code: holders run one at a time, in the order they
/// asked. Used to keep a connection's operations, and the controller's one connection attempt at
/// a time, in order.
public actor AsyncLock {
    private var held = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    public init() {}

    /// Waits for the lock.
    public func acquire() async {
        if !held {
            held = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    /// Passes the lock to the next waiter, or frees it.
    public func release() {
        if waiters.isEmpty { held = false } else { waiters.removeFirst().resume() }
    }

    /// Runs `body` holding the lock.
    public func run<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
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
