#if canImport(Glibc)
import Glibc
#endif
import Bluetide
import BluetideSerial
import BluetideSupport
import Foundation
import Synchronization
import Testing

/// Issue 22 item 3: the pipe, pty and TCP bridges and the outage hold, as library API (no
/// argument parser, no `bluetide` process), against emulated devices on a private virtual link.
@Suite struct SerialBridgeTests {
    /// Lines piped in at once go one line per write with their end converted, each is answered,
    /// and the pipe ends once input has ended and the idle time has passed on its clock (a
    /// manual one: nothing waits in real time).
    @Test func pipeSendsLineByLineAndEndsAfterTheIdleTimeOnItsClock() async throws {
        let world = try await SerialWorld()
        try await world.start("hm10", name: "Robot21", index: 21)
        let link = try await world.connect("Robot21")
        let events = EventLog()
        let bridge = SerialBridge(links: [link], events: events.record)
        let input = ScriptedEndpoint()
        let output = BridgeBytes()
        let clock = ManualClock()
        let pipe = Task {
            try await bridge.pipe(input: input, ending: .crlf, idleTimeout: .seconds(2), clock: clock) { _, chunk in output.append(chunk) }
        }
        input.feed(Array("AT\nAT+VERS?\nAT+NA".utf8))
        input.feed(Array("ME?\n".utf8))
        input.end()
        let answers = "OKHMSoft V540OK+NAME:Robot21"
        try await within(30, "three answers") { await output.wait { String(decoding: $0, as: UTF8.self) == answers } }
        await clock.waitForSleepers(1)
        #expect(clock.sleeperCount == 1, "still waiting for the idle time")
        clock.advance(by: .seconds(2))
        try await within(30, "pipe ends") { try await pipe.value }
        #expect(events.sent == ["AT\r\n", "AT+VERS?\r\n", "AT+NAME?\r\n"], "one write per line, CRLF ends")
        #expect(String(decoding: events.received.joined(), as: UTF8.self) == answers)
        await link.close()
        await world.close()
    }

    /// With receive-only permission nothing is sent; received bytes are still reported (for the log).
    @Test func readOnlyPermissionSendsNothing() async throws {
        let world = try await SerialWorld()
        try await world.start("nus", name: "Robot22", index: 22)
        let link = try await world.connect("Robot22")
        let events = EventLog()
        let bridge = SerialBridge(links: [link], permission: .ro, events: events.record)
        #expect(await bridge.send(Array("hello".utf8)))
        try await bridge.sendPatiently(Array("hello".utf8), to: link)
        #expect(events.sent.isEmpty)
        #expect(await link.writtenBytes == 0)
        await link.close()
        await world.close()
    }

    /// A pseudo-terminal bridge: a program opening the port's symlink sends bytes to the echoing
    /// device and reads them back; cancelling the bridge removes the symlink.
    @Test func pseudoTerminalCarriesBytesBothWaysAndGoesAwayWhenCancelled() async throws {
        let world = try await SerialWorld()
        try await world.start("hm10", name: "Robot23", index: 23)
        let link = try await world.connect("Robot23")
        let events = EventLog()
        let bridge = SerialBridge(links: [link], events: events.record)
        let path = NSTemporaryDirectory() + "bridge-\(UUID().uuidString.prefix(8))"
        let running = Task { try await bridge.bridgePseudoTerminal(at: path) }
        let ready = try await within(30, "port ready") { await events.firstNotice { if case .portReady = $0 { true } else { false } } }
        #expect("\(ready)".hasPrefix("serial port ready: \(path) → /dev/pts/"))
        let descriptor = open(path, O_RDWR | O_NOCTTY)
        try #require(descriptor >= 0)
        let port = try FileDescriptorPort(input: descriptor, output: descriptor, closesDescriptors: true)
        try await port.write(Array("ping\n".utf8))
        let echoed = try await within(30, "echo") {
            var echoed: [UInt8] = []
            while echoed.count < 5, let chunk = await port.read() { echoed += chunk }
            return echoed
        }
        #expect(echoed == Array("ping\n".utf8))
        port.close()
        running.cancel()
        try await within(30, "bridge ends when cancelled") { try await running.value }
        #expect(!FileManager.default.fileExists(atPath: path), "the symlink is removed")
        await link.close()
        await world.close()
    }

