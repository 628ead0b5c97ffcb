import BluetideTestSupport
import Foundation
import Synchronization
import Testing
@testable import BluetideCommands

/// A command whose standard output is closed by its reader (`bluetide controllers … | head -1`)
/// ends quietly (status 0, nothing on standard error) at its next line, instead of trapping on
/// the failed write (it was SIGILL, "Fatal error: 'try!' … Broken pipe").
@Suite(.timeLimit(.minutes(2))) struct ClosedOutputTests {
    @Test func aWriterOfAClosedPipeDropsTheOutputAndSaysSoOnce() throws {
        StandardStreams.ignoreBrokenPipeSignal()
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        let writer = StreamWriter(descriptor: ends[1])
        let calls = CallCounter()
        writer.onClose { calls.add() }
        #expect(writer.write("READY 1\n"))
        #expect(!writer.isClosed)
        close(ends[0])
        #expect(!writer.write("connected\n"), "the reader is gone: the write fails, and does not trap")
        #expect(writer.isClosed)
        writer.line("dropped")
        writer.onClose { calls.add() }
        #expect(calls.value == 2, "each handler once: the first at the failure, the late one at once")
        close(ends[1])
    }

    @Test func controllersEndQuietlyWhenTheirOutputIsClosed() async throws {
        let child = try PipedChild.start(["controllers", "tcp-server:127.0.0.1:0"])
        defer { child.cleanUp() }
        let ready = try #require(await child.readLine(timeout: .seconds(60)), "no READY line")
        let port = try #require(ready.split(separator: " ").dropFirst().first.flatMap { Int($0) }, "\(ready)")
        child.closeOutput()
        // A host connecting makes the next line; writing it finds nobody reading.
        let socket = try connectTCP(port: port)
        defer { close(socket) }
        let status = await child.waitForExit(timeout: .seconds(20))
        #expect(status == .exited(0), "stderr: \(child.standardError)")
        #expect(!child.standardError.contains("Fatal error"), "\(child.standardError)")
    }

    @Test func emulateEndsQuietlyWhenItsOutputIsClosedAndACentralConnects() async throws {
        let controllers = try BluetideExecutable.launch(["controllers", "tcp-server:127.0.0.1:0", "tcp-server:127.0.0.1:0"])
        var device: PipedChild?
        do {
            let ready = try #require(try await controllers.nextLine(timeout: BluetideExecutable.runTimeout))
            let ports = ready.split(separator: " ").dropFirst().compactMap { Int($0) }
            try #require(ports.count == 2, "\(ready)")
            let emulate = try PipedChild.start([
                "emulate", "heart-rate", "--name", "Closed Pipe HRM", "--transport", "tcp-client:127.0.0.1:\(ports[0])",
            ])
            device = emulate
            let started = try #require(await emulate.readLine(timeout: .seconds(60)), "no start line")
            #expect(started.contains("advertising as"), "\(started)")
            emulate.closeOutput()
            // A central connects: emulate's "connected" line finds nobody reading.
            _ = try await BluetideExecutable.run(
                ["read", "Closed Pipe HRM", "battery-level", "--transport", "tcp-client:127.0.0.1:\(ports[1])"],
                timeout: .seconds(60))
            let status = await emulate.waitForExit(timeout: .seconds(20))
            #expect(status == .exited(0), "stderr: \(emulate.standardError)")
            #expect(!emulate.standardError.contains("Fatal error"), "\(emulate.standardError)")
        } catch {
            device?.cleanUp()
            await controllers.stop()
            throw error
        }
        device?.cleanUp()
        await controllers.stop()
    }

    private func connectTCP(port: Int) throws -> Int32 {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            close(socket)
            throw PipedChild.Failure(description: "cannot connect to 127.0.0.1:\(port): errno \(errno)")
        }
        return socket
    }
}

/// A thread-safe count, for handlers.
final class CallCounter: Sendable {
    private let count = Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

/// `bluetide` started with its standard output on a pipe this test holds (so the test can close
/// the reading end, as `head -1` does), its standard error in a file, and SIGPIPE at its default
/// action, as a shell starts it. Blocking reads and waits run on threads of their own.
final class PipedChild: Sendable {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// How the child ended.
    enum Ending: Equatable, Sendable {
        case exited(Int32)
        case signalled(Int32)
    }

