import BluetideSupport

/// The first element of `stream` that `match` accepts, within `timeout` on `clock` (the
/// connection's, so a test's virtual clock bounds it too); nil when the time is up or the
/// stream ends first. Cancellable.
func firstMatch<Element: Sendable, T: Sendable>(
    in stream: AsyncThrowingStream<Element, any Error>, within timeout: Duration, on clock: BluetideClock,
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
            try await clock.sleep(for: timeout)
            return nil
        }
        let first = try await group.next() ?? nil
        group.cancelAll()
        return first
    }
}

