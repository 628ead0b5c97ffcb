import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs one test of this bundle in a child process of its own (the same test executable, filtered
/// to that test, with ``variable`` set so the test runs its body instead of spawning again). For
/// tests whose load (thousands of sockets, accept storms) must not be shared with the tests running
/// next to them in the parallel suite.
enum FloodInChild {
    /// Set to `1` in the child's environment.
    static let variable = "BLUETIDE_FLOOD_CHILD"

    /// True in the child.
    static var isChild: Bool { ProcessInfo.processInfo.environment[variable] == "1" }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs test function `test` (its name) in a child Swift Testing run and returns the child's
    /// exit status (a signal gives 128 + its number) and its standard output and error together.
    /// Kills the child after `limit` seconds (status then is that of the kill).
    static func run(test: String, limit: Double) async throws -> (status: Int32, output: String) {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return try await withCheckedThrowingContinuation { continuation in
            Thread {
                let process = Process()
                process.executableURL = executable
                process.arguments = ["--testing-library", "swift-testing", "--filter", test]
                var environment = ProcessInfo.processInfo.environment
                environment[variable] = "1"
                process.environment = environment
                let pipe = Pipe()
                process.standardOutput = pipe
                process.standardError = pipe
                process.standardInput = FileHandle.nullDevice
                do { try process.run() } catch {
                    continuation.resume(throwing: Failure(description: "could not start \(executable.path) for \(test): \(error)"))
                    return
                }
                let killer = DispatchWorkItem { if process.isRunning { process.terminate() } }
                DispatchQueue.global().asyncAfter(deadline: .now() + limit, execute: killer)
                let data = pipe.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                killer.cancel()
                let status = process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
                continuation.resume(returning: (status, String(decoding: data, as: UTF8.self)))
            }.start()
        }
    }
}
