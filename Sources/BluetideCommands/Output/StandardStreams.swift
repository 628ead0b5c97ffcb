import Foundation
import Synchronization

/// The one writer of every command's standard output and standard error.
///
/// Each line leaves in one `write(2)` loop under a lock, so lines from different tasks never
/// interleave and a pipe or a log sees each line as it happens. A stream whose reader went away
/// (a closed pipe: `bluetide controllers … | head -1`, a closed terminal) is never a crash: the
/// first failed write marks the stream closed, later output to it is dropped, and whoever asked
/// (``StreamWriter/onClose(_:)``: ``StopSignal`` does) is told once, so a long-running command
/// ends the orderly way. `SIGPIPE` is ignored from ``BluetideMain`` on, so a closed pipe is an
/// `EPIPE` here rather than a signal that kills the process mid-cleanup.
enum StandardStreams {
    /// Standard output: the command's results.
    static let output = StreamWriter(descriptor: STDOUT_FILENO)
    /// Standard error: failures, warnings, logs, prompts and progress.
    static let error = StreamWriter(descriptor: STDERR_FILENO)

    /// Makes a write to a closed pipe fail with `EPIPE` instead of killing the process (once per process).
    static func ignoreBrokenPipeSignal() {
        _ = ignoringBrokenPipe
    }

    private static let ignoringBrokenPipe: Void = {
        _ = signal(SIGPIPE, SIG_IGN)
    }()
}

/// Writes text to one file descriptor, whole lines at a time, and never traps: see ``StandardStreams``.
final class StreamWriter: Sendable {
    private struct State {
        /// The error that closed the stream (`EPIPE`, `EIO`…), once a write failed.
        var failure: Int32?
        var handlers: [@Sendable () -> Void] = []
    }

    private let descriptor: Int32
    private let state = Mutex(State())

    /// A writer of `descriptor`.
    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Writes `text` and a line feed; dropped once the stream is closed.
    func line(_ text: String) {
        write(text + "\n")
    }

    /// Writes `text` as it is (progress bars, prompts without a line feed); dropped once the
    /// stream is closed. Returns false when the text did not (all) go out.
    @discardableResult
    func write(_ text: String) -> Bool {
        var bytes = Array(text.utf8)
        let (ok, handlers): (Bool, [@Sendable () -> Void]) = state.withLock { state in
            guard state.failure == nil else { return (false, []) }
            let code = Self.writeAll(descriptor, &bytes)
            guard code != 0 else { return (true, []) }
            state.failure = code
            defer { state.handlers = [] }
            return (false, state.handlers)
        }
        for handler in handlers { handler() }
        return ok
    }

    /// True once a write failed because nobody reads the stream any more.
    var isClosed: Bool { state.withLock { $0.failure != nil } }

    /// Calls `handler` once when the stream closes (at once if it has).
    func onClose(_ handler: @escaping @Sendable () -> Void) {
        let closed = state.withLock { state in
            if state.failure == nil { state.handlers.append(handler) }
            return state.failure != nil
        }
        if closed { handler() }
    }

    /// Writes every byte: retries after a signal (`EINTR`), waits for room when the descriptor
    /// is non-blocking (`EAGAIN`). Returns 0, or the `errno` that stopped it.
    private static func writeAll(_ descriptor: Int32, _ bytes: inout [UInt8]) -> Int32 {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written >= 0 {
                offset += written
                continue
            }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK {
                var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                _ = poll(&ready, 1, 1000)
                continue
            }
            return code
        }
        return 0
    }
}
