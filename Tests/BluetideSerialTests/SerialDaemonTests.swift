import Bluetide
import BluetideSerial
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
            while log.connectedCount("RobotA") < 1 || log.connectedCount("RobotB") < 1 { try await Task.sleep(for: .milliseconds(20)) }
        }
        let a = try Self.open(paths[0]), b = try Self.open(paths[1])
        defer { a.close(); b.close() }
        try await Self.roundTrip(a, "ping A\n")
        try await Self.roundTrip(b, "ping B\n")

        // Module A loses power: its link goes; the pty stays and takes bytes meanwhile.
        await world.kill("RobotA")
        try await within(30, "A's link lost") {
            while !log.events.contains(where: { if case .link("RobotA", .disconnected) = $0 { true } else { false } }) {
                try await Task.sleep(for: .milliseconds(20))
            }
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

    final class EventLog: Sendable {
        private let state = Mutex<[SerialDaemonEvent]>([])
        func append(_ event: SerialDaemonEvent) { state.withLock { $0.append(event) } }
        var events: [SerialDaemonEvent] { state.withLock { $0 } }
        func connectedCount(_ device: String) -> Int {
            events.filter { if case .link(device, .connected) = $0 { true } else { false } }.count
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
