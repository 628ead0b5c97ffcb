#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Synchronization

/// Reads and writes one file descriptor (a pseudo-terminal, a socket, standard input/output)
/// from Swift concurrency without blocking the cooperative pool: each blocking call runs on a
/// serial dispatch queue of its own (one for reads, one for writes), and a read waits in
/// `poll(2)` beside a wake-up pipe so ``stop()`` ends it at once. Reads happen only when asked
/// for (the caller's pace is the back-pressure); writes complete in call order.
public final class FileDescriptorPort: Sendable {
    /// The descriptor read from.
    public let input: Int32
    /// The descriptor written to.
    public let output: Int32
    private let wake: (read: Int32, write: Int32)
    private let readQueue = DispatchQueue(label: "bluetide.serial.port.read")
    private let writeQueue = DispatchQueue(label: "bluetide.serial.port.write")
    private let stopped = Mutex(false)
    private let closesDescriptors: Bool

    /// A port over `input` and `output` (the same descriptor for a pty or a socket). With
    /// `closesDescriptors` they are closed by ``close()``.
    public init(input: Int32, output: Int32, closesDescriptors: Bool = false) throws(PortError) {
        self.input = input
        self.output = output
        self.closesDescriptors = closesDescriptors
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw PortError.system("pipe", errno) }
        wake = (fds[0], fds[1])
    }

    /// Waits for bytes and returns up to `maximum` of them; nil at end of input, after
    /// ``stop()``, or when the descriptor reports an error or hang-up with nothing to read.
    public func read(maximum: Int = 4096) async -> [UInt8]? {
        await withCheckedContinuation { (continuation: CheckedContinuation<[UInt8]?, Never>) in
            readQueue.async { [self] in continuation.resume(returning: blockingRead(maximum: maximum)) }
        }
    }

    /// Waits until the input can be read (true) or the port is stopped (false).
    public func readiness() async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            readQueue.async { [self] in continuation.resume(returning: waitReadable()) }
        }
    }

    private func waitReadable() -> Bool {
        while !stopped.withLock({ $0 }) {
            var fds = [pollfd(fd: input, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return false
            }
            if fds[1].revents != 0 { return false }
            if fds[0].revents != 0 { return true }
        }
        return false
    }

    private func blockingRead(maximum: Int) -> [UInt8]? {
        while waitReadable() {
            var buffer = [UInt8](repeating: 0, count: max(maximum, 1))
            let count = buffer.withUnsafeMutableBytes { Glibc.read(input, $0.baseAddress, $0.count) }
            if count > 0 { return Array(buffer.prefix(count)) }
            if count < 0, errno == EINTR || errno == EAGAIN { continue }
            return nil
        }
        return nil
    }

    /// Writes all of `bytes` (blocking on the write queue until the reader takes them); throws
    /// when the descriptor fails (e.g. the TCP client went away).
    public func write(_ bytes: [UInt8]) async throws(PortError) {
        guard !bytes.isEmpty else { return }
        let failure: Int32? = await withCheckedContinuation { (continuation: CheckedContinuation<Int32?, Never>) in
            writeQueue.async { [self] in continuation.resume(returning: blockingWrite(bytes)) }
        }
        if let failure { throw PortError.system("write", failure) }
    }

    private func blockingWrite(_ bytes: [UInt8]) -> Int32? {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { raw in
                Glibc.write(output, raw.baseAddress! + offset, bytes.count - offset)
            }
            if count < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN {
                    var fds = [pollfd(fd: output, events: Int16(POLLOUT), revents: 0)]
                    _ = poll(&fds, 1, -1)
                    continue
                }
                return errno
            }
            offset += count
        }
        return nil
    }

    /// Ends a pending and every later ``read(maximum:)`` (they return nil).
    public func stop() {
        let first = stopped.withLock { value in
            defer { value = true }
            return !value
        }
        guard first else { return }
        var byte: UInt8 = 1
        _ = Glibc.write(wake.write, &byte, 1)
    }

    /// Stops reading and closes the wake-up pipe (and the descriptors, if the port owns them).
    public func close() {
        stop()
        readQueue.sync {}
        writeQueue.sync {}
        Glibc.close(wake.read)
        Glibc.close(wake.write)
        if closesDescriptors {
            Glibc.close(input)
            if output != input { Glibc.close(output) }
        }
    }
}

/// A failed system call of a port: which call and `errno`.
public enum PortError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `call` failed with `errno`.
    case system(String, Int32)
    /// A path or address could not be used; the text says why.
    case invalid(String)

    public var description: String {
        switch self {
        case let .system(call, code): "\(call) failed: \(String(cString: strerror(code)))"
        case let .invalid(text): text
        }
    }
}
