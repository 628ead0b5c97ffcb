import Foundation
@testable import BluetideReflexWeb
#if canImport(Glibc)
import Glibc
#endif

/// Plain TCP sockets to 127.0.0.1, for the tests that need bytes no HTTP client sends (garbage,
/// half requests, silent connections). Blocking calls run on their own thread (``onThread(_:)``),
/// never on the cooperative pool.
enum RawSocket {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// A connected socket to `127.0.0.1:port`; `blocking: false` returns at once (connection in
    /// progress), for floods.
    static func connect(port: Int, blocking: Bool = true) throws -> Int32 {
        // Close-on-exec: child tools started by tests running alongside must not inherit (and hold open) these.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket(): errno \(errno)") }
        if !blocking { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if result != 0, !(blocking == false && errno == EINPROGRESS) {
            let error = errno
            Glibc.close(fd)
            throw Failure(description: "connect(): errno \(error)")
        }
        return fd
    }

    /// Sends all of `bytes`.
    static func send(_ fd: Int32, _ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw Failure(description: "send(): errno \(errno)") }
            sent += n
        }
    }

    static func send(_ fd: Int32, _ text: String) throws { try send(fd, Array(text.utf8)) }

    /// What the peer sends until it closes (`closed` true) or `seconds` pass.
    static func readUntilClosed(_ fd: Int32, seconds: Double) -> (text: String, closed: Bool) {
        var bytes: [UInt8] = []
        let deadline = Date().addingTimeInterval(seconds)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while Date() < deadline {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(max(1, deadline.timeIntervalSinceNow * 1000)))
            if ready <= 0 { continue }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return (String(decoding: bytes, as: UTF8.self), true) }
            bytes += buffer[..<n]
        }
        return (String(decoding: bytes, as: UTF8.self), false)
    }

    /// True when the peer has closed `fd` (EOF or reset waiting), without waiting.
    static func peerClosed(_ fd: Int32) -> Bool {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, 0) == 1 else { return false }
        var byte: UInt8 = 0
        let n = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return n == 0 || (n < 0 && errno != EAGAIN)
    }

    /// True once a non-blocking `connect` on `fd` has completed (or failed: then it never will).
    static func isConnected(_ fd: Int32) -> Bool {
        var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        return poll(&poller, 1, 0) == 1
    }

    /// Blocks this thread until `condition` holds for `dashboard`'s connection figures (true) or
    /// `seconds` pass (false): woken by each change of the figures, no polling.
    static func waitUntil(_ dashboard: RunningDashboard, seconds: Double, _ condition: (ConnectionFigures) -> Bool) -> Bool {
        dashboard.gate.waitForFigures(within: seconds, until: condition)
    }

    /// Raises this process's open-file limit as far as its hard limit allows; returns the soft limit now.
    static func raiseOpenFileLimit() -> Int {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        return Int(limit.rlim_cur)
    }

    /// Runs blocking `body` on a thread of its own.
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }
}
