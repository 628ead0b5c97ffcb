import Synchronization

/// A first-come first-served lock for async code: holders run one at a time, in the order they
/// asked. The one FIFO lock of the package: a connection's operations, the controller's one
/// connection attempt at a time, a GATT client's procedures, a trainer's or a ring's commands.
///
/// Waiting costs no hop to another actor: the state is behind a `Mutex`, and ``acquire(isolation:)``
/// and ``run(isolation:_:)`` run on the caller's own executor (an actor that keeps its operations
/// in turn stays on itself). ``release()`` hands the lock straight to the next waiter, so a
/// waiter is never overtaken by a later caller. A task cancelled while it waits leaves the line
/// (``acquire(isolation:)`` throws `CancellationError`) and never holds the lock;
/// ``acquireUncancellable(isolation:)`` waits for its turn whatever happens.
public final class AsyncLock: Sendable {
    private enum Waiter {
        case plain(CheckedContinuation<Void, Never>)
        case cancellable(CheckedContinuation<Void, any Error>)

        func resume() {
            switch self {
            case let .plain(continuation): continuation.resume()
            case let .cancellable(continuation): continuation.resume()
            }
        }
    }

    private struct State {
        var held = false
        var waiters: [(id: UInt64, waiter: Waiter)] = []
        var head = 0
        var nextID: UInt64 = 0
        /// Waits that have an id but have not reached the line yet, and those of them cancelled
        /// meanwhile (they end at once when they come).
        var arriving: Set<UInt64> = []
        var cancelledEarly: Set<UInt64> = []

        /// Takes the lock for the caller when it is free; otherwise queues `waiter` (true: taken).
        mutating func takeOrQueue(_ id: UInt64, _ waiter: Waiter) -> Bool {
            guard held else {
                held = true
                return true
            }
            waiters.append((id, waiter))
            return false
        }

        /// The next waiter (the lock passes to it), or nil after freeing the lock.
        mutating func next() -> Waiter? {
            guard head < waiters.count else {
                held = false
                return nil
            }
            let waiter = waiters[head].waiter
            head += 1
            if head == waiters.count {
                waiters.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 64, head * 2 >= waiters.count {
                waiters.removeFirst(head)
                head = 0
            }
            return waiter
        }

        /// Removes the waiter `id` when it is still in line.
        mutating func remove(_ id: UInt64) -> Waiter? {
            guard let index = waiters[head...].firstIndex(where: { $0.id == id }) else { return nil }
            return waiters.remove(at: index).waiter
        }
    }

    private let state = Mutex(State())

    /// A free lock.
    public init() {}

    /// Whether someone holds the lock now.
    public var isHeld: Bool { state.withLock { $0.held } }

    /// Takes the lock when it is free, without waiting; false when someone holds it.
    public func tryAcquire() -> Bool {
        state.withLock { state in
            guard !state.held else { return false }
            state.held = true
            return true
        }
    }

    /// Waits for the lock, in arrival order; throws `CancellationError` (without the lock) when
    /// the waiting task is cancelled before its turn came.
    public func acquire(isolation: isolated (any Actor)? = #isolation) async throws {
        let id = state.withLock { state -> UInt64 in
            defer { state.nextID &+= 1 }
            state.arriving.insert(state.nextID)
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation(isolation: isolation) { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome { case taken, queued, cancelled }
                let outcome = state.withLock { state -> Outcome in
                    state.arriving.remove(id)
                    if state.cancelledEarly.remove(id) != nil { return .cancelled }
                    return state.takeOrQueue(id, .cancellable(continuation)) ? .taken : .queued
                }
                switch outcome {
                case .taken: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .queued: break
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                if let waiter = state.remove(id) { return waiter }
                // Not in line yet: it ends when it comes. (Already handed the lock: it keeps it.)
                if state.arriving.contains(id) { state.cancelledEarly.insert(id) }
                return nil
            }
            if case let .cancellable(continuation) = waiter { continuation.resume(throwing: CancellationError()) }
        }
    }

    /// Waits for the lock, in arrival order, whether or not the waiting task is cancelled.
    public func acquireUncancellable(isolation: isolated (any Actor)? = #isolation) async {
        if tryAcquire() { return }
        await withCheckedContinuation(isolation: isolation) { enqueue($0) }
    }

    /// Queues `continuation` for the lock: it is resumed, holding the lock, when its turn comes
    /// (at once when the lock is free now). For an owner that waits with its own continuation
    /// after ``tryAcquire()`` said no.
    public func enqueue(_ continuation: CheckedContinuation<Void, Never>) {
        let taken = state.withLock { state -> Bool in
            defer { state.nextID &+= 1 }
            return state.takeOrQueue(state.nextID, .plain(continuation))
        }
        if taken { continuation.resume() }
    }

    /// Passes the lock to the next waiter, or frees it. Call once per acquire that returned.
    public func release() {
        state.withLock { $0.next() }?.resume()
    }

    /// Runs `body` holding the lock (released however `body` ends). Throws `CancellationError`
    /// without running `body` when the task is cancelled while it waits.
    public func run<T>(isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T) async throws -> T {
        try await acquire(isolation: isolation)
        defer { release() }
        return try await body()
    }
}
