import BluetideSupport

/// First come, first served turns kept by an actor (``Central``'s connection attempts): the
/// package's one FIFO lock, ``AsyncLock``, under the calls its owner uses. Taking and passing a
/// turn costs no hop to another actor (the lock's state is behind a mutex):
///
/// ```swift
/// if !turns.take() { await withCheckedContinuation { turns.wait($0) } }
/// defer { turns.pass() }
/// ```
typealias TurnQueue = AsyncLock

extension AsyncLock {
    /// Takes the turn when it is free (true); false means ``wait(_:)`` for it.
    func take() -> Bool { tryAcquire() }

    /// Queues a caller that will be resumed, holding the turn, when it comes (at once when the
    /// turn was passed meanwhile).
    func wait(_ continuation: CheckedContinuation<Void, Never>) { enqueue(continuation) }

    /// Ends the current turn: the next caller in line gets it, or it becomes free.
    func pass() { release() }
}
