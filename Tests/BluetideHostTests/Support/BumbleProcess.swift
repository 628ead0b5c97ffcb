import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A failure of the Bumble harness, with enough context to diagnose it from the test log.
struct BumbleHarnessError: Error, CustomStringConvertible {
    /// What went wrong, including the child's recent output where useful.
    let description: String
}

/// One child process started by the harness (a Bumble script), with its stdout as lines.
///
/// Stdout is read on a dedicated thread and delivered, in order, to a `TimedMailbox`, so tests
/// wait for lines with timeouts. Stderr goes to a log file whose tail is added to error messages.
/// Stdin is a pipe held open by this object: scripts run with `--exit-on-stdin-eof` exit on their
/// own if the test process dies. `stop(grace:)` ends the process by PID: SIGTERM, then SIGKILL.
final class BumbleProcess: Sendable {
    /// Short name used in messages ("controllers", "peripheral", "central").
    let name: String
    /// Operating-system process id.
    let pid: Int32
    /// Where the process's stderr is written.
    let stderrLog: URL
    /// Every stdout line, in order, read with a timeout.
    let lines: TimedMailbox<String>
    private let exit: ExitMonitor
    private let stdinPipe: Pipe
    // `Process` is only touched in `launch` (before sharing) and read for its PID afterwards.
    private let process: Process

    private init(
        name: String, process: Process, stdinPipe: Pipe, stderrLog: URL, lines: TimedMailbox<String>,
        exit: ExitMonitor
    ) {
        self.name = name
        self.process = process
        self.pid = process.processIdentifier
        self.stdinPipe = stdinPipe
        self.stderrLog = stderrLog
        self.lines = lines
        self.exit = exit
    }

    /// Starts `executable` with `arguments`; stderr goes to `stderrLog`.
    static func launch(
        name: String, executable: URL, arguments: [String], stderrLog: URL,
        environment: [String: String] = [:]
    ) throws -> BumbleProcess {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var childEnvironment = ProcessInfo.processInfo.environment
        childEnvironment["PYTHONUNBUFFERED"] = "1"
        for (key, value) in environment { childEnvironment[key] = value }
        process.environment = childEnvironment

        let stdinPipe = Pipe()
        let stdoutPipe = Pipe()
        _ = FileManager.default.createFile(atPath: stderrLog.path, contents: nil)
        let stderrHandle = try FileHandle(forWritingTo: stderrLog)
        process.standardInput = stdinPipe
        process.standardOutput = stdoutPipe
        process.standardError = stderrHandle

        let exit = ExitMonitor()
        process.terminationHandler = { finished in
            let status = finished.terminationStatus
            Task { await exit.record(status) }
        }
        do {
            try process.run()
        } catch {
            try? stderrHandle.close()
            throw BumbleHarnessError(description: "cannot start \(name) (\(executable.path)): \(error)")
        }
        try? stderrHandle.close()

        let lines = TimedMailbox<String>()
        let stream = LineReader.start(fileDescriptor: stdoutPipe.fileHandleForReading.fileDescriptor)
        // Keep the pipe's read end alive for as long as the reader thread uses its descriptor.
        let readEnd = stdoutPipe.fileHandleForReading
        Task {
            for await line in stream { await lines.deliver(line) }
            await lines.finish()
            try? readEnd.close()
        }
        return BumbleProcess(
            name: name, process: process, stdinPipe: stdinPipe, stderrLog: stderrLog, lines: lines, exit: exit)
    }

    /// The next stdout line; `nil` once the process closed stdout. Throws after `timeout`.
    func nextLine(timeout: Duration) async throws -> String? {
        do {
            return try await lines.next(timeout: timeout)
        } catch is TimedMailbox<String>.Timeout {
            throw await failure("no output within \(timeout)")
        }
    }

