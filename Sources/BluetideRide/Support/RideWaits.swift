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
