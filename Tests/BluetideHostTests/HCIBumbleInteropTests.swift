import BluetideBase
import BluetideHCI
import BluetideTestSupport
import BluetideTransport
import Foundation
import Testing
@testable import BluetideHost

/// Runs the host-side HCI state machines over the TCP transport against Bumble's virtual
/// controllers (`python -m bumble.apps.controllers`; `.ci/run` installs Bumble). Skipped with
/// `BLUETIDE_SKIP_BUMBLE=1`; otherwise a missing Bumble fails with the install command.
@Suite(.bumbleInterop)
struct HCIBumbleInteropTests {
    @Test func startupConnectionAndFragmentedACLAgainstBumble() async throws {
        let controllers = try await BumbleControllers.start()
        do {
            try await exercise(controllers)
        } catch {
            await controllers.stop()
            throw error
        }
        await controllers.stop()
    }

    /// Reset, connect and a fragmented ACL PDU over the two controllers, captured to a snoop
    /// file that Bumble's `show` app then reads.
    private func exercise(_ controllers: BumbleControllers) async throws {
        let snoopPath = NSTemporaryDirectory() + "bluetide-interop-\(UInt32.random(in: 0...UInt32.max)).btsnoop"
        defer { try? FileManager.default.removeItem(atPath: snoopPath) }

        let central = try await ScriptedHost(try await controllers.connect(0, snoop: snoopPath))
        let peripheral = try await ScriptedHost(try await controllers.connect(1, snoop: nil))
        // Never hang: whatever happens, the links close after 30 s and the waits below fail.
        let links = [central.transport, peripheral.transport]
        let watchdog = Task {
            try await Task.sleep(for: .seconds(30))
            for link in links { await link.close() }
        }
        defer { watchdog.cancel() }

        for host in [central, peripheral] {
            #expect(try await host.command(0x0C03) == [0x00])  // Reset
            let buffers = try #require(try await host.command(0x2002))  // LE Read Buffer Size: 00 | 1B00 | 40
            #expect(try ACLBufferSize(leReadBufferSizeReturn: buffers) == ACLBufferSize(packetLength: 27, packetCount: 64))
        }
        let peripheralAddress: [UInt8] = [0xD1, 0xD2, 0xD3, 0xD4, 0xD5, 0xD6]
        _ = try await central.command(0x2005, [0xC1, 0xC2, 0xC3, 0xC4, 0xC5, 0xC6])
        _ = try await peripheral.command(0x2005, peripheralAddress)
        // Advertise: ADV_IND, random own address, all channels (Bumble reads the interval as ms).
        _ = try await peripheral.command(0x2006, [0x14, 0x00, 0x14, 0x00, 0x00, 0x01, 0x00, 0, 0, 0, 0, 0, 0, 0x07, 0x00])
        _ = try await peripheral.command(0x200A, [0x01])
        // LE Create Connection to the peripheral's random address: Command Status, then Connection Complete.
        let create: [UInt8] = [0x60, 0x00, 0x60, 0x00, 0x00, 0x01] + peripheralAddress
            + [0x01, 0x18, 0x00, 0x28, 0x00, 0x00, 0x00, 0x2A, 0x00, 0x00, 0x00, 0x00, 0x00]
        #expect(try await central.command(0x200D, create) == nil)  // pending
        let centralHandle = try await central.connectionComplete()
        let peripheralHandle = try await peripheral.connectionComplete()

        // A 104-byte L2CAP PDU leaves the central as 27+27+27+23 and arrives whole.
        let pdu: [UInt8] = [100, 0x00, 0x04, 0x00] + (0..<100).map { UInt8($0) }
        var flow = ACLFlowControl(bufferSize: ACLBufferSize(packetLength: 27, packetCount: 2))
        var outgoing = flow.send(pdu, on: centralHandle)
        #expect(outgoing.count == 2)
        var sentSizes: [Int] = []
        while !outgoing.isEmpty {
            for packet in outgoing {
                if case let .acl(_, _, _, data) = packet { sentSizes.append(data.count) }
                try await central.transport.send(packet)
            }
            // Bumble answers each ACL packet with Number Of Completed Packets.
            let completed = try await central.nextEvent { if case .numberOfCompletedPackets = $0 { true } else { false } }
            outgoing = flow.handle(completed)
        }
        #expect(sentSizes == [27, 27, 27, 23])
        var reassembler = ACLReassembler()
        var received: [UInt8]?
        while received == nil {
            let packet = try await peripheral.nextACL()
            let output = reassembler.receive(packet)
            #expect(output.errors.isEmpty)
            if let done = output.pdu {
                #expect(done.handle == peripheralHandle)
                received = done.bytes
            }
        }
        #expect(received == pdu)

        _ = try await central.command(0x0406, [UInt8(centralHandle & 0xFF), UInt8(centralHandle >> 8), 0x13])
        let disconnected = try await central.nextEvent { if case .disconnectionComplete = $0 { true } else { false } }
        #expect(disconnected == .disconnectionComplete(HCIDisconnectionComplete(status: .success, handle: centralHandle, reason: .remoteUserTerminated)))
        await central.transport.close()
        await peripheral.transport.close()

        // The capture reads back: Reset first, its Command Complete second.
        let records = try BTSnoopReader.records(atPath: snoopPath)
        #expect(records.first?.packet == .command(opcode: HCIOpcode(rawValue: 0x0C03), parameters: []))
        #expect(records.first?.direction == .sent)
        #expect(records.dropFirst().first?.packet == .event(code: 0x0E, parameters: [0x01, 0x03, 0x0C, 0x00]))
        #expect(records.contains { $0.direction == .sent && { if case .acl = $0 { true } else { false } }($0.packet) })
        // And Bumble's own reader accepts it.
        let show = try await BumbleControllers.show(snoopPath)
        #expect(show.status == 0)
        #expect(show.output.contains("HCI_RESET_COMMAND"))
    }
}

