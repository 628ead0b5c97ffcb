import BluetideSupport
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
final class StopSignal: Sendable {
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
    /// This wait's entry in ``SignalPipe/listeners``.
    private let listener: UUID
    /// Ends the wait from anywhere (e.g. when the controller goes away), with this reason.
    let stopper: AsyncStream<String>.Continuation

    private init(reasons: AsyncStream<String>, sink: AsyncStream<String>.Continuation, listener: UUID) {
        self.reasons = reasons
        self.stopper = sink
        self.listener = listener
    }

    /// Starts catching SIGINT, SIGTERM and SIGHUP (and watching stdin when `onStdinEOF`; and a timer of
    /// `duration` seconds when given).
    /// The duration is measured on `clock` (a command in virtual time passes it in virtual time).
    static func install(onStdinEOF: Bool = false, duration: Double? = nil, clock: BluetideClock = .continuous) -> StopSignal {
        let (reasons, sink) = AsyncStream<String>.makeStream()
        let listener = UUID()
        SignalPipe.listeners.withLock { listeners in
            listeners[listener] = { number in
                guard let name = StopSignal.signals.first(where: { $0.number == number })?.name else { return }
                if number == SIGINT { StopSignal.interrupted.withLock { $0 = true } }
                StopSignal.armStopLimit(signal: number, name: name)
                sink.yield(name)
            }
        }
        for (number, _) in StopSignal.signals { SignalPipe.catchSignal(number) }
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
                try? await clock.sleep(until: clock.now.advanced(by: .seconds(duration)), tolerance: nil)
                sink.yield("end of --duration")
            }
        }
        return StopSignal(reasons: reasons, sink: sink, listener: listener)
    }

    /// Returns what stopped the wait: "SIGINT", "SIGTERM", "SIGHUP", "standard output closed",
    /// "end of standard input" or "end of --duration"; default signal handling is restored.
    @discardableResult
    func wait() async -> String {
        var iterator = reasons.makeAsyncIterator()
        let reason = await iterator.next() ?? "stopped"
        let nobodyWaits = SignalPipe.listeners.withLock { listeners in
            listeners[listener] = nil
            return listeners.isEmpty
        }
        if nobodyWaits { for (number, _) in Self.signals { signal(number, SIG_DFL) } }
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
        let nanoseconds = Int(clamping: stopLimit.wholeNanoseconds)
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) {
            StandardStreams.error.line(
                "bluetide: stopped by \(name) before the clean-up finished (the controller or transport did not answer within \(Double(nanoseconds) / 1e9) s)")
            _exit(128 + number)
        }
    }
}

/// Stop signals reach the waiting commands through a pipe that a plain C signal handler writes
/// (the self-pipe pattern), read by one thread that calls the listeners. The handler is set with
/// `sigaction`, synchronously, so a signal sent the moment ``StopSignal/install(onStdinEOF:duration:)``
/// returns is caught. (A dispatch signal source registers itself later, on libdispatch's manager
/// thread, while the disposition is already `SIG_IGN`: a signal sent right after a command's
/// "advertising as" line was dropped and the command ran on, seen under a busy test run.)
private enum SignalPipe {
    /// The pipe's write end, for the handler. Safe without a lock: it is written once, inside
    /// ``started``'s one-time initialisation, before any handler that reads it is installed, and
    /// never changed after.
    nonisolated(unsafe) static var writeEnd: Int32 = -1

    /// What each installed ``StopSignal`` does with a signal number.
    static let listeners = Mutex<[UUID: @Sendable (Int32) -> Void]>([:])

    /// Creates the pipe and starts its reader thread, once per process.
    private static let started: Void = {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        // A full pipe (a flood of signals nobody reads yet) drops the extra bytes instead of
        // blocking the handler.
        _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
        writeEnd = ends[1]
        let readEnd = ends[0]
        Thread.detachNewThread {
            var byte: UInt8 = 0
            while true {
                let count = read(readEnd, &byte, 1)
                if count == 1 {
                    let number = Int32(byte)
                    for listener in listeners.withLock({ Array($0.values) }) { listener(number) }
                } else if count < 0, errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }()

    /// Catches `number` from now on: the handler only writes its number to the pipe
    /// (async-signal-safe).
    static func catchSignal(_ number: Int32) {
        _ = started
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { number in
            var byte = UInt8(truncatingIfNeeded: number)
            _ = write(SignalPipe.writeEnd, &byte, 1)
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = Int32(SA_RESTART)
        sigaction(number, &action, nil)
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
