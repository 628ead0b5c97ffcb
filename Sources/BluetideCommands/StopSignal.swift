import Foundation
import Synchronization

/// What ends a long-running command: SIGINT (Ctrl-C), SIGTERM, standard output closing (its
/// reader went away), optionally the end of standard input or a duration. Caught from the moment of ``install(onStdinEOF:duration:)``, so a signal
/// sent right after a READY line is not lost.
final class StopSignal {
    private static let interrupted = Mutex(false)

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

    /// Starts catching SIGINT and SIGTERM (and watching stdin when `onStdinEOF`; and a timer of
    /// `duration` seconds when given).
    static func install(onStdinEOF: Bool = false, duration: Double? = nil) -> StopSignal {
        let (reasons, sink) = AsyncStream<String>.makeStream()
        var sources: [any DispatchSourceSignal] = []
        for (number, name) in [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM")] {
            signal(number, SIG_IGN)  // delivered to the dispatch source instead
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                if number == SIGINT { StopSignal.interrupted.withLock { $0 = true } }
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

    /// Returns what stopped the wait: "SIGINT", "SIGTERM", "standard output closed", "end of
    /// standard input" or "end of --duration"; default signal handling is restored.
    @discardableResult
    func wait() async -> String {
        var iterator = reasons.makeAsyncIterator()
        let reason = await iterator.next() ?? "stopped"
        for source in sources { source.cancel() }
        for number in [SIGINT, SIGTERM] { signal(number, SIG_DFL) }
        return reason
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
