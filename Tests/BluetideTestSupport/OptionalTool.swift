import Foundation
import Testing

/// Tools some tests need that a developer's machine may lack (tmux, tshark, chromium, Python
/// packages). The rule: outside CI a missing tool skips the test with one line that says what to
/// install; in CI (`CI=true`, as `.ci/run` runs) the test runs anyway and fails on the missing
/// tool, so CI never passes by skipping. (`BLUETIDE_SKIP_BUMBLE=1` skips the Bumble interop
/// tests everywhere.)
public enum OptionalTool {
    /// True when the `CI` environment variable is `true` (or `1`).
    public static var isCI: Bool {
        let value = ProcessInfo.processInfo.environment["CI"]?.lowercased()
        return value == "true" || value == "1"
    }

    /// The executable `name` on `PATH` (or among `extraPaths`), when there is one.
    public static func executable(_ name: String, extraPaths: [String] = []) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":").map(String.init) + extraPaths where !directory.isEmpty {
            let candidate = URL(fileURLWithPath: directory).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }

    /// Whether the first `python3` can import `module` (run on a thread of its own).
    public static func pythonHasModule(_ module: String) async -> Bool {
        guard let python = executable("python3") else { return false }
        return await withCheckedContinuation { continuation in
            Thread {
                let process = Process()
                process.executableURL = python
                process.arguments = ["-c", "import \(module)"]
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                do {
                    try process.run()
                    process.waitUntilExit()
                    continuation.resume(returning: process.terminationStatus == 0)
                } catch {
                    continuation.resume(returning: false)
                }
            }.start()
        }
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test when the executable `tool` is installed, or in CI (where its absence fails
    /// the test); skips it otherwise with "tool is not installed: install".
    public static func needs(_ tool: String, install: String, extraPaths: [String] = []) -> Self {
        .enabled(
            if: OptionalTool.isCI || OptionalTool.executable(tool, extraPaths: extraPaths) != nil,
            "\(tool) is not installed (\(install); .ci/run does): skipped outside CI")
    }

    /// Runs the test when `python3` can import `module`, or in CI; skips it otherwise.
    public static func needsPythonModule(_ module: String, install: String) -> Self {
        .enabled("Python module \(module) is not installed (\(install); .ci/run does): skipped outside CI") {
            if OptionalTool.isCI { return true }
            return await OptionalTool.pythonHasModule(module)
        }
    }
}