    /// A TCP bridge on a port the system picks: a client's bytes reach the device and its echo
    /// comes back; the client's arrival and departure are reported.
    @Test func tcpBridgeServesAClientOnThePortReported() async throws {
        let world = try await SerialWorld()
        try await world.start("nus", name: "Robot24", index: 24)
        let link = try await world.connect("Robot24")
        let events = EventLog()
        let bridge = SerialBridge(links: [link], events: events.record)
        let running = Task { try await bridge.bridgeTCP(host: "127.0.0.1", port: 0) }
        let listening = try await within(30, "listening") { await events.firstNotice { if case .listening = $0 { true } else { false } } }
        guard case let .listening(_, port) = listening else { Issue.record("\(listening)"); return }
        #expect(port != 0)
        let client = try TCPTestClient(port: port)
        try await client.port.write(Array("hello\n".utf8))
        let echoed = try await within(30, "echo") {
            var echoed: [UInt8] = []
            while echoed.count < 6, let chunk = await client.port.read() { echoed += chunk }
            return echoed
        }
        #expect(echoed == Array("hello\n".utf8))
        client.port.close()
        _ = try await within(30, "client left") { await events.firstNotice { $0 == .clientLeft } }
        #expect(events.notices.contains(.clientConnected))
        running.cancel()
        try await within(30, "bridge ends when cancelled") { try await running.value }
        await link.close()
        await world.close()
    }

    /// While the device is gone, a bridge holds its endpoint's input (rather than refusing it as
    /// an interactive send does) and delivers it once the link is back.
    @Test func bridgeHoldsInputThroughAnOutage() async throws {
        let world = try await SerialWorld()
        try await world.start("hm10", name: "Robot25", index: 25)
        let options = SerialLinkOptions(reconnectTries: 40, reconnectInterval: .milliseconds(100), connectTimeout: .seconds(2), outageBufferLimit: 0)
        let link = try await world.connect("Robot25", options: options)
        let statuses = StatusWatch(link)
        let events = EventLog()
        let bridge = SerialBridge(links: [link], events: events.record)
        let endpoint = ScriptedEndpoint()
        let running = Task { try await bridge.serve(endpoint) }
        endpoint.feed(Array("before\n".utf8))
        try await within(30, "echo before") { await endpoint.delivered.wait { $0.count >= 7 } }
        await world.kill("Robot25")
        try await within(30, "link lost") { await statuses.wait("reconnecting") }
        // An interactive send is refused (the outage buffer is 0 bytes) and says why …
        #expect(await bridge.send(Array("typed\n".utf8)))
        let refused = events.notices.compactMap { if case let .refused(why) = $0 { why } else { nil } }
        #expect(refused.count == 1 && refused[0].contains("Robot25 is reconnecting"), "\(refused)")
        // … the bridge's input waits for the link instead.
        endpoint.feed(Array("during\n".utf8))
        try await world.start("hm10", name: "Robot25", index: 25)
        try await within(60, "echo after the outage") { await endpoint.delivered.wait { $0.count >= 14 } }
        #expect(String(decoding: endpoint.delivered.bytes, as: UTF8.self) == "before\nduring\n")
        running.cancel()
        try await within(30, "bridge ends when cancelled") { try await running.value }
        statuses.stop()
        await link.close()
        await world.close()
    }

    /// A link that gives up ends the bridge with an error naming the device and the reason.
    @Test func aLinkThatGivesUpEndsTheBridgeWithItsReason() async throws {
        let world = try await SerialWorld()
        try await world.start("nus", name: "Robot26", index: 26)
        let link = try await world.connect("Robot26", options: SerialLinkOptions(reconnectTries: 0))
        let bridge = SerialBridge(links: [link])
        let endpoint = ScriptedEndpoint()
        let running = Task { try await bridge.serve(endpoint) }
        await world.kill("Robot26")
        let error = try await within(60, "bridge fails") {
            do { try await running.value; return nil as SerialBridgeError? } catch let error as SerialBridgeError { return error }
        }
        guard case let .linkClosed(device, reason)? = error else { Issue.record("\(String(describing: error))"); return }
        #expect(device == "Robot26")
        #expect(!reason.isEmpty)
        #expect("\(error!)".hasPrefix("Robot26: "))
        await world.close()
    }

    @Test func noLinkIsAnErrorNotACrash() async throws {
        let bridge = SerialBridge(links: [])
        #expect(bridge.targets.isEmpty)
        bridge.selectNext()
        await #expect(throws: SerialBridgeError.noLink) { try await bridge.serve(ScriptedEndpoint()) }
        await #expect(throws: SerialBridgeError.noLink) {
            try await bridge.pipe(input: ScriptedEndpoint(), ending: nil, idleTimeout: .zero, clock: ManualClock()) { _, _ in }
        }
    }
}

// MARK: Test doubles

