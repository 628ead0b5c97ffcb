#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Small wrappers over the C library used by the file-descriptor transports and the snoop writer.
enum POSIX {
    /// The current `errno`.
    static var errorNumber: Int32 { errno }

    /// `strerror` text for an errno value, e.g. "No such file or directory".
    static func describe(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "errno \(code)" }
        return String(cString: text)
    }

    /// Wall-clock time as Unix microseconds (for snoop timestamps only).
    static func unixMicroseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) &* 1_000_000 &+ Int64(ts.tv_nsec) / 1000
    }

    /// Writes all of `bytes` to `fd`, retrying on EINTR and partial writes and waiting for the
    /// descriptor to become writable on EAGAIN. Returns 0 or the errno that stopped it.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Int32 {
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                write(fd, raw.baseAddress.map { $0 + written }, bytes.count - written)
            }
            if n >= 0 {
                written += n
                continue
            }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK {
                var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&p, 1, 1000)
                continue
            }
            return code
        }
        return 0
    }
}
