import BluetideSupport
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

    /// Waits until `condition` holds for the lines printed so far (put a hang guard around it).
    func wait(until condition: @escaping @Sendable ([String]) -> Bool) async throws {
        try await storage.wait(until: condition)
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

/// Runs `body` in virtual time on a fresh manual clock (``ManualClock/advancing(step:yields:_:)``),
/// under a wall-clock hang guard of `seconds`: a command given the clock runs its emulated
/// world, its `--timeout` and its `--duration` on it, so they pass the same way however busy the
/// machine is, and a command that waits for something that never comes meets its own limit.
func inVirtualTime<T: Sendable>(guard seconds: Double = 60, _ body: @escaping @Sendable (BluetideClock) async throws -> T) async throws -> T {
    let manual = ManualClock()
    return try await withGuard(seconds) { try await manual.advancing { try await body(BluetideClock(manual)) } }
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

/// The message of the ``CommandFailure`` `body` throws when run in virtual time
/// (``inVirtualTime(guard:_:)``); nil when it succeeds.
func failureMessage(inVirtualTime body: @escaping @Sendable (BluetideClock) async throws -> Void) async throws -> String? {
    do {
        try await inVirtualTime { try await body($0) }
        return nil
    } catch let failure as CommandFailure {
        return failure.message
    }
}
