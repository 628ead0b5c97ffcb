#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin wrappers over POSIX file calls that turn failures into ``ValueLogError/io(operation:path:code:message:)``
/// naming the path and the OS error, and retry interrupted calls.
enum POSIXFile {
    /// The OS message for an error number, e.g. `No space left on device`.
    static func message(for code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }

    static func failure(_ operation: String, _ path: String, _ code: Int32 = errno) -> ValueLogError {
        .io(operation: operation, path: path, code: code, message: message(for: code))
    }

    /// Opens `path` for writing, creating it (mode 0644); replaces an existing file, or fails
    /// with `EEXIST` when `replaceExisting` is false.
    static func openForWriting(_ path: String, replaceExisting: Bool) throws(ValueLogError) -> Int32 {
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | (replaceExisting ? O_TRUNC : O_EXCL)
        while true {
            let fd = open(path, flags, 0o644)
            if fd >= 0 { return fd }
            if errno != EINTR { throw failure("open", path) }
        }
    }

    /// Writes all of `bytes`, retrying short writes; on failure reports how many were written.
    static func writeAll(_ fd: Int32, _ bytes: ArraySlice<UInt8>, path: String) -> (written: Int, error: ValueLogError?) {
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return write(fd, base + written, buffer.count - written)
            }
            if result > 0 {
                written += result
            } else if result < 0 && errno == EINTR {
                continue
            } else {
                let code = result == 0 ? EIO : errno
                return (written, failure("write", path, code))
            }
        }
        return (written, nil)
    }

    /// Asks the OS to put the file's data on disk.
    static func sync(_ fd: Int32, path: String) throws(ValueLogError) {
        while fsync(fd) != 0 {
            // Character devices and pipes cannot be synced; that is not a failure to keep data.
            if errno == EINVAL || errno == EROFS || errno == ENOTSUP { return }
            if errno != EINTR { throw failure("sync", path) }
        }
    }

    static func closeFile(_ fd: Int32, path: String) throws(ValueLogError) {
        let result = close(fd)
        // After close fails (even with EINTR) the descriptor is gone on Linux; never retry.
        if result != 0 && errno != EINTR { throw failure("close", path) }
    }

    /// The whole content of the file at `path`.
    static func readAll(_ path: String) throws(ValueLogError) -> [UInt8] {
        var fd: Int32
        repeat {
            fd = open(path, O_RDONLY | O_CLOEXEC)
        } while fd < 0 && errno == EINTR
        guard fd >= 0 else { throw failure("open", path) }
        defer { _ = try? closeFile(fd, path: path) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return read(fd, base, buffer.count)
            }
            if count > 0 {
                bytes.append(contentsOf: chunk[0..<count])
            } else if count == 0 {
                return bytes
            } else if errno != EINTR {
                throw failure("read", path)
            }
        }
    }
}
