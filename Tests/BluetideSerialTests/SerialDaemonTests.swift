import Bluetide
import BluetideSerial
import BluetideTestSupport
import Foundation
import Synchronization
import Testing

/// `SerialDaemon`: two emulated modules, each on a pty of its own; one is switched off and back
/// on: its pty stays (the same path, the same open descriptor), and what was written to it
/// meanwhile reaches the module once it is back.
@Suite struct SerialDaemonTests {
    @Test func ptysStayAcrossAModuleSwitchedOffAndOn() async throws {
        let world = try await SerialWorld()
        try await world.start("hm10", name: "RobotA", index: 21)
        try await world.start("hm10", name: "RobotB", index: 22)
        let folder = FileManager.default.temporaryDirectory.path
        let tag = UUID().uuidString.prefix(8)
        let paths = ["\(folder)/ttyA-\(tag)", "\(folder)/ttyB-\(tag)"]
        let options = SerialLinkOptions(reconnectTries: 5, reconnectInterval: .milliseconds(200))
        let daemon = SerialDaemon(devices: [
            SerialDaemonDevice(target: "RobotA", ptyPath: paths[0], minimumRSSI: -100, options: options),
            SerialDaemonDevice(target: "RobotB", ptyPath: paths[1], options: options),
        ], central: world.central, searchWindow: .seconds(2))
        let log = EventLog()
        let watcher = Task { for await event in daemon.events { log.append(event) } }
        await daemon.start()
        try await within(60, "both connected") {
            try await log.wait { EventLog.connectedCount("RobotA", in: $0) >= 1 && EventLog.connectedCount("RobotB", in: $0) >= 1 }
        }
        let a = try Self.open(paths[0]), b = try Self.open(paths[1])
        defer { a.close(); b.close() }
        try await Self.roundTrip(a, "ping A\n")
        try await Self.roundTrip(b, "ping B\n")

        // Module A loses power: its link goes; the pty stays and takes bytes meanwhile.
        await world.kill("RobotA")
        try await within(30, "A's link lost") {
            try await log.wait { $0.contains { if case .link("RobotA", .disconnected) = $0 { true } else { false } } }
        }
        #expect(FileManager.default.fileExists(atPath: paths[0]), "the pty's symlink stays while the module is off")
        try await a.write(Array("during the outage\n".utf8))
        try await Self.roundTrip(b, "B still here\n")
        try await world.start("hm10", name: "RobotA", index: 21)
        // The bytes written while it was off come back through the same open descriptor.
        try await Self.expect(a, "during the outage\n", within: 60)
        #expect(log.events.contains { if case .link("RobotA", .reconnected) = $0 { true } else { false } } || log.connectedCount("RobotA") >= 2, "\(log.events)")
        try await Self.roundTrip(a, "ping A again\n")

        await daemon.stop()
        await watcher.value
        #expect(!FileManager.default.fileExists(atPath: paths[0]) && !FileManager.default.fileExists(atPath: paths[1]), "symlinks removed at stop")
        await world.close()
    }