/// A host driven step by step: the command queue over a transport, other packets kept in order.
final class ScriptedHost {
    let transport: any HCITransport
    private var packets: AsyncThrowingStream<HCIPacket, any Error>.Iterator
    private var queue = HCICommandQueue(defaultTimeout: 10)
    private var stash: [HCIPacket] = []

    init(_ transport: any HCITransport) async throws {
        self.transport = transport
        packets = transport.packets.makeAsyncIterator()
    }

    /// Sends a command and returns its return parameters (nil for Command Status 0).
    func command(_ opcode: UInt16, _ parameters: [UInt8] = []) async throws -> [UInt8]? {
        let (ticket, output) = queue.enqueue(HCIOpcode(rawValue: opcode), parameters: parameters, now: 0)
        for packet in output.packets { try await transport.send(packet) }
        while true {
            let packet = try await next()
            guard let event = try HCIEvent(packet: packet) else {
                stash.append(packet)
                continue
            }
            switch event {
            case .commandComplete, .commandStatus:
                let output = queue.handle(event, now: 0)
                for packet in output.packets { try await transport.send(packet) }
                if let completion = output.completions.first(where: { $0.ticket == ticket }) {
                    switch try completion.result.get() {
                    case let .complete(returnParameters): return returnParameters
                    case .pending: return nil
                    }
                }
            default:
                stash.append(packet)
            }
        }
    }

    /// The next event this layer decodes that matches `predicate` (earlier packets are kept).
    func nextEvent(_ predicate: (HCIEvent) -> Bool) async throws -> HCIEvent {
        if let index = try stash.firstIndex(where: { try HCIEvent(packet: $0).map(predicate) ?? false }),
           let event = try HCIEvent(packet: stash.remove(at: index)) {
            return event
        }
        while true {
            let packet = try await next()
            if let event = try HCIEvent(packet: packet), predicate(event) { return event }
            stash.append(packet)
        }
    }

