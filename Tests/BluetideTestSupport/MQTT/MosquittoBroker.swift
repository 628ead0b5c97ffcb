import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A real Mosquitto broker for a test: started on a free loopback port with a configuration of
/// its own (optionally a password file), ended by PID. Its verbose log (stderr) tells when it is
/// ready and when a client's subscription is in place.
public final class MosquittoBroker: Sendable {
    /// The loopback port it listens on.
    public let port: Int
    /// Its folder: configuration, password file.
    public let directory: URL
    private let process: Mutex<BumbleProcess?>
    /// Clients started against this broker (mosquitto_sub), stopped with it.
    private let clients = Mutex<[BumbleProcess]>([])

    /// `mqtt://127.0.0.1:PORT`.
    public var url: String { "mqtt://127.0.0.1:\(port)" }

    /// The broker's executable (Debian installs it in /usr/sbin).
    public static var executable: URL? { OptionalTool.executable("mosquitto", extraPaths: ["/usr/sbin"]) }

    private init(port: Int, directory: URL) {
        self.port = port
        self.directory = directory
        self.process = Mutex(nil)
    }

    /// Runs `body` with a new broker and always stops it (and the clients started against it)
    /// afterwards, whether `body` returns or throws.
    public static func run<T: Sendable>(
        users: [String: String] = [:], persistent: Bool = false, _ body: (MosquittoBroker) async throws -> T
    ) async throws -> T {
        let broker = try await start(users: users, persistent: persistent)
        do {
            let value = try await body(broker)
            await broker.finish()
            return value
        } catch {
            await broker.finish()
            throw error
        }
    }

    /// Stops `client` when the broker finishes.
    public func adopt(_ client: BumbleProcess) { clients.withLock { $0.append(client) } }

    /// Starts a broker; with `users`, anonymous clients are refused and these name/password pairs
    /// accepted; `persistent` keeps retained messages and sessions across a restart (saved on stop).
    public static func start(users: [String: String] = [:], persistent: Bool = false) async throws -> MosquittoBroker {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bluetide-mosquitto-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // Started as root, mosquitto drops to the `mosquitto` user: it must be able to save its
        // persistence database here (else a restart forgets the persistent sessions).
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory.path)
        var config = "listener \(try freePort()) 127.0.0.1\nlog_type all\nlog_dest stderr\n"
        config += persistent ? "persistence true\npersistence_location \(directory.path)/\n" : "persistence false\n"
        let port = Int(config.split(separator: " ")[1])!
        if users.isEmpty {
            config += "allow_anonymous true\n"
        } else {
            let passwords = directory.appendingPathComponent("passwords")
            FileManager.default.createFile(atPath: passwords.path, contents: Data())
            for (user, password) in users {
                let tool = OptionalTool.executable("mosquitto_passwd") ?? URL(fileURLWithPath: "/usr/bin/mosquitto_passwd")
                let child = try BumbleProcess.launch(name: "mosquitto_passwd", executable: tool, arguments: ["-b", passwords.path, user, password])
                guard await child.waitForCompletion(timeout: .seconds(20)) == 0 else { throw MosquittoBrokerError("mosquitto_passwd failed") }
            }
            config += "allow_anonymous false\npassword_file \(passwords.path)\n"
        }
        try config.write(to: directory.appendingPathComponent("mosquitto.conf"), atomically: true, encoding: .utf8)
        let broker = MosquittoBroker(port: port, directory: directory)
        try await broker.launch()
        return broker
    }

    /// Starts (again) on the same port and configuration; returns when the broker says it runs.
    public func launch() async throws {
        guard let executable = Self.executable else { throw MosquittoBrokerError("mosquitto is not installed (apt-get install mosquitto)") }
        let child = try BumbleProcess.launch(
            name: "mosquitto", executable: executable, arguments: ["-c", directory.appendingPathComponent("mosquitto.conf").path])
        process.withLock { $0 = child }
        try await waitForLog(containing: " running", timeout: .seconds(20))
    }

    /// Waits for a log line containing `text` (lines before it are consumed).
    public func waitForLog(containing text: String, timeout: Duration) async throws {
        guard let child = process.withLock({ $0 }) else { throw MosquittoBrokerError("the broker is not running") }
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero, let line = try await child.stderrLines.next(timeout: left) else {
                throw MosquittoBrokerError("mosquitto did not log \"\(text)\" within \(timeout)")
            }
            if line.contains(text) { return }
        }
    }

    /// Ends the broker (SIGTERM, then SIGKILL) and waits for it to exit.
    public func stop() async {
        guard let child = process.withLock({ state in defer { state = nil }; return state }) else { return }
        await child.stop(grace: .seconds(5))
        _ = await child.waitForExit(timeout: .seconds(10))
    }

    /// Stops the clients started against it, the broker, and removes its folder.
    public func finish() async {
        for client in clients.withLock({ state in defer { state = [] }; return state }) { await client.stop() }
        await stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// A loopback TCP port nobody listens on now.
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw MosquittoBrokerError("socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard bound == 0 else { throw MosquittoBrokerError("bind() failed") }
        let named = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        guard named == 0 else { throw MosquittoBrokerError("getsockname() failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// A broker harness failure.
public struct MosquittoBrokerError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// `mosquitto_sub`/`mosquitto_pub` as independent clients of a test's broker.
public enum MosquittoClients {
    /// Subscribes to `topics` with `mosquitto_sub`, printing `TOPIC|RETAIN|PAYLOAD` lines, and
    /// returns once the broker confirmed the subscription.
    public static func subscribe(_ broker: MosquittoBroker, topics: [String], extra: [String] = []) async throws -> BumbleProcess {
        guard let tool = OptionalTool.executable("mosquitto_sub") else {
            throw MosquittoBrokerError("mosquitto_sub is not installed (apt-get install mosquitto-clients)")
        }
        let id = "sub-\(UInt32.random(in: 0...UInt32.max))"
        var arguments = ["-h", "127.0.0.1", "-p", "\(broker.port)", "-i", id, "-F", "%t|%r|%p"]
        for topic in topics { arguments += ["-t", topic] }
        let child = try BumbleProcess.launch(name: "mosquitto_sub", executable: tool, arguments: arguments + extra)
        broker.adopt(child)
        try await broker.waitForLog(containing: "Sending SUBACK to \(id)", timeout: .seconds(20))
        return child
    }

    /// Publishes one message with `mosquitto_pub` and waits for it to finish.
    public static func publish(_ broker: MosquittoBroker, topic: String, message: String, qos: Int = 1, retain: Bool = false) async throws {
        guard let tool = OptionalTool.executable("mosquitto_pub") else {
            throw MosquittoBrokerError("mosquitto_pub is not installed (apt-get install mosquitto-clients)")
        }
        var arguments = ["-h", "127.0.0.1", "-p", "\(broker.port)", "-t", topic, "-m", message, "-q", "\(qos)"]
        if retain { arguments.append("-r") }
        let child = try BumbleProcess.launch(name: "mosquitto_pub", executable: tool, arguments: arguments)
        guard await child.waitForCompletion(timeout: .seconds(20)) == 0 else { throw MosquittoBrokerError("mosquitto_pub failed") }
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test when a Mosquitto broker and its command-line clients are installed, or in CI.
    public static var needsMosquitto: Self {
        .enabled(
            if: OptionalTool.isCI
                || (MosquittoBroker.executable != nil && OptionalTool.executable("mosquitto_sub") != nil),
            "mosquitto is not installed (apt-get install mosquitto mosquitto-clients libmosquitto1; .ci/run does): skipped outside CI")
    }
}