    let pid: pid_t
    private let readEnd: Mutex<Int32?>
    private let errorFile: URL
    private let ending = Mutex<(ending: Ending?, waiters: [CheckedContinuation<Ending?, Never>])>((nil, []))

    private init(pid: pid_t, readEnd: Int32, errorFile: URL) {
        self.pid = pid
        self.readEnd = Mutex(readEnd)
        self.errorFile = errorFile
    }

    static func start(_ arguments: [String]) throws -> PipedChild {
        let binary = try #require(BuiltExecutables.bluetide, "bluetide executable not built next to the tests")
        let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("piped-\(UUID().uuidString).stderr")
        var ends: [Int32] = [0, 0]
        // Close-on-exec: a child that other tests start meanwhile must not inherit (and hold open) the read end.
        guard pipe(&ends) == 0 else { throw Failure(description: "pipe: errno \(errno)") }
        for fd in ends { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, errorFile.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addclose(&actions, ends[0])
        posix_spawn_file_actions_addclose(&actions, ends[1])
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGPIPE, SIGINT, SIGTERM, SIGHUP] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([binary.path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let code = posix_spawn(&pid, binary.path, &actions, &attributes, argv, environ)
        close(ends[1])
        guard code == 0 else {
            close(ends[0])
            throw Failure(description: "posix_spawn \(binary.path): \(code)")
        }
        let child = PipedChild(pid: pid, readEnd: ends[0], errorFile: errorFile)
        let spawned = pid
        Thread.detachNewThread {
            var status: Int32 = 0
            while waitpid(spawned, &status, 0) < 0, errno == EINTR {}
            let low = status & 0x7F
            child.finish(low == 0 ? .exited((status >> 8) & 0xFF) : .signalled(low))
        }
        return child
    }

    private func finish(_ value: Ending) {
        let waiters = ending.withLock { state in
            state.ending = value
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: value) }
    }

    /// The next line of standard output (nil at its end), read on a thread of its own; throws after `timeout`.
    func readLine(timeout: Duration) async throws -> String? {
        guard let fd = readEnd.withLock({ $0 }) else { return nil }
        let line: String?? = await withCheckedContinuation { continuation in
            let once = Mutex(false)
            let resume: @Sendable (String??) -> Void = { value in
                if once.withLock({ done in defer { done = true }; return !done }) { continuation.resume(returning: value) }
            }
            Thread.detachNewThread {
                var bytes: [UInt8] = []
                var byte: UInt8 = 0
                while read(fd, &byte, 1) == 1 {
                    if byte == 10 { return resume(.some(String(decoding: bytes, as: UTF8.self))) }
                    bytes.append(byte)
                }
                resume(.some(bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)))
            }
            Task {
                try? await Task.sleep(for: timeout)
                resume(.none)
            }
        }
        guard let line else { throw Failure(description: "no line within \(timeout)") }
        return line
    }

    /// Closes the reading end of standard output, as `head -1` does once it has its line.
    func closeOutput() {
        readEnd.withLock { fd in
            if let open = fd { close(open) }
            fd = nil
        }
    }

    /// How the child ended, or nil if it still runs after `timeout`.
    func waitForExit(timeout: Duration) async -> Ending? {
        let timer = Task {
            try? await Task.sleep(for: timeout)
            let waiters = ending.withLock { state in
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume(returning: nil) }
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            let done = ending.withLock { state in
                if state.ending == nil { state.waiters.append(continuation) }
                return state.ending
            }
            if let done { continuation.resume(returning: done) }
        }
    }

    /// What the child wrote to standard error so far.
    var standardError: String {
        (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
    }

    /// Kills the child if it still runs, closes the pipe and removes the error file.
    func cleanUp() {
        if ending.withLock({ $0.ending == nil }) { kill(pid, SIGKILL) }
        closeOutput()
        try? FileManager.default.removeItem(at: errorFile)
    }
}