/// Bytes collected, with waits that resume when a condition holds (no polling).
final class BridgeBytes: Sendable {
    private struct State {
        var bytes: [UInt8] = []
        var waiters: [(condition: @Sendable ([UInt8]) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []
    }
    private let state = Mutex(State())

    var bytes: [UInt8] { state.withLock { $0.bytes } }

    func append(_ chunk: [UInt8]) {
        let ready = state.withLock { s in
            s.bytes += chunk
            let bytes = s.bytes
            let (ready, waiting) = (s.waiters.filter { $0.condition(bytes) }, s.waiters.filter { !$0.condition(bytes) })
            s.waiters = waiting
            return ready.map(\.continuation)
        }
        for continuation in ready { continuation.resume() }
    }

    /// Returns once `condition` holds for the bytes collected.
    func wait(_ condition: @escaping @Sendable ([UInt8]) -> Bool) async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { s in
                if condition(s.bytes) { return true }
                s.waiters.append((condition, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }
}

/// An endpoint fed by the test; what the bridge delivers is collected.
final class ScriptedEndpoint: SerialEndpoint {
    private struct State {
        var chunks: [[UInt8]] = []
        var ended = false
        var waiter: CheckedContinuation<[UInt8]?, Never>?
    }
    private let state = Mutex(State())
    let delivered = BridgeBytes()

    func feed(_ bytes: [UInt8]) {
        let waiter = state.withLock { s -> CheckedContinuation<[UInt8]?, Never>? in
            if let waiter = s.waiter { s.waiter = nil; return waiter }
            s.chunks.append(bytes)
            return nil
        }
        waiter?.resume(returning: bytes)
    }

    func end() {
        let waiter = state.withLock { s -> CheckedContinuation<[UInt8]?, Never>? in
            s.ended = true
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume(returning: nil)
    }

    func nextBytes() async -> [UInt8]? {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { s -> [UInt8]?? in
                if !s.chunks.isEmpty { return .some(s.chunks.removeFirst()) }
                if s.ended { return .some(nil) }
                s.waiter = continuation
                return .none
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    func deliver(_ bytes: [UInt8]) async throws { delivered.append(bytes) }
    func stop() { end() }
}

/// A bridge's events, recorded; waits for a notice without polling.
final class EventLog: Sendable {
    private struct State {
        var sent: [String] = []
        var received: [[UInt8]] = []
        var notices: [SerialBridgeNotice] = []
        var waiters: [(match: @Sendable (SerialBridgeNotice) -> Bool, continuation: CheckedContinuation<SerialBridgeNotice, Never>)] = []
    }
    private let state = Mutex(State())

    var sent: [String] { state.withLock { $0.sent } }
    var received: [[UInt8]] { state.withLock { $0.received } }
    var notices: [SerialBridgeNotice] { state.withLock { $0.notices } }

    var record: @Sendable (SerialBridgeEvent) -> Void { { [self] in handle($0) } }

    private func handle(_ event: SerialBridgeEvent) {
        var resumed: [(CheckedContinuation<SerialBridgeNotice, Never>, SerialBridgeNotice)] = []
        state.withLock { s in
            switch event {
            case let .sent(bytes, _): s.sent.append(String(decoding: bytes, as: UTF8.self))
            case let .received(bytes, _): s.received.append(bytes)
            case let .notice(notice, _):
                s.notices.append(notice)
                s.waiters.removeAll { waiter in
                    guard waiter.match(notice) else { return false }
                    resumed.append((waiter.continuation, notice))
                    return true
                }
            }
        }
        for (continuation, notice) in resumed { continuation.resume(returning: notice) }
    }

    /// The first notice `match` accepts, waiting for it if none came yet.
    func firstNotice(_ match: @escaping @Sendable (SerialBridgeNotice) -> Bool) async -> SerialBridgeNotice {
        await withCheckedContinuation { continuation in
            let found = state.withLock { s -> SerialBridgeNotice? in
                if let notice = s.notices.first(where: match) { return notice }
                s.waiters.append((match, continuation))
                return nil
            }
            if let found { continuation.resume(returning: found) }
        }
    }
}

/// A link's status names, with a wait for one (no polling).
final class StatusWatch: Sendable {
    private let names = BridgeBytes()
    private let task: Task<Void, Never>

    init(_ link: SerialLink) {
        let names = names
        task = Task { for await status in link.status { names.append(Array((status.name + "\n").utf8)) } }
    }

    func wait(_ name: String) async {
        await names.wait { String(decoding: $0, as: UTF8.self).split(separator: "\n").contains(Substring(name)) }
    }

    func stop() { task.cancel() }
}

/// A TCP connection to 127.0.0.1:`port`.
struct TCPTestClient {
    let port: FileDescriptorPort

    init(port number: UInt16) throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw PortError.system("socket", errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = number.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            let code = errno
            close(socket)
            throw PortError.system("connect", code)
        }
        port = try FileDescriptorPort(input: socket, output: socket, closesDescriptors: true)
    }
}
