import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One child process started by a test (a Bumble script or app, or any executable), with its
/// stdout and stderr as lines.
///
/// Each stream is read on a dedicated thread (never on the cooperative pool) and delivered, in
/// order, to a `TimedMailbox`, so tests wait for lines with timeouts. Stderr lines are also
/// copied to `stderrLog` when one is given. Stdin is a pipe held open by this object: scripts run
/// with `--exit-on-stdin-eof` exit on their own if the test process dies; tests talk to a process
/// with `writeToStdin(_:)` and end its input with `closeStdin()`. `waitForExit(timeout:)` waits for
/// the exit, `waitForCompletion(timeout:)` also for the end of its output. `stop(grace:)` ends the
/// process by PID: SIGTERM, then SIGKILL.
///
/// Start Python programs with `launchPython(_:arguments:name:stderrLog:environment:)`.
public final class BumbleProcess: Sendable {
    /// Which of the child's output streams to read.
    public enum Output: Sendable, CustomStringConvertible {
        /// Standard output (the interop scripts print their JSON events here).
        case stdout
        /// Standard error (Bumble's apps log here).
        case stderr
        /// Lines of either stream, in arrival order (each stream's own order is kept).
        case either

        public var description: String {
            switch self {
            case .stdout: "stdout"
            case .stderr: "stderr"
            case .either: "output"
            }
        }
    }

    /// Short name used in messages ("controllers", "peripheral", "bench").
    public let name: String
    /// Operating-system process id.
    public let pid: Int32
    /// Where the process's stderr is copied, if anywhere.
    public let stderrLog: URL?
    /// Every stdout line, in order, read with a timeout.
    public let lines: TimedMailbox<String>
    /// Every stderr line, in order, read with a timeout.
    public let stderrLines: TimedMailbox<String>
    /// Every line of either stream, in arrival order, read with a timeout.
    public let allLines: TimedMailbox<String>
    private let exit: ExitMonitor
    /// Records (status 0) once stdout and stderr have both ended and every line was delivered.
    private let outputEnd: ExitMonitor
    private let stdinPipe: Pipe
    /// Serial queue for blocking stdin writes, off the cooperative pool and in call order.
    private let stdinQueue: DispatchQueue
    // `Process` is only touched in `launch` (before sharing) and read for its PID afterwards.
    private let process: Process

    private init(
        name: String, process: Process, stdinPipe: Pipe, stderrLog: URL?, lines: TimedMailbox<String>,
        stderrLines: TimedMailbox<String>, allLines: TimedMailbox<String>, exit: ExitMonitor,
        outputEnd: ExitMonitor
    ) {
        self.name = name
        self.process = process
        self.pid = process.processIdentifier
        self.stdinPipe = stdinPipe
        self.stderrLog = stderrLog
        self.lines = lines
        self.stderrLines = stderrLines
        self.allLines = allLines
        self.exit = exit
        self.outputEnd = outputEnd
        self.stdinQueue = DispatchQueue(label: "\(name) stdin writer")
    }

