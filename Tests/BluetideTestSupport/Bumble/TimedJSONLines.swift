/// The stdout JSON lines of a `BumbleProcess` as an `AsyncSequence` (other lines are skipped);
/// each element is awaited for at most `timeout`, after which the iteration throws a
/// `BumbleHarnessError` with the process's output. Made by `BumbleProcess.jsonLines(timeout:)`.
public struct TimedJSONLines: AsyncSequence, Sendable {
    public typealias Element = JSONValue
    let process: BumbleProcess
    let timeout: Duration

    /// Reads the next JSON line; `nil` when stdout ended.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let process: BumbleProcess
        let timeout: Duration

        public mutating func next() async throws -> JSONValue? {
            while let line = try await process.nextLine(timeout: timeout) {
                if let json = JSONValue(line: line) { return json }
            }
            return nil
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(process: process, timeout: timeout)
    }
}