    /// The next incoming ACL packet.
    func nextACL() async throws -> HCIPacket {
        if let index = stash.firstIndex(where: { if case .acl = $0 { true } else { false } }) {
            return stash.remove(at: index)
        }
        while true {
            let packet = try await next()
            if case .acl = packet { return packet }
            stash.append(packet)
        }
    }

    /// Waits for LE Connection Complete (3E 01) and returns its handle.
    func connectionComplete() async throws -> UInt16 {
        func isComplete(_ packet: HCIPacket) -> Bool {
            if case let .event(0x3E, parameters) = packet, parameters.first == 0x01 { return true }
            return false
        }
        var packet = stash.firstIndex(where: isComplete).map { stash.remove(at: $0) }
        while packet == nil {
            let next = try await next()
            if isComplete(next) { packet = next } else { stash.append(next) }
        }
        guard case let .event(_, parameters)? = packet else { throw TransportError.ioFailed("no connection") }
        var r = ByteReader(parameters)
        _ = try r.readUInt8("subevent")
        let status = try r.readUInt8("status")
        guard status == 0 else { throw TransportError.ioFailed("LE Connection Complete status \(status)") }
        return try r.read(UInt16.self, "handle") & 0x0FFF
    }

    private func next() async throws -> HCIPacket {
        guard let packet = try await packets.next() else { throw TransportError.closed("scripted host") }
        return packet
    }
}

/// A `python -m bumble.apps.controllers` process with two TCP controllers on one virtual link,
/// run through the shared `BumbleProcess` harness (output read on dedicated threads; stopped by
/// PID). Used on purpose instead of `Interop/bumble/controllers.py`: this test checks interop
/// with Bumble's own controllers app, as `python -m bumble.apps.controllers tcp-server:_:PORT_A
/// tcp-server:_:PORT_B`.
final class BumbleControllers: Sendable {
    let process: BumbleProcess
    let ports: [Int]

    private init(process: BumbleProcess, ports: [Int]) {
        self.process = process
        self.ports = ports
    }

    /// Runs `python -m bumble.apps.show --format snoop <path>`; returns its exit status (`nil`
    /// if it did not finish within 60 s) and standard output.
    static func show(_ path: String) async throws -> (status: Int32?, output: String) {
        let show = try await BumbleProcess.launchPython(
            .module("bumble.apps.show"), arguments: ["--format", "snoop", path], name: "show")
        let status = await show.waitForCompletion(timeout: .seconds(60))
        await show.stop()
        return (status, await show.output(.stdout).map { $0 + "\n" }.joined())
    }

    /// Starts the controllers on two free ports.
    static func start() async throws -> BumbleControllers {
        var ports: [Int] = []
        for _ in 0..<2 {
            let probe = try await TCPServerTransport.listen(host: "127.0.0.1", port: 0)
            ports.append(probe.localPort)
            await probe.close()
        }
        let process = try await BumbleProcess.launchPython(
            .module("bumble.apps.controllers"), arguments: ports.map { "tcp-server:_:\($0)" }, name: "bumble-controllers")
        return BumbleControllers(process: process, ports: ports)
    }

    /// Connects to controller `index`, retrying while the process starts (up to about 10 s).
    func connect(_ index: Int, snoop: String?) async throws -> any HCITransport {
        let spec = "tcp-client:127.0.0.1:\(ports[index])" + (snoop.map { "+snoop:" + $0 } ?? "")
        var lastError: (any Error)?
        for _ in 0..<100 {
            do {
                return try await Transport.open(spec)
            } catch {
                lastError = error
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        throw lastError ?? TransportError.openFailed(spec)
    }

    /// Ends the process by its own pid at once: SIGTERM, then SIGKILL without a grace period
    /// (as before: the controllers app holds nothing worth a clean shutdown).
    func stop() async {
        await process.stop(grace: .zero)
    }
}
