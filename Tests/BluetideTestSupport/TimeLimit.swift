/// Runs `body` and returns its value, or throws `onTimeout()` once `seconds` of *run time* have
/// passed: a guard against hangs in tests, not a timing assertion.
///
/// Run time is wall time counted in steps of at most 0.25 s, measured by a watchdog task that
/// wakes every 100 ms. When the whole test process is starved (two cores shared by CPU-heavy
/// suites, a loaded CI machine), the watchdog is starved too and the limit stretches with the
/// stall; when only the body hangs, the watchdog runs and the limit holds.
public func withRunTimeLimit<T: Sendable>(
    _ seconds: Double, onTimeout: @escaping @Sendable () -> any Error,
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            let clock = ContinuousClock()
            var remaining = seconds
            var last = clock.now
            while remaining > 0 {
                try await Task.sleep(for: .milliseconds(100))
                let now = clock.now
                let elapsed = now - last
                last = now
                let step = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                remaining -= min(max(step, 0), 0.25)
            }
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw onTimeout() }
        return value
    }
}
