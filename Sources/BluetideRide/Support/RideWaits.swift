/// Lets one task at a time through, in arrival order (a trainer answers one command at a time).
actor RideLock {
    private var held = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func acquire() async {
        if !held {
            held = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    func release() {
        if waiters.isEmpty {
            held = false
        } else {
            waiters.removeFirst().resume()
        }
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

/// The first element of `stream` that `match` accepts, within `timeout`; nil when the time is up
/// or the stream ends first. Cancellable.
func firstMatch<Element: Sendable, T: Sendable>(
    in stream: AsyncThrowingStream<Element, any Error>, within timeout: Duration,
    _ match: @escaping @Sendable (Element) -> T?
) async throws -> T? {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask {
            for try await element in stream {
                if let found = match(element) { return found }
            }
            return nil
        }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        let first = try await group.next() ?? nil
        group.cancelAll()
        return first
    }
}

/// Seconds between two instants of the continuous clock.
func seconds(from start: ContinuousClock.Instant, to end: ContinuousClock.Instant) -> Double {
    let parts = start.duration(to: end).components
    return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
}
