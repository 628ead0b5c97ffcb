import Foundation

/// Records a child process's exit status and lets tasks wait for it with a timeout.
///
/// The process's termination handler calls `record(_:)` once; any number of tasks wait with
/// `wait(timeout:)` (nothing blocks a thread: waiters are continuations).
public actor ExitMonitor {
    private var status: Int32?
    private var signalled: Bool?
    private var waiters: [UInt64: CheckedContinuation<Int32?, Never>] = [:]
    private var nextWaiterID: UInt64 = 0

    /// A monitor for a process that is still running.
    public init() {}

    /// The exit status, or `nil` while the process runs.
    public var exitStatus: Int32? { status }

    /// True when the process was ended by a signal it did not handle (then `exitStatus` is the
    /// signal number), false when it exited on its own; `nil` while it runs.
    public var endedBySignal: Bool? { signalled }

    /// Called once when the process has exited; `bySignal` when an uncaught signal ended it.
    public func record(_ exitStatus: Int32, bySignal: Bool = false) {
        status = exitStatus
        signalled = bySignal
        let pending = waiters
        waiters = [:]
        for waiter in pending.values { waiter.resume(returning: exitStatus) }
    }

    /// The exit status once the process exits, or `nil` if it is still running after `timeout`
    /// (a cancelled caller gets `nil` at once).
    public func wait(timeout: Duration) async -> Int32? {
        if let status { return status }
        let id = nextWaiterID
        nextWaiterID &+= 1
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            await self?.expire(id)
        }
        defer { timer.cancel() }
        // A cancelled caller gets `nil` at once (as if the wait had timed out).
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if Task.isCancelled {
                    continuation.resume(returning: nil)
                } else {
                    waiters[id] = continuation
                }
            }
        } onCancel: {
            Task { await self.expire(id) }
        }
    }

    private func expire(_ id: UInt64) {
        waiters.removeValue(forKey: id)?.resume(returning: nil)
    }
}
