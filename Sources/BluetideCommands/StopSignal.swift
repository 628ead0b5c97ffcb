import Foundation
import Synchronization

/// What ends a long-running command: SIGINT (Ctrl-C), SIGTERM, SIGHUP, standard output closing (its
/// reader went away), optionally the end of standard input or a duration. Caught from the moment of ``install(onStdinEOF:duration:)``, so a signal
/// sent right after a READY line is not lost.
///
/// Stopping is bounded: a command has ``stopLimit`` from the first signal to finish its clean-up
/// (its polite steps are bounded by ``PromptShutdown`` well within it). Past that — a controller
/// that stopped answering, a transport stuck in the middle of a packet — the process says so in
/// one line on standard error and exits with 128 + the signal's number, so Ctrl-C is honoured
/// within about two seconds whatever the transport is doing. A second signal ends it at once.
final class StopSignal {
    private static let interrupted = Mutex(false)

    /// Longest time from a stop signal to the process's exit (see the type's notes).
    static let stopLimit: Duration = .milliseconds(1800)

    /// The signals that stop a command, with their names: Ctrl-C, `kill`, and a closed terminal
    /// (SIGHUP: the session's end is stored like for the others).
    static let signals: [(number: Int32, name: String)] = [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM"), (SIGHUP, "SIGHUP")]

    /// True once a SIGINT (Ctrl-C) stopped a wait: the command then exits with status 130
    /// (``ExitStatus/interrupted``) after it has cleaned up.
    static var wasInterrupted: Bool { interrupted.withLock { $0 } }

    private let reasons: AsyncStream<String>
    private let sources: [any DispatchSourceSignal]
    /// Ends the wait from anywhere (e.g. when the controller goes away), with this reason.
    let stopper: AsyncStream<String>.Continuation

    private init(reasons: AsyncStream<String>, sink: AsyncStream<String>.Continuation, sources: [any DispatchSourceSignal]) {
        self.reasons = reasons
        self.stopper = sink
        self.sources = sources
    }

    /// Starts catching SIGINT, SIGTERM and SIGHUP (and watching stdin when `onStdinEOF`; and a timer of
    /// `duration` seconds when given).
    static func install(onStdinEOF: Bool = false, duration: Double? = nil) -> StopSignal {
        let (reasons, sink) = AsyncStream<String>.makeStream()
        var sources: [any DispatchSourceSignal] = []
        for (number, name) in StopSignal.signals {
            signal(number, SIG_IGN)  // delivered to the dispatch source instead
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                if number == SIGINT { StopSignal.interrupted.withLock { $0 = true } }
                StopSignal.armStopLimit(signal: number, name: name)
                sink.yield(name)
            }
            source.resume()
            sources.append(source)
        }
        // Nobody reads the output any more (`… | head -1`): end the orderly way, quietly.
        StandardStreams.output.onClose { sink.yield("standard output closed") }
        if onStdinEOF {
            // A detached thread does the blocking reads; it never holds up the exit.
            Thread.detachNewThread {
                var buffer = [UInt8](repeating: 0, count: 1024)
                while read(STDIN_FILENO, &buffer, buffer.count) > 0 {}
                sink.yield("end of standard input")
            }
        }
        if let duration {
            Task {
                try? await Task.sleep(for: .seconds(duration))
                sink.yield("end of --duration")
            }
        }
        return StopSignal(reasons: reasons, sink: sink, sources: sources)
    }

    /// Returns what stopped the wait: "SIGINT", "SIGTERM", "SIGHUP", "standard output closed",
    /// "end of standard input" or "end of --duration"; default signal handling is restored.
    @discardableResult
    func wait() async -> String {
        var iterator = reasons.makeAsyncIterator()
        let reason = await iterator.next() ?? "stopped"
        for source in sources { source.cancel() }
        for (number, _) in Self.signals { signal(number, SIG_DFL) }
        return reason
    }

    private static let stopLimitArmed = Mutex(false)

    /// After the first stop signal: if the process still runs ``stopLimit`` later, it exits with
    /// 128 + `signal`. The timer runs on a dispatch queue, not the cooperative pool, so tasks
    /// stuck waiting on the controller cannot hold it up.
    private static func armStopLimit(signal number: Int32, name: String) {
        let first = stopLimitArmed.withLock { armed in
            defer { armed = true }
            return !armed
        }
        guard first else { return }
        let limit = stopLimit.components
        let nanoseconds = Int(limit.seconds) * 1_000_000_000 + Int(limit.attoseconds / 1_000_000_000)
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) {
            StandardStreams.error.line(
                "bluetide: stopped by \(name) before the clean-up finished (the controller or transport did not answer within \(Double(nanoseconds) / 1e9) s)")
            _exit(128 + number)
        }
    }
}

/// Standard output written a line at a time, also when it is a pipe or a file, so a log or a
/// supervising program sees each line of a long-running command as it happens.
enum LineOutput {
    /// Prints `line` and flushes it at once.
    static func print(_ line: String) {
        StandardStreams.output.line(line)
    }
}
