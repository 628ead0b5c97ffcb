import BluetideTestSupport
import Foundation
@testable import BluetideCommands

/// Collects a command's output lines in tests; a test waits for a line (an event), never polls.
final class LineCollector: Sendable {
    private let storage = Observed<[String]>([])

    var lines: [String] { storage.value }

    var output: CommandOutput { CommandOutput(emit: { line in self.storage.append(line) }) }

    /// The first line that matches `predicate`, once it has been printed (put a hang guard around it).
    @discardableResult
    func line(where predicate: @escaping @Sendable (String) -> Bool) async throws -> String {
        try await storage.first(where: predicate)
    }
}

/// A fresh virtual link per test, so parallel tests never see each other's devices.
func privateLink() -> String { "virtual:cli-\(UUID().uuidString.prefix(8))" }

struct TimedOut: Error {}

/// Runs `body`, failing with ``TimedOut`` after `seconds` (a hang guard, not a timing check).
func withGuard<T: Sendable>(_ seconds: Double = 30, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw TimedOut() }
        return value
    }
}

/// The message of the ``CommandFailure`` `body` throws (nil when it succeeds).
func failureMessage(_ body: @escaping @Sendable () async throws -> Void) async throws -> String? {
    do {
        try await withGuard { try await body() }
        return nil
    } catch let failure as CommandFailure {
        return failure.message
    }
}