    /// A module on a TCP port instead of a pty: the port stays in place while the module is off,
    /// a client connected then stays connected and what it wrote meanwhile reaches the module
    /// once it is back; a client that leaves is followed by the next; stop closes the port.
    @Test func tcpPortStaysAcrossAModuleSwitchedOffAndOn() async throws {
        let world = try await SerialWorld()
        try await world.start("nus", name: "RobotT", index: 23)
        let options = SerialLinkOptions(reconnectTries: 5, reconnectInterval: .milliseconds(200))
        let daemon = SerialDaemon(devices: [
            SerialDaemonDevice(target: "RobotT", port: .tcp(host: "127.0.0.1", port: 0), options: options, lineEnding: [0x0D, 0x0A]),
        ], central: world.central, searchWindow: .seconds(2))
        let log = EventLog()
        let watcher = Task { for await event in daemon.events { log.append(event) } }
        await daemon.start()
        let port = try await within(30, "the port listening") { () async throws -> UInt16 in
            try await log.first { if case let .listening("RobotT", "127.0.0.1", port) = $0 { port } else { nil } }
        }
        #expect(port != 0, "the port bound is reported")
        // A client may connect before the device is found; what it writes waits for the link.
        let first = try Self.connect(port)
        try await first.write(Array("early\n".utf8))
        try await Self.expect(first, "early\r\n", within: 60)
        #expect(log.events.contains { if case .clientConnected("RobotT", _) = $0 { true } else { false } })

        await world.kill("RobotT")
        try await within(30, "the link lost") {
            try await log.wait { $0.contains { if case .link("RobotT", .disconnected) = $0 { true } else { false } } }
        }
        try await first.write(Array("during the outage\n".utf8))
        try await world.start("nus", name: "RobotT", index: 23)
        try await Self.expect(first, "during the outage\r\n", within: 60)

        // The client leaves; the next one is served on the same port.
        shutdown(first.input, Int32(SHUT_RDWR))
        first.close()
        try await within(30, "the client's leaving seen") {
            try await log.wait { $0.contains { if case .clientLeft("RobotT", _) = $0 { true } else { false } } }
        }
        let second = try Self.connect(port)
        try await Self.roundTrip(second, "second client\r\n")
        #expect(log.events.filter { if case .clientConnected("RobotT", _) = $0 { true } else { false } }.count == 2, "\(log.events)")

        await daemon.stop()
        await watcher.value
        // The daemon closed its side of the client and the port.
        let rest = try await within(30, "the client's end") { () async -> [UInt8]? in await second.read() }
        #expect(rest == nil)
        second.close()
        #expect(throws: (any Error).self, "nothing listens after stop") { try Self.connect(port).close() }
        await world.close()
    }

    /// A TCP client of 127.0.0.1:`port`, connected.
    static func connect(_ port: UInt16) throws -> FileDescriptorPort {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(fd >= 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            throw PortError.invalid("connect 127.0.0.1:\(port): \(reason)")
        }
        return try FileDescriptorPort(input: fd, output: fd, closesDescriptors: true)
    }

    /// The daemon's events as they come; tests wait on them (put a hang guard around a wait).
    final class EventLog: Sendable {
        private let state = Observed<[SerialDaemonEvent]>([])
        func append(_ event: SerialDaemonEvent) { state.append(event) }
        var events: [SerialDaemonEvent] { state.value }
        func connectedCount(_ device: String) -> Int { Self.connectedCount(device, in: events) }
        static func connectedCount(_ device: String, in events: [SerialDaemonEvent]) -> Int {
            events.filter { if case .link(device, .connected) = $0 { true } else { false } }.count
        }
        /// Waits until `condition` holds for the events so far.
        func wait(until condition: @escaping @Sendable ([SerialDaemonEvent]) -> Bool) async throws {
            try await state.wait(until: condition)
        }
        /// The first event that `pick` maps to a value, once it has come.
        func first<T: Sendable>(_ pick: @escaping @Sendable (SerialDaemonEvent) -> T?) async throws -> T {
            let event = try await state.first { pick($0) != nil }
            return try #require(pick(event))
        }
    }

    static func open(_ path: String) throws -> FileDescriptorPort {
        let fd = Glibc.open(path, O_RDWR | O_NOCTTY)
        try #require(fd >= 0, "open \(path): \(String(cString: strerror(errno)))")
        return try FileDescriptorPort(input: fd, output: fd, closesDescriptors: true)
    }

    /// Writes `text` to the pty and expects the module's echo of it.
    static func roundTrip(_ port: FileDescriptorPort, _ text: String) async throws {
        try await port.write(Array(text.utf8))
        try await expect(port, text, within: 30)
    }

    static func expect(_ port: FileDescriptorPort, _ text: String, within seconds: Double) async throws {
        let got = try await BluetideSerialTests.within(seconds, "echo of \(text.debugDescription)") { () async -> [UInt8] in
            var got: [UInt8] = []
            while got.count < text.utf8.count, let chunk = await port.read() { got += chunk }
            return got
        }
        #expect(String(decoding: got, as: UTF8.self) == text)
    }
}
