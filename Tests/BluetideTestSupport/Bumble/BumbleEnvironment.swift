import Foundation

/// Where the Bumble interop kit lives and whether it can run on this machine.
///
/// Set `BLUETIDE_SKIP_BUMBLE=1` to skip the interop tests (see the `.bumbleInterop` trait);
/// otherwise a missing Python or Bumble makes them fail with the install command.
/// `BLUETIDE_PYTHON` overrides the interpreter and `BLUETIDE_INTEROP_DIR` the scripts folder.
public enum BumbleEnvironment {
    /// The Bumble release the scripts are written and tested against.
    public static let expectedVersion = "0.0.236"
    /// What to run when Bumble is missing.
    public static let installHint = "python3 -m pip install bumble==\(expectedVersion)"
    /// The scripts `requireAvailable()` checks for in `scriptsDirectory`.
    public static let requiredScripts = ["controllers.py", "peripheral.py", "central.py"]

    /// True when `BLUETIDE_SKIP_BUMBLE=1` asks to skip the interop tests.
    public static var isSkipRequested: Bool {
        ProcessInfo.processInfo.environment["BLUETIDE_SKIP_BUMBLE"] == "1"
    }

    /// The repository root: the nearest folder above this source file that holds `Package.swift`.
    public static var repositoryRoot: URL {
        var directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while directory.path != "/" {
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) {
                return directory
            }
            directory = directory.deletingLastPathComponent()
        }
        // Not reached in a checkout; fall back to the known layout
        // <root>/Tests/BluetideTestSupport/Bumble/BumbleEnvironment.swift.
        return URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
    }

    /// `Interop/bumble` at the repository root, or `BLUETIDE_INTEROP_DIR` when set.
    public static var scriptsDirectory: URL {
        if let override = ProcessInfo.processInfo.environment["BLUETIDE_INTEROP_DIR"], !override.isEmpty {
            return URL(fileURLWithPath: override, isDirectory: true)
        }
        return repositoryRoot
            .appendingPathComponent("Interop", isDirectory: true)
            .appendingPathComponent("bumble", isDirectory: true)
    }

    /// The result of probing Python and Bumble once per test process.
    public struct Probe: Sendable {
        /// The interpreter, when one was found.
        public let python: URL?
        /// Bumble's version string, when `import bumble` worked.
        public let bumbleVersion: String?
        /// Why the kit cannot run, or `nil` when it can.
        public let problem: String?
    }

    /// Probed on first use: finds python3 and runs `import bumble`, on a thread of its own.
    /// (A `static let` that ran Python inline would block every cooperative thread that touched
    /// it until Python answered: on a loaded 2-core machine that stalled the whole test run.)
    public static func probe() async -> Probe { await ProbeCache.shared.value() }

    private actor ProbeCache {
        static let shared = ProbeCache()
        private var task: Task<Probe, Never>?
        func value() async -> Probe {
            if let task { return await task.value }
            let task = Task<Probe, Never> {
                await withCheckedContinuation { continuation in
                    Thread { continuation.resume(returning: BumbleEnvironment.runProbe()) }.start()
                }
            }
            self.task = task
            return await task.value
        }
    }

    /// A Python interpreter that can `import bumble`, or a clear error (with the install command).
    public static func requirePython() async throws -> URL {
        let probe = await probe()
        if let problem = probe.problem {
            throw BumbleHarnessError(description: problem)
        }
        guard let python = probe.python else {
            throw BumbleHarnessError(description: "python3 not found; then run: \(installHint)")
        }
        return python
    }

    /// The Python interpreter and the interop scripts folder (checked for `requiredScripts`),
    /// or a clear error (with the install command).
    public static func requireAvailable() async throws -> (python: URL, scripts: URL) {
        let python = try await requirePython()
        let scripts = scriptsDirectory
        for script in requiredScripts {
            let path = scripts.appendingPathComponent(script).path
            guard FileManager.default.fileExists(atPath: path) else {
                throw BumbleHarnessError(description: "missing interop script \(path)")
            }
        }
        return (python, scripts)
    }

    private static func findPython() -> URL? {
        let environment = ProcessInfo.processInfo.environment
        if let override = environment["BLUETIDE_PYTHON"], !override.isEmpty {
            return URL(fileURLWithPath: override)
        }
        let searchPath = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in searchPath.split(separator: ":") where !directory.isEmpty {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent("python3")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }

    /// Blocking: runs Python. Only called on the probe's own thread.
    fileprivate static func runProbe() -> Probe {
        guard let python = findPython() else {
            return Probe(
                python: nil, bumbleVersion: nil,
                problem: "python3 was not found on PATH (set BLUETIDE_PYTHON); install Bumble with: \(installHint)")
        }
        let process = Process()
        process.executableURL = python
        process.arguments = [
            "-c", "import bumble, importlib.metadata as m; print(m.version('bumble'))",
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        do {
            try process.run()
        } catch {
            return Probe(
                python: python, bumbleVersion: nil,
                problem: "cannot run \(python.path): \(error); install Bumble with: \(installHint)")
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let lastLine = text.split(separator: "\n").last.map(String.init) ?? ""
        guard process.terminationStatus == 0 else {
            return Probe(
                python: python, bumbleVersion: nil,
                problem: """
                    `import bumble` failed with \(python.path). Install it with: \(installHint) \
                    (or set BLUETIDE_SKIP_BUMBLE=1 to skip the Bumble interop tests). Python said: \(lastLine)
                    """)
        }
        return Probe(python: python, bumbleVersion: lastLine, problem: nil)
    }
}
