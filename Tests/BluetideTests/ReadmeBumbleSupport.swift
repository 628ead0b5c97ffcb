import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// A small part of Tests/BluetideHostTests/Support (that target's harness is not visible here):
// enough to run the Interop/bumble scripts from the README example tests.

/// Where the Bumble interop scripts are, and how to run them.
enum ReadmeBumble {
    /// `Interop/bumble` at the repository root (this file is `<root>/Tests/BluetideTests/…`),
    /// or `BLUETIDE_INTEROP_DIR`.
    static var scripts: URL {
        if let override = ProcessInfo.processInfo.environment["BLUETIDE_INTEROP_DIR"], !override.isEmpty {
            return URL(fileURLWithPath: override, isDirectory: true)
        }
        return URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Interop/bumble", isDirectory: true)
    }

    /// `python3` from `BLUETIDE_PYTHON` or the PATH.
    static func python() throws -> URL {
        let environment = ProcessInfo.processInfo.environment
        if let override = environment["BLUETIDE_PYTHON"], !override.isEmpty { return URL(fileURLWithPath: override) }
        for directory in (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent("python3")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw ScriptFailure(description: "python3 not found; install Bumble with python3 -m pip install bumble==0.0.236")
    }

    /// Starts the linked controllers and returns their process and ports (in order).
    static func startControllers(count: Int = 2) async throws -> (ScriptProcess, [UInt16]) {
        let process = try ScriptProcess.start("controllers.py", Array(repeating: "0", count: count))
        let line = try await process.line(within: 30, "READY line") { $0.hasPrefix("READY ") || $0.hasPrefix("ERROR ") }
        let ports = line.split(separator: " ").dropFirst().compactMap { UInt16($0) }
        guard line.hasPrefix("READY "), ports.count == count else {
            await process.stop()
            throw ScriptFailure(description: "controllers.py said: \(line)")
        }
        return (process, ports)
    }
}

/// A Bumble script's failure, with what it printed.
struct ScriptFailure: Error, CustomStringConvertible {
    let description: String
}

/// One running Bumble script: its stdout lines in order, its exit status, stopped by PID.
final class ScriptProcess: Sendable {
    let name: String
    let pid: Int32
    private let lines: Mutex<(queue: [String], history: [String], finished: Bool)> = Mutex(([], [], false))
    private let status = Mutex<Int32?>(nil)
    private let stdin: Pipe
    // Kept so its termination handler stays alive; only its PID is read after start.
    private let process: Process

    private init(name: String, process: Process, stdin: Pipe) {
        self.name = name
        self.process = process
        self.pid = process.processIdentifier
        self.stdin = stdin
    }

    /// Starts `Interop/bumble/<script>` with `arguments` (plus `--exit-on-stdin-eof`, so it
    /// ends with the test process); stderr goes to a temporary file.
    static func start(_ script: String, _ arguments: [String]) throws -> ScriptProcess {
        let process = Process()
        process.executableURL = try ReadmeBumble.python()
        process.arguments = ["-u", ReadmeBumble.scripts.appendingPathComponent(script).path] + arguments + ["--exit-on-stdin-eof"]
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        let child = ScriptProcess(name: script, process: process, stdin: stdin)
        process.terminationHandler = { [weak child] finished in child?.recordExit(finished.terminationStatus) }
        let descriptor = stdout.fileHandleForReading.fileDescriptor
        // Read on a thread of its own: never block the cooperative pool.
        Thread {
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                pending += buffer[0..<count]
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[..<newline], as: UTF8.self)
                    pending.removeSubrange(...newline)
                    child.lines.withLock { $0.queue.append(line); $0.history.append(line) }
                }
            }
            child.lines.withLock { $0.finished = true }
            withExtendedLifetime(stdout) {}
        }.start()
        return child
    }

    /// The first line (from now on) that `matches`, polled every 20 ms for at most `seconds`.
    func line(within seconds: Double, _ what: String, where matches: (String) -> Bool) async throws -> String {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            let (next, finished) = lines.withLock { state -> (String?, Bool) in
                state.queue.isEmpty ? (nil, state.finished) : (state.queue.removeFirst(), false)
            }
            if let next {
                if matches(next) { return next }
                continue
            }
            if finished { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw ScriptFailure(description: "\(name): no \(what) within \(seconds) s; it printed:\n" + output.suffix(30).joined(separator: "\n"))
    }

    /// The first JSON line whose `key` is `value`, decoded as a dictionary.
    func json(_ key: String, _ value: String, within seconds: Double) async throws -> [String: Any] {
        let line = try await line(within: seconds, "\(key) \(value)") { Self.object($0)?[key] as? String == value }
        return Self.object(line) ?? [:]
    }

    static func object(_ line: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
    }

    private func recordExit(_ code: Int32) { status.withLock { $0 = code } }

    /// Everything printed so far.
    var output: [String] { lines.withLock { $0.history } }

    /// The exit status, waiting at most `seconds`; nil if it still runs.
    func exitStatus(within seconds: Double) async -> Int32? {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if let code = status.withLock({ $0 }) { return code }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return status.withLock { $0 }
    }

    /// Ends the process by its PID: SIGTERM, then SIGKILL after 3 s.
    func stop() async {
        if status.withLock({ $0 }) != nil { return }
        try? stdin.fileHandleForWriting.close()
        kill(pid, SIGTERM)
        if await exitStatus(within: 3) == nil {
            kill(pid, SIGKILL)
            _ = await exitStatus(within: 10)
        }
    }
}

extension Trait where Self == ConditionTrait {
    /// Skips the Bumble tests when `BLUETIDE_SKIP_BUMBLE=1` (otherwise a missing Bumble fails them).
    static var readmeBumble: Self {
        .enabled(if: ProcessInfo.processInfo.environment["BLUETIDE_SKIP_BUMBLE"] != "1", "BLUETIDE_SKIP_BUMBLE=1")
    }
}
