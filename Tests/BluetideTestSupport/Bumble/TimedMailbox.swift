import Foundation

/// An ordered queue of values from one producer, read with a timeout per value.
///
/// A child process's output lines are delivered here in order; a test waits for the next one
/// (or for one that matches) for at most a given duration, so a silent peer fails the test with
/// a message instead of hanging it. Every delivered value is also kept in `history` for
/// diagnostics.
public actor TimedMailbox<Element: Sendable> {
    private var queue: [Element] = []
    private var finished = false
    private var waiters: [UInt64: CheckedContinuation<Element?, any Error>] = [:]
    private var nextWaiterID: UInt64 = 0
    /// Everything ever delivered, oldest first.
    public private(set) var history: [Element] = []

    /// An empty, open mailbox.
    public init() {}

    /// Thrown by `next(timeout:)` when nothing arrived in time.
    public struct Timeout: Error {}

    /// Adds a value (called by the single producer, in order).
    public func deliver(_ element: Element) {
        history.append(element)
        if let id = waiters.keys.min(), let waiter = waiters.removeValue(forKey: id) {
            waiter.resume(returning: element)
        } else {
            queue.append(element)
        }
    }

    /// Marks the end of the values; pending and later reads return `nil` once the queue is empty.
    public func finish() {
        finished = true
        let pending = waiters
        waiters = [:]
        for waiter in pending.values { waiter.resume(returning: nil) }
    }

    /// The next value, `nil` at the end, or throws `Timeout` after `timeout`
    /// (`CancellationError` when the waiting task is cancelled).
    public func next(timeout: Duration) async throws -> Element? {
        if !queue.isEmpty { return queue.removeFirst() }
        if finished { return nil }
        let id = nextWaiterID
        nextWaiterID &+= 1
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            await self?.expire(id)
        }
        defer { timer.cancel() }
        // The continuation is stored before this actor can run `expire` or `cancel`, because the
        // closure runs on this actor before the call suspends.
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                } else {
                    waiters[id] = continuation
                }
            }
        } onCancel: {
            Task { await self.cancel(id) }
        }
    }

    private func expire(_ id: UInt64) {
        waiters.removeValue(forKey: id)?.resume(throwing: Timeout())
    }

    private func cancel(_ id: UInt64) {
        waiters.removeValue(forKey: id)?.resume(throwing: CancellationError())
    }
}