    /// A new, empty configuration folder (in the temporary directory) for one child, given to
    /// it as `XDG_CONFIG_HOME`, so no test reads or writes the user's real configuration
    /// (bluetide's bond file above all) and no child sees the bonds another test's child kept
    /// (tests pair with peers that share an address); a test whose children must share bonds
    /// passes its own `XDG_CONFIG_HOME` in `environment`.
    public static func privateConfigHome() -> String {
        let path = NSTemporaryDirectory() + "bluetide-tests-config-\(getpid())-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Starts `executable` with `arguments` (the environment is this process's, plus
    /// `PYTHONUNBUFFERED=1` and a new ``privateConfigHome()`` as `XDG_CONFIG_HOME`, plus `environment`).
    /// Stderr is also copied to `stderrLog` when given.
    ///
    /// `keepsExitWatch`: start the program under a `/bin/sh` parent that forwards SIGTERM and
    /// SIGINT to it and exits with it. Needed for daemons that close every inherited descriptor
    /// at start (avahi-daemon does): Foundation's `Process` learns of an exit when a socket the
    /// child inherited closes, and then calls a *blocking* `waitpid` on one monitor thread shared
    /// by every `Process` of this test process, so such a daemon would hide every other child's
    /// exit until it ends. The shell keeps its copy of the socket open until the daemon is gone.
    public static func launch(
        name: String, executable: URL, arguments: [String], stderrLog: URL? = nil,
        environment: [String: String] = [:], workingDirectory: URL? = nil, keepsExitWatch: Bool = false
    ) throws -> BumbleProcess {
        let process = Process()
        if keepsExitWatch {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", Self.exitWatchScript, executable.path] + arguments
        } else {
            process.executableURL = executable
            process.arguments = arguments
        }
        if let workingDirectory { process.currentDirectoryURL = workingDirectory }
        var childEnvironment = ProcessInfo.processInfo.environment
        childEnvironment["PYTHONUNBUFFERED"] = "1"
        if environment["XDG_CONFIG_HOME"] == nil { childEnvironment["XDG_CONFIG_HOME"] = privateConfigHome() }
        for (key, value) in environment { childEnvironment[key] = value }
        process.environment = childEnvironment

        var logHandle: FileHandle?
        if let stderrLog {
            _ = FileManager.default.createFile(atPath: stderrLog.path, contents: nil)
            logHandle = try FileHandle(forWritingTo: stderrLog)
        }
        let stdinPipe = Pipe()
        let stdoutPipe = Pipe()
        let stderrPipe = Pipe()
        process.standardInput = stdinPipe
        process.standardOutput = stdoutPipe
        process.standardError = stderrPipe

        let exit = ExitMonitor()
        let outputEnd = ExitMonitor()
        process.terminationHandler = { finished in
            let status = finished.terminationStatus
            let bySignal = finished.terminationReason == .uncaughtSignal
            Task { await exit.record(status, bySignal: bySignal) }
        }
        do {
            try withSignalsUnblocked { try process.run() }
        } catch {
            try? logHandle?.close()
            throw BumbleHarnessError(description: "cannot start \(name) (\(executable.path)): \(error)")
        }

        let lines = TimedMailbox<String>()
        let stderrLines = TimedMailbox<String>()
        let allLines = TimedMailbox<String>()
        let stdoutPump = pump(stdoutPipe, into: lines, and: allLines, thread: "\(name) stdout reader", copy: nil)
        let stderrPump = pump(stderrPipe, into: stderrLines, and: allLines, thread: "\(name) stderr reader", copy: logHandle)
        Task {
            await stdoutPump.value
            await stderrPump.value
            await allLines.finish()
            await outputEnd.record(0)
        }
        return BumbleProcess(
            name: name, process: process, stdinPipe: stdinPipe, stderrLog: stderrLog, lines: lines,
            stderrLines: stderrLines, allLines: allLines, exit: exit, outputEnd: outputEnd)
    }

    /// The `/bin/sh` parent of a `keepsExitWatch` child: runs `$0 "$@"` with the shell's stdin
    /// (a background job would get /dev/null), forwards SIGTERM and SIGINT (a shell without job
    /// control starts background jobs with SIGINT ignored, so SIGINT reaches only programs that
    /// set their own handler), waits (blocking, no polling) until the program has ended and exits
    /// with its status.
    private static let exitWatchScript = #"""
        exec 3<&0
        "$0" "$@" <&3 3<&- &
        child=$!
        exec 3<&-
        trap 'kill -TERM "$child" 2>/dev/null' TERM
        trap 'kill -INT "$child" 2>/dev/null' INT
        status=0
        while :; do
            wait "$child"; status=$?
            kill -0 "$child" 2>/dev/null || break
        done
        exit "$status"
        """#

    /// Runs `body` with no signals blocked on the calling thread, then restores its mask.
    ///
    /// A child inherits the signal mask of the thread that spawns it, and the cooperative pool's
    /// threads block most signals: without this, SIGTERM would stay pending in every child (so
    /// `stop(grace:)` could only end it with SIGKILL, after the grace period).
    private static func withSignalsUnblocked<T>(_ body: () throws -> T) rethrows -> T {
        var none = sigset_t()
        var saved = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, &saved)
        defer { pthread_sigmask(SIG_SETMASK, &saved, nil) }
        return try body()
    }

    /// Reads `pipe` on its own thread and delivers its lines to `mailbox` (then finishes it) and
    /// to `shared` (which the caller finishes once every stream ended).
    private static func pump(
        _ pipe: Pipe, into mailbox: TimedMailbox<String>, and shared: TimedMailbox<String>, thread: String,
        copy: FileHandle?
    ) -> Task<Void, Never> {
        let readEnd = pipe.fileHandleForReading
        let stream = LineReader.start(fileDescriptor: readEnd.fileDescriptor, threadName: thread, copy: copy)
        return Task {
            for await line in stream {
                await mailbox.deliver(line)
                await shared.deliver(line)
            }
            await mailbox.finish()
            // Keep the read end alive for as long as the reader thread uses its descriptor.
            try? readEnd.close()
        }
    }

    private func mailbox(_ output: Output) -> TimedMailbox<String> {
        switch output {
        case .stdout: lines
        case .stderr: stderrLines
        case .either: allLines
        }
    }

    /// The next line of `output`; `nil` once the stream ended. Throws after `timeout`.
    public func nextLine(from output: Output = .stdout, timeout: Duration) async throws -> String? {
        do {
            return try await mailbox(output).next(timeout: timeout)
        } catch is TimedMailbox<String>.Timeout {
            throw await failure("no \(output) within \(timeout)")
        }
    }

    /// Reads lines of `output` until one satisfies `matches`; throws on timeout (overall) or at
    /// the end of the stream. `what` names the awaited line in the error.
    public func firstLine(
        from output: Output = .stdout, timeout: Duration, describing what: String,
        where matches: (String) -> Bool
    ) async throws -> String {
        let lines = mailbox(output)
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { throw await failure("\(what) did not arrive within \(timeout)") }
            let line: String?
            do {
                line = try await lines.next(timeout: remaining)
            } catch is TimedMailbox<String>.Timeout {
                throw await failure("\(what) did not arrive within \(timeout)")
            }
            guard let line else {
                throw await failure("\(what) did not arrive: the process closed its \(output)")
            }
            if matches(line) { return line }
        }
    }

    /// Reads stdout JSON lines until one has `key` equal to `value` (e.g. `event` = `ready`).
    public func firstJSON(
        _ key: String, _ value: String, timeout: Duration
    ) async throws -> JSONValue {
        let line = try await firstLine(timeout: timeout, describing: "\(key) \"\(value)\"") { line in
            JSONValue(line: line)?[key]?.string == value
        }
        guard let json = JSONValue(line: line) else {
            throw await failure("line is not JSON: \(line)")
        }
        return json
    }

    /// Stdout lines as an `AsyncSequence` of JSON objects (non-JSON lines are skipped). Each
    /// element must arrive within `timeout`, or iteration throws.
    public func jsonLines(timeout: Duration) -> TimedJSONLines {
        TimedJSONLines(process: self, timeout: timeout)
    }

    /// Every line of `output` received so far.
    public func output(_ output: Output = .stdout) async -> [String] {
        await mailbox(output).history
    }

    /// The exit status once the process exits, or `nil` if it still runs after `timeout` (or the
    /// waiting task is cancelled).
    ///
    /// The exit is often seen before the reader threads have drained the pipes, so this then
    /// waits (up to 5 s more, within `timeout`) for stdout and stderr to end: `output(_:)` after
    /// it holds the last lines, such as the one-line error of a refused command (a CI run once
    /// saw status 2 with an empty stderr). A child of the process that keeps the pipes open only
    /// costs that grace; ``waitForCompletion(timeout:)`` insists on the end of the output.
    public func waitForExit(timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        guard let status = await exit.wait(timeout: timeout) else { return nil }
        let remaining = ContinuousClock.now.duration(to: deadline)
        _ = await outputEnd.wait(timeout: max(min(remaining, .seconds(5)), .zero))
        return status
    }

    /// Waits (up to `timeout` in all) for the process to exit and for its stdout and stderr to
    /// end, so `output(_:)` then holds everything it wrote. Returns the exit status, or `nil` if
    /// the process still runs or its output is still open after `timeout` (for example because a
    /// child of its own keeps the pipes open).
    public func waitForCompletion(timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        guard let status = await exit.wait(timeout: timeout) else { return nil }
        let remaining = ContinuousClock.now.duration(to: deadline)
        guard await outputEnd.wait(timeout: max(remaining, .zero)) != nil else { return nil }
        return status
    }

    /// The exit status, or `nil` while running.
    public var exitStatus: Int32? {
        get async { await exit.exitStatus }
    }

    /// True when an uncaught signal ended the process (then `exitStatus` is the signal number),
    /// false when it exited by itself; `nil` while it runs.
    public var endedBySignal: Bool? {
        get async { await exit.endedBySignal }
    }

    /// Writes `text` to the process's stdin, e.g. one command line (`"QUIT\n"`).
    ///
    /// The write runs on a serial queue of this process (a full pipe blocks that queue, never the
    /// cooperative pool); writes arrive in call order. Throws when stdin is closed or the process
    /// is gone. `SIGPIPE` is ignored in the test process from the first call on, so writing to a
    /// process that died is an error here instead of killing the test runner.
    public func writeToStdin(_ text: String) async throws {
        _ = Self.ignoreBrokenPipeSignal
        let handle = stdinPipe.fileHandleForWriting
        let data = Data(text.utf8)
        let name = name
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            stdinQueue.async {
                do {
                    try handle.write(contentsOf: data)
                    continuation.resume()
                } catch {
                    continuation.resume(
                        throwing: BumbleHarnessError(description: "cannot write to \(name)'s stdin: \(error)"))
                }
            }
        }
    }

    /// Closes the process's stdin (the process reads end of file), after every earlier
    /// `writeToStdin(_:)`. Safe to call more than once.
    public func closeStdin() async {
        let handle = stdinPipe.fileHandleForWriting
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            stdinQueue.async {
                try? handle.close()
                continuation.resume()
            }
        }
    }

    /// Ignores `SIGPIPE` for the whole test process, once.
    private static let ignoreBrokenPipeSignal: Void = {
        _ = signal(SIGPIPE, SIG_IGN)
    }()

    /// Ends the process by PID: closes its stdin and sends SIGTERM, waits up to `grace`, then
    /// sends SIGKILL and waits (up to 10 s) for the exit. Safe to call more than once.
    public func stop(grace: Duration = .seconds(3)) async {
        if await exit.exitStatus != nil { return }
        try? stdinPipe.fileHandleForWriting.close()
        _ = kill(pid, SIGTERM)
        if await exit.wait(timeout: grace) != nil { return }
        _ = kill(pid, SIGKILL)
        _ = await exit.wait(timeout: .seconds(10))
    }

    /// The last `maxBytes` of what the process wrote to stderr so far.
    public func stderrTail(maxBytes: Int = 3000) async -> String {
        let text = await stderrLines.history.joined(separator: "\n")
        return String(decoding: Array(text.utf8).suffix(maxBytes), as: UTF8.self)
    }

    /// An error naming this process, with its recent stdout and stderr.
    public func failure(_ message: String) async -> BumbleHarnessError {
        let recent = await lines.history.suffix(30).joined(separator: "\n")
        let status = await exit.exitStatus.map { "exited with status \($0)" } ?? "still running"
        let log = stderrLog.map { " (\($0.path))" } ?? ""
        let stderr = await stderrTail()
        return BumbleHarnessError(
            description: """
                \(name) (pid \(pid), \(status)): \(message)
                --- last stdout lines ---
                \(recent)
                --- stderr tail\(log) ---
                \(stderr)
                """)
    }
}
