#if os(Linux)
import BluetideBase
import Foundation
import Glibc
import Synchronization

/// Lines held through a Linux request fd (from `GPIO_V2_GET_LINE_IOCTL`).
///
/// Values go through `GPIO_V2_LINE_SET_VALUES_IOCTL` / `GPIO_V2_LINE_GET_VALUES_IOCTL`. When any
/// line detects edges, a dedicated thread blocks in `poll()` on the request fd and a wake-up
/// pipe (no busy loop), reads whole 48-byte `gpio_v2_line_event` records and yields them to
/// ``edges``. Releasing wakes the thread, which closes the fd and ends the stream.
public final class LinuxGPIOLineRequest: GPIOLineRequest {
    /// The chip's device path.
    public let chipDescription: String
    /// The requested offsets, in request order.
    public let offsets: [UInt32]
    /// Edge events; ends when the request is released (or the fd fails).
    public let edges: AsyncStream<GPIOEdge>
    private let outputs: [Bool]
    private let handle: LinuxLineHandle

    /// Takes ownership of `lineFD`. When any line detects edges, `wakePipe` (read end, write
    /// end) must be a fresh pipe: the reader thread polls its read end and closes both.
    init(chip: String, request: GPIORequest, lineFD: Int32, wakePipe: (read: Int32, write: Int32)?) {
        chipDescription = chip
        offsets = request.offsets
        outputs = request.lines.map(\.settings.isOutput)
        let (stream, continuation) = AsyncStream.makeStream(of: GPIOEdge.self, bufferingPolicy: .bufferingNewest(4096))
        edges = stream
        handle = LinuxLineHandle(lineFD: lineFD, wakeWrite: wakePipe?.write ?? -1, continuation: continuation)
        if let wakePipe {
            let handle = self.handle
            let thread = Thread { handle.readEdges(lineFD: lineFD, wakeRead: wakePipe.read) }
            thread.name = "gpio-edges \(chip)"
            thread.start()
        }
    }

    /// Makes the wake-up pipe of an edge reader (close-on-exec), or the errno of `pipe()`.
    static func makeWakePipe() -> Result<(read: Int32, write: Int32), LinuxSystemCalls.Errno> {
        var fds: [Int32] = [-1, -1]
        guard fds.withUnsafeMutableBufferPointer({ pipe($0.baseAddress) }) == 0 else {
            return .failure(LinuxSystemCalls.Errno(code: errno))
        }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        return .success((fds[0], fds[1]))
    }

    deinit {
        handle.release()
    }

    /// Sets output lines (logical values).
    public func setValues(_ values: [UInt32: Bool]) throws(GPIOError) {
        var bits: UInt64 = 0
        var mask: UInt64 = 0
        for (offset, value) in values {
            guard let position = offsets.firstIndex(of: offset) else {
                throw .notRequested(chip: chipDescription, line: offset)
            }
            guard outputs[position] else { throw .notAnOutput(chip: chipDescription, line: offset) }
            mask |= 1 << UInt64(position)
            if value { bits |= 1 << UInt64(position) }
        }
        guard mask != 0 else { return }
        var buffer = GPIOUAPI.LineValues(bits: bits, mask: mask).bytes
        try handle.ioctl(GPIOUAPI.lineSetValues, &buffer, chip: chipDescription, operation: "GPIO_V2_LINE_SET_VALUES_IOCTL")
    }

    /// Reads logical values (all requested lines when `offsets` is empty).
    public func values(_ wanted: [UInt32]) throws(GPIOError) -> [UInt32: Bool] {
        let list = wanted.isEmpty ? offsets : wanted
        var mask: UInt64 = 0
        var positions: [(UInt32, Int)] = []
        for offset in list {
            guard let position = offsets.firstIndex(of: offset) else {
                throw .notRequested(chip: chipDescription, line: offset)
            }
            mask |= 1 << UInt64(position)
            positions.append((offset, position))
        }
        var buffer = GPIOUAPI.LineValues(bits: 0, mask: mask).bytes
        try handle.ioctl(GPIOUAPI.lineGetValues, &buffer, chip: chipDescription, operation: "GPIO_V2_LINE_GET_VALUES_IOCTL")
        let bits: UInt64
        do {
            bits = try GPIOUAPI.LineValues.decode(buffer).bits
        } catch {
            throw .systemCall(chip: chipDescription, operation: "GPIO_V2_LINE_GET_VALUES_IOCTL", errno: 0, message: error.description)
        }
        var result: [UInt32: Bool] = [:]
        for (offset, position) in positions { result[offset] = bits & (1 << UInt64(position)) != 0 }
        return result
    }

