import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A named pipe (FIFO) fed by a thread of its own in two parts: the first lines, then — only
/// once the test calls ``release()`` — the rest. A reader that must reach the end of the file
/// before it gives anything out can therefore give nothing out before ``release()``: a test that
/// waits for the reader's first value before releasing shows the reader streams (and, with a hang
/// guard around the wait, fails rather than hangs when it does not).
public final class FIFOFeeder: Sendable {
    /// The FIFO's path.
    public let path: String
    private let gate = DispatchSemaphore(value: 0)
    private let state = Mutex(State())

    private struct State {
        var linesWritten = 0
        var finished = false
        var error: String?
    }

    /// Makes a FIFO and starts the thread that writes `head`, waits for ``release()``, then
    /// writes `tail` (lines, each followed by a line feed; `tail` is made on the writer's thread,
    /// so a long log need not be held) and closes the pipe. The write blocks until a reader opens it.
    public init(head: [String], tail: @escaping @Sendable (_ write: (String) -> Void) -> Void) throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("fifo-\(UUID().uuidString.prefix(8)).jsonl").path
        guard mkfifo(path, 0o600) == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: ["path": path, "errno": errno]) }
        let thread = Thread { [self] in feed(head: head, tail: tail) }
        thread.name = "fifo-feeder"
        thread.start()
    }

    /// Lets the writer go on with the rest of the lines.
    public func release() { gate.signal() }

    /// How many lines have been written so far.
    public var linesWritten: Int { state.withLock { $0.linesWritten } }
    /// Whether every line has been written and the pipe closed.
    public var finished: Bool { state.withLock { $0.finished } }
    /// What went wrong writing, if anything (e.g. the reader closed the pipe early).
    public var error: String? { state.withLock { $0.error } }

    /// Removes the FIFO (after the test; a writer still blocked is released first).
    public func remove() {
        gate.signal()
        unlink(path)
    }

    private func feed(head: [String], tail: @Sendable ((String) -> Void) -> Void) {
        signal(SIGPIPE, SIG_IGN)
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else {
            state.withLock { $0.error = "open: errno \(errno)" }
            return
        }
        defer { close(fd) }
        var pending: [UInt8] = []
        var failed = false
        func flush() {
            guard !failed, !pending.isEmpty else { return }
            var offset = 0
            while offset < pending.count {
                let count = pending.withUnsafeBytes { write(fd, $0.baseAddress! + offset, pending.count - offset) }
                if count < 0 {
                    if errno == EINTR { continue }
                    state.withLock { $0.error = "write: errno \(errno)" }
                    failed = true
                    return
                }
                offset += count
            }
            pending.removeAll(keepingCapacity: true)
        }
        func emit(_ line: String) {
            pending.append(contentsOf: line.utf8)
            pending.append(UInt8(ascii: "\n"))
            state.withLock { $0.linesWritten += 1 }
            if pending.count >= 32 * 1024 { flush() }
        }
        for line in head { emit(line) }
        flush()
        gate.wait()
        tail(emit)
        flush()
        state.withLock { $0.finished = !failed }
    }
}
