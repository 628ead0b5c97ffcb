import BluetideSupport
import BluetideTestSupport
import Synchronization
import Testing

/// The waiters of these tests queue on this actor: `acquire` runs on its caller's executor, so
/// what a task does before its `acquire` and the queueing happen in one stretch on the actor,
/// and the next task spawned onto the actor comes after it.
@globalActor actor LockTestActor {
    static let shared = LockTestActor()
}

private struct Timeout: Error {}

/// A hang guard (run time, not a timing check).
private func guarded<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withRunTimeLimit(30, onTimeout: { Timeout() }, body)
}

@Suite struct AsyncLockTests {
    @Test func waitersGetTheLockInArrivalOrder() async throws {
        let lock = AsyncLock()
        #expect(lock.tryAcquire())
        #expect(!lock.tryAcquire(), "held")
        let arrived = Observed(0)
        let order = Observed<[Int]>([])
        var tasks: [Task<Void, any Error>] = []
        for index in 0..<20 {
            tasks.append(Task { @LockTestActor in
                arrived.update { $0 += 1 }
                try await lock.acquire()
                order.append(index)
                lock.release()
            })
            try await guarded { try await arrived.wait { $0 == index + 1 } }
        }
        #expect(order.value.isEmpty, "nobody overtakes the holder")
        lock.release()
        let all = tasks
        try await guarded { for task in all { try await task.value } }
        #expect(order.value == Array(0..<20))
        #expect(!lock.isHeld)
    }

    /// A waiter cancelled in line leaves it: it throws, never holds the lock, and the ones
    /// behind it still get their turns, in order.
    @Test func aCancelledWaiterLeavesTheLineAndTheOthersGoOn() async throws {
        let lock = AsyncLock()
        try await lock.acquire()
        let arrived = Observed(0)
        let order = Observed<[String]>([])
        func waiter(_ name: String) -> Task<Void, any Error> {
            Task { @LockTestActor in
                arrived.update { $0 += 1 }
                try await lock.run { order.append(name) }
            }
        }
        let a = waiter("a")
        try await guarded { try await arrived.wait { $0 == 1 } }
        let b = waiter("b")
        try await guarded { try await arrived.wait { $0 == 2 } }
        let c = waiter("c")
        try await guarded { try await arrived.wait { $0 == 3 } }
        b.cancel()
        await #expect(throws: CancellationError.self) { try await b.value }
        lock.release()
        try await guarded { try await a.value; try await c.value }
        #expect(order.value == ["a", "c"])
        #expect(!lock.isHeld)

        // Cancelled before it asks: it fails at once and leaves the lock as it was.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await lock.acquire()
        }
        await #expect(throws: CancellationError.self) { try await early.value }
        #expect(!lock.isHeld)
        // An uncancellable wait ignores the cancellation and gets its turn.
        let stubborn = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await lock.acquireUncancellable()
            lock.release()
        }
        try await guarded { await stubborn.value }
        #expect(!lock.isHeld)
    }

    /// Many tasks on the shared pool take and pass the lock thousands of times, some of them
    /// cancelled while they wait: nobody is left waiting (no lost wake-up), one holder at a time.
    @Test func noLostWakeUpUnderContention() async throws {
        final class Counters: Sendable {
            let holders = Atomic<Int>(0)
            let overlapped = Atomic<Bool>(false)
            let done = Atomic<Int>(0)
        }
        let lock = AsyncLock()
        let counters = Counters()
        try await guarded {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<8 {
                    group.addTask {
                        for round in 0..<400 {
                            // Every 7th round of odd workers: a waiter that is cancelled meanwhile.
                            if worker % 2 == 1, round % 7 == 0 {
                                let doomed = Task { try await lock.run {} }
                                doomed.cancel()
                                _ = try? await doomed.value
                            }
                            if round % 2 == 0 {
                                try await lock.run {
                                    if counters.holders.add(1, ordering: .sequentiallyConsistent).newValue != 1 { counters.overlapped.store(true, ordering: .relaxed) }
                                    await Task.yield()
                                    counters.holders.subtract(1, ordering: .sequentiallyConsistent)
                                }
                            } else {
                                await lock.acquireUncancellable()
                                if counters.holders.add(1, ordering: .sequentiallyConsistent).newValue != 1 { counters.overlapped.store(true, ordering: .relaxed) }
                                counters.holders.subtract(1, ordering: .sequentiallyConsistent)
                                lock.release()
                            }
                            counters.done.add(1, ordering: .relaxed)
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        let finished = counters.done.load(ordering: .relaxed), overlap = counters.overlapped.load(ordering: .relaxed)
        #expect(finished == 8 * 400)
        #expect(!overlap, "one holder at a time")
        #expect(!lock.isHeld, "the lock is free at the end")
    }

    @Test func runReleasesWhenTheBodyThrows() async throws {
        struct Refused: Error {}
        let lock = AsyncLock()
        await #expect(throws: Refused.self) { try await lock.run { throw Refused() } }
        #expect(!lock.isHeld)
        #expect(try await lock.run { 42 } == 42)
    }
}