    /// Gives the lines back (closes the request fd) and ends ``edges``.
    public func release() {
        handle.release()
    }
}

/// The request fd, the reader's wake-up pipe and the edge continuation, shared by the request
/// and its reader thread.
///
/// Thread safety: every fd use except the reader's own `poll`/`read` happens inside `state`'s
/// lock, and only the reader thread closes the fd (inside the lock) when it has a reader, so no
/// ioctl can hit a closed (or reused) descriptor. Sendable because its only stored properties
/// are a `Mutex` and an `AsyncStream.Continuation`, both Sendable.
final class LinuxLineHandle: Sendable {
    struct State {
        /// Request fd, −1 once closed.
        var lineFD: Int32
        /// Write end of the wake-up pipe, −1 when there is no reader (or it has ended).
        var wakeWrite: Int32
        /// True once released by the user.
        var released = false
    }

    private let state: Mutex<State>
    private let continuation: AsyncStream<GPIOEdge>.Continuation

    init(lineFD: Int32, wakeWrite: Int32, continuation: AsyncStream<GPIOEdge>.Continuation) {
        state = Mutex(State(lineFD: lineFD, wakeWrite: wakeWrite))
        self.continuation = continuation
    }

    /// Runs an ioctl on the request fd under the lock.
    func ioctl(_ request: UInt, _ buffer: inout [UInt8], chip: String, operation: String) throws(GPIOError) {
        let code: Int32? = try state.withLock { (state: inout State) throws(GPIOError) -> Int32? in
            guard !state.released, state.lineFD >= 0 else { throw .released(chip: chip) }
            return LinuxSystemCalls.ioctl(state.lineFD, request, &buffer)
        }
        if let code {
            throw .systemCall(chip: chip, operation: operation, errno: code, message: LinuxSystemCalls.message(code))
        }
    }

    /// Marks the request released: wakes the reader (which closes the fd), or closes it here
    /// when there is no reader. Idempotent.
    func release() {
        let finishHere = state.withLock { (state: inout State) -> Bool in
            guard !state.released else { return false }
            state.released = true
            if state.wakeWrite >= 0 {
                var byte: UInt8 = 1
                _ = write(state.wakeWrite, &byte, 1)
                return false
            }
            if state.lineFD >= 0 {
                close(state.lineFD)
                state.lineFD = -1
            }
            return true
        }
        if finishHere { continuation.finish() }
    }

    /// The reader thread's loop: wait for events or the wake-up, decode, yield; then clean up.
    func readEdges(lineFD: Int32, wakeRead: Int32) {
        var buffer = [UInt8](repeating: 0, count: GPIOUAPI.lineEventSize * 64)
        var fds = [pollfd(fd: lineFD, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
        loop: while true {
            fds[0].revents = 0
            fds[1].revents = 0
            let ready = fds.withUnsafeMutableBufferPointer { poll($0.baseAddress, 2, -1) }
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            if fds[1].revents != 0 { break }
            if fds[0].revents & Int16(POLLIN) != 0 {
                let count = buffer.withUnsafeMutableBytes { read(lineFD, $0.baseAddress, $0.count) }
                if count < 0 {
                    if errno == EINTR || errno == EAGAIN { continue }
                    break
                }
                if count == 0 { break }
                let whole = count - count % GPIOUAPI.lineEventSize
                if let events = try? GPIOUAPI.decodeLineEvents(Array(buffer[0..<whole])) {
                    for event in events { continuation.yield(event) }
                }
            } else if fds[0].revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 {
                break loop
            }
        }
        state.withLock { state in
            if state.lineFD >= 0 { close(state.lineFD) }
            state.lineFD = -1
            if state.wakeWrite >= 0 { close(state.wakeWrite) }
            state.wakeWrite = -1
        }
        close(wakeRead)
        continuation.finish()
    }
}
#endif
