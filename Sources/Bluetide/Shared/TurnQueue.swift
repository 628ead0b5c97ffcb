/// First come, first served turns, kept inside the actor that owns them: the state of an
/// `AsyncLock` as a value, so taking and passing a turn costs no hop to another actor.
///
/// The owner waits with `withCheckedContinuation` when ``take()`` says the turn is busy:
///
/// ```swift
/// if !turns.take() { await withCheckedContinuation { turns.wait($0) } }
/// defer { turns.pass() }
/// ```
struct TurnQueue {
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Takes the turn when it is free (true); false means ``wait(_:)`` for it.
    mutating func take() -> Bool {
        guard !busy else { return false }
        busy = true
        return true
    }

    /// Queues a caller that will be resumed, holding the turn, when it comes.
    mutating func wait(_ continuation: CheckedContinuation<Void, Never>) { waiting.append(continuation) }

    /// Ends the current turn: the next caller in line gets it, or it becomes free.
    mutating func pass() {
        if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
    }
}