    /// Reads lines until one satisfies `matches`; throws on timeout (overall) or end of output.
    func firstLine(
        timeout: Duration, describing what: String, where matches: (String) -> Bool
    ) async throws -> String {
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
                throw await failure("\(what) did not arrive: the process closed its output")
            }
            if matches(line) { return line }
        }
    }

    /// Reads JSON lines until one has `key` equal to `value` (e.g. `event` = `ready`).
    func firstJSON(
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
    func jsonLines(timeout: Duration) -> TimedJSONLines {
        TimedJSONLines(process: self, timeout: timeout)
    }

    /// Every stdout line received so far.
    func output() async -> [String] {
        await lines.history
    }

    /// The exit status once the process exits, or `nil` if it still runs after `timeout` (or the
    /// waiting task is cancelled).
    func waitForExit(timeout: Duration) async -> Int32? {
        await exit.wait(timeout: timeout)
    }

    /// The exit status, or `nil` while running.
    var exitStatus: Int32? {
        get async { await exit.exitStatus }
    }

    /// Ends the process by PID: closes its stdin and sends SIGTERM, waits up to `grace`, then
    /// sends SIGKILL and waits for the exit. Safe to call more than once.
    func stop(grace: Duration = .seconds(3)) async {
        if await exit.exitStatus != nil { return }
        try? stdinPipe.fileHandleForWriting.close()
        _ = kill(pid, SIGTERM)
        if await exit.wait(timeout: grace) != nil { return }
        _ = kill(pid, SIGKILL)
        _ = await exit.wait(timeout: .seconds(10))
    }

    /// The last `maxBytes` of the stderr log.
    func stderrTail(maxBytes: Int = 3000) -> String {
        guard let data = try? Data(contentsOf: stderrLog) else { return "" }
        let tail = data.suffix(maxBytes)
        return String(decoding: tail, as: UTF8.self)
    }

    /// An error naming this process, with its recent stdout and stderr.
    func failure(_ message: String) async -> BumbleHarnessError {
        let recent = await lines.history.suffix(30).joined(separator: "\n")
        let status = await exit.exitStatus.map { "exited with status \($0)" } ?? "still running"
        return BumbleHarnessError(
            description: """
                \(name) (pid \(pid), \(status)): \(message)
                --- last stdout lines ---
                \(recent)
                --- stderr tail (\(stderrLog.path)) ---
                \(stderrTail())
                """)
    }
}

/// The JSON lines of a `BumbleProcess` as an `AsyncSequence`; each element is awaited for at most
/// `timeout`, after which the iteration throws a `BumbleHarnessError` with the process's output.
struct TimedJSONLines: AsyncSequence, Sendable {
    typealias Element = JSONValue
    let process: BumbleProcess
    let timeout: Duration

    struct AsyncIterator: AsyncIteratorProtocol {
        let process: BumbleProcess
        let timeout: Duration

        mutating func next() async throws -> JSONValue? {
            while let line = try await process.nextLine(timeout: timeout) {
                if let json = JSONValue(line: line) { return json }
            }
            return nil
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(process: process, timeout: timeout)
    }
}

/// Reads a file descriptor on its own thread and yields complete lines (without the newline).
enum LineReader {
    /// Starts the reader thread; the stream finishes at end of file or on a read error.
    static func start(fileDescriptor: Int32) -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        let thread = Thread {
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { raw in
                    read(fileDescriptor, raw.baseAddress, raw.count)
                }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                pending.append(contentsOf: buffer[0..<count])
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    var line = Array(pending[..<newline])
                    pending.removeSubrange(...newline)
                    if line.last == UInt8(ascii: "\r") { line.removeLast() }
                    continuation.yield(String(decoding: line, as: UTF8.self))
                }
            }
            if !pending.isEmpty { continuation.yield(String(decoding: pending, as: UTF8.self)) }
            continuation.finish()
        }
        thread.name = "BumbleProcess stdout reader"
        thread.start()
        return stream
    }
}
