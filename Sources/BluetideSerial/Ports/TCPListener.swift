#if canImport(Glibc)
import Glibc
#endif
import Dispatch

/// A listening TCP socket that hands out one client at a time as a ``FileDescriptorPort``.
public final class TCPListener: Sendable {
    /// The listening descriptor.
    public let descriptor: Int32
    /// The port bound (useful when 0 was asked for).
    public let port: UInt16
    /// The address bound, as given.
    public let host: String
    private let waiter: FileDescriptorPort

    /// Listens on `host:port` (IPv4; port 0 picks a free one).
    public init(host: String = "127.0.0.1", port: UInt16) throws(PortError) {
        // Close-on-exec (here and on accepted clients): a program started meanwhile must not
        // inherit the socket and keep the port listening after ``close()``.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw PortError.system("socket", errno) }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            Glibc.close(fd)
            throw PortError.invalid("--tcp: \(host) is not an IPv4 address (e.g. 127.0.0.1 or 0.0.0.0)")
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 1) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw PortError.invalid("--tcp \(host):\(port): cannot listen: \(String(cString: strerror(code)))")
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.descriptor = fd
        self.host = host
        self.port = UInt16(bigEndian: actual.sin_port)
        self.waiter = try FileDescriptorPort(input: fd, output: fd)
    }

    /// Waits for the next client; nil after ``close()``.
    public func accept() async -> FileDescriptorPort? {
        // The port's read waits in poll(2) for the listening socket to become readable.
        while true {
            guard await waiter.readiness() else { return nil }
            let client = Glibc.accept(descriptor, nil, nil)
            if client >= 0 { _ = fcntl(client, F_SETFD, FD_CLOEXEC) }  // accept4 is not in the Glibc module
            if client >= 0 { return try? FileDescriptorPort(input: client, output: client, closesDescriptors: true) }
            if errno != EINTR && errno != EAGAIN && errno != ECONNABORTED { return nil }
        }
    }

    /// Ends a pending and every later ``accept()`` (they return nil).
    public func stop() { waiter.stop() }

    /// Stops accepting and closes the socket.
    public func close() {
        waiter.close()
        Glibc.close(descriptor)
    }
}
