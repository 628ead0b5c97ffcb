import Synchronization

/// Holds a task so a `Sendable` owner can cancel it later.
final class TaskBox: Sendable {
    private let task = Mutex<Task<Void, Never>?>(nil)

    func set(_ newTask: Task<Void, Never>) {
        task.withLock { $0 = newTask }
    }

    func cancel() {
        task.withLock {
            $0?.cancel()
            $0 = nil
        }
    }
}
