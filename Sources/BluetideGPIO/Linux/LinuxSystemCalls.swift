#if os(Linux)
import Glibc

/// Thin wrappers over the system calls the Linux backend uses, returning errno on failure.
enum LinuxSystemCalls {
    /// The text of an errno value.
    static func message(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// `ioctl(fd, request, buffer)` with the buffer's bytes in and out; errno on failure.
    static func ioctl(_ fd: Int32, _ request: UInt, _ buffer: inout [UInt8]) -> Int32? {
        while true {
            let result = buffer.withUnsafeMutableBytes { raw -> Int32 in
                guard let base = raw.baseAddress else { return -1 }
                return Glibc.ioctl(fd, request, base)
            }
            if result >= 0 { return nil }
            let code = errno
            if code != EINTR { return code }
        }
    }

    /// `open(path, O_RDWR | O_CLOEXEC)`: the fd, or errno.
    static func openReadWrite(_ path: String) -> Result<Int32, Errno> {
        let fd = open(path, O_RDWR | O_CLOEXEC)
        return fd >= 0 ? .success(fd) : .failure(Errno(code: errno))
    }

    /// Names of the `gpiochipN` entries of a directory, as full paths sorted by N.
    static func gpioChips(in directory: String) -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var found: [(Int, String)] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            guard name.hasPrefix("gpiochip"), let n = Int(name.dropFirst("gpiochip".count)) else { continue }
            found.append((n, directory.hasSuffix("/") ? directory + name : directory + "/" + name))
        }
        return found.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// An errno value as an Error.
    struct Errno: Error {
        var code: Int32
    }
}
#endif
