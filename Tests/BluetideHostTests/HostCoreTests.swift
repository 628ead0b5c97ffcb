import BluetideBase
import BluetideHCI
import Testing
@testable import BluetideHost

/// ``HostCore`` alone: inputs at chosen times in, packets and events out. No tasks, no clock,
/// no sleeps — every timeout here fires because the test says the time has come.
@Suite struct HostCoreTests {
    static let peer = BluetoothAddress.randomStatic(0x0000_0000_7777)

    /// A core and the time, with helpers that feed it and collect what it produced.
    struct Harness {
        var core: HostCore
        var now: Duration = .zero
        var nextID: UInt64 = 1

        init(configuration: HostConfiguration = HostConfiguration(randomAddress: .randomStatic(0x1111_2222_3333))) {
            core = HostCore(configuration: configuration)
        }

        /// Feeds `input` at the current time and returns what came out.
        mutating func feed(_ input: HostInput) -> HostOutputs {
            var outputs = HostOutputs()
            core.handle(input, now: now, into: &outputs)
            core.outputsSent()
            return outputs
        }

        /// Feeds packets from the controller, as one batch (the outputs are written after the
        /// last one, as the stack's driver does).
        mutating func receive(_ packets: HCIPacket...) -> HostOutputs {
            var outputs = HostOutputs()
            for packet in packets { core.handle(.received(packet), now: now, into: &outputs) }
            core.outputsSent()
            return outputs
        }

        /// Moves the time to `seconds` and ticks.
        mutating func tick(at seconds: Double) -> HostOutputs {
            now = .milliseconds(Int64(seconds * 1000))
            return feed(.tick)
        }

        mutating func id() -> HostRequestID {
            defer { nextID += 1 }
            return HostRequestID(rawValue: nextID)
        }

        /// A link the peer made to us on `handle`, with `buffers` ACL buffers of `length` bytes.
        mutating func incomingLink(_ handle: UInt16 = 0x40, buffers: Int = 4, length: Int = 27) {
            _ = feed(.configureBuffers(ACLBufferSize(packetLength: length, packetCount: buffers)))
            let out = receive(LEConnectionComplete(
                handle: handle, role: .peripheral, peerAddress: HostCoreTests.peer, interval: 24, latency: 0,
                supervisionTimeout: 72).packet)
            #expect(out.events.contains { if case .linkOpened = $0 { true } else { false } })
        }
    }

    static func opcodes(_ outputs: HostOutputs) -> [UInt16] {
        outputs.packets.compactMap { if case let .command(opcode, _) = $0 { opcode.rawValue } else { nil } }
    }

    static func acl(_ outputs: HostOutputs) -> [[UInt8]] {
        outputs.packets.compactMap { if case let .acl(_, _, _, data) = $0 { data } else { nil } }
    }

    static func finished(_ outputs: HostOutputs) -> [(HostRequestID, Result<HostReply, any Error>)] {
        outputs.events.compactMap { if case let .finished(id, result) = $0 { (id, result) } else { nil } }
    }

    static func complete(_ opcode: UInt16, _ returns: [UInt8] = [0x00]) -> HCIPacket {
        HCICommandComplete(opcode: HCIOpcode(rawValue: opcode), returnParameters: returns).packet
    }

    static func status(_ opcode: UInt16, _ status: HCIStatus = .success) -> HCIPacket {
        HCICommandStatus(status: status, opcode: HCIOpcode(rawValue: opcode)).packet
    }

    static func l2cap(_ cid: UInt16, _ payload: [UInt8]) -> [UInt8] {
        [UInt8(payload.count & 0xFF), UInt8(payload.count >> 8), UInt8(cid & 0xFF), UInt8(cid >> 8)] + payload
    }

    // MARK: HCI commands

    @Test func aCommandTimesOutAtItsDeadlineNamingItAndTheNextOneGoesOut() throws {
        var h = Harness(configuration: HostConfiguration(commandTimeout: 2))
        #expect(h.core.nextDeadline == nil)
        let first = h.id()
        var out = h.feed(.command(first, opcode: HCIOpcode(rawValue: 0x2030), parameters: [0x40, 0x00], timeout: nil))
        #expect(out.packets == [.command(opcode: HCIOpcode(rawValue: 0x2030), parameters: [0x40, 0x00])])
        #expect(h.core.nextDeadline == .seconds(2))
        // A second command waits for the one credit.
        let second = h.id()
        out = h.feed(.command(second, opcode: HCIOpcode(rawValue: 0x200C), parameters: [0x00, 0x00], timeout: nil))
        #expect(out.packets.isEmpty)
        #expect(h.tick(at: 1.999).isEmpty)
        out = h.tick(at: 2)
        let results = Self.finished(out)
        #expect(results.count == 1)
        #expect(results.first?.0 == first)
        let text = results.first.map { "\($0.1)" } ?? ""
        #expect(text.contains("LE Read PHY (0x2030)"), "\(text)")
        #expect(text.contains("no Command Complete or Command Status within 2 s"), "\(text)")
        // Its credit came back: the waiting command goes out now.
        #expect(Self.opcodes(out) == [0x200C])
        out = h.receive(Self.complete(0x200C))
        #expect(Self.finished(out).map(\.0) == [second])
        #expect(h.core.nextDeadline == nil)
    }

    @Test func aFailedStatusFailsTheRequestWithTheStatus() {
        var h = Harness()
        let request = h.id()
        _ = h.feed(.command(request, opcode: HCIOpcode(rawValue: 0x2006), parameters: [], timeout: nil))
        let out = h.receive(Self.complete(0x2006, [0x12]))
        guard case .failure(let error)? = Self.finished(out).first?.1 else {
            Issue.record("expected a failure, got \(out.events)")
            return
        }
        #expect("\(error)".contains("LE Set Advertising Parameters"), "\(error)")
    }

    // MARK: GAP

    @Test func aTimedOutConnectIsCancelledAndTheNextConnectWaitsForTheCancelToSettle() throws {
        var h = Harness()
        let first = h.id()
        var out = h.feed(.connect(first, address: Self.peer, parameters: LEConnectionParameters(), timeout: 5))
        #expect(Self.opcodes(out) == [0x200D])
        #expect(h.receive(Self.status(0x200D)).isEmpty)
        #expect(h.core.nextDeadline == .seconds(5))
        out = h.tick(at: 5)
        guard case .failure(let error)? = Self.finished(out).first?.1 else {
            Issue.record("expected the connect to fail, got \(out.events)")
            return
        }
        #expect(error as? HostError == .connectTimedOut(Self.peer, seconds: 5))
        #expect(Self.opcodes(out) == [0x200E], "LE Create Connection Cancel")
        // A second connect now waits: the controller may still answer the first attempt.
        let second = h.id()
        h.now = .seconds(5.1)
        out = h.feed(.connect(second, address: Self.peer, parameters: LEConnectionParameters(), timeout: 5))
        #expect(out.isEmpty)
        #expect(h.receive(Self.complete(0x200E)).isEmpty)
        // The cancelled attempt ends with Unknown Connection Identifier (0x02): not an answer to
        // the second connect, whose LE Create Connection goes out only now.
        out = h.receive(LEConnectionComplete(
            status: HCIStatus(rawValue: 0x02), handle: 0, role: .central, peerAddress: Self.peer, interval: 0, latency: 0,
            supervisionTimeout: 0).packet)
        #expect(Self.finished(out).isEmpty)
        #expect(Self.opcodes(out) == [0x200D])
        _ = h.receive(Self.status(0x200D))
        out = h.receive(LEConnectionComplete(
            handle: 0x41, role: .central, peerAddress: Self.peer, interval: 24, latency: 0, supervisionTimeout: 72).packet)
        guard case .success(.link(let link))? = Self.finished(out).first?.1 else {
            Issue.record("expected the second connect to succeed, got \(out.events)")
            return
        }
        #expect(Self.finished(out).first?.0 == second)
        #expect(link.handle == 0x41)
        #expect(h.core.openLinks.map(\.handle) == [0x41])
    }

    @Test func aConnectionThatWinsTheRaceWithTheCancelIsDisconnectedNotSurfaced() {
        var h = Harness()
        _ = h.feed(.connect(h.id(), address: Self.peer, parameters: LEConnectionParameters(), timeout: 1))
        _ = h.receive(Self.status(0x200D))
        _ = h.tick(at: 1)
        _ = h.receive(Self.complete(0x200E, [0x0C]))  // Command Disallowed: the link is already up
        // The cancel failed: the next connect would go ahead. The late link is dropped.
        let out = h.receive(LEConnectionComplete(
            handle: 0x42, role: .central, peerAddress: Self.peer, interval: 24, latency: 0, supervisionTimeout: 72).packet)
        #expect(!out.events.contains { if case .linkOpened = $0 { true } else { false } })
        #expect(out.packets == [HCIDisconnect(handle: 0x42, reason: .remoteUserTerminated).packet])
    }

    @Test func theCancelWaitIsBoundedWhenTheControllerNeverEndsTheAttempt() {
        var h = Harness()
        _ = h.feed(.connect(h.id(), address: Self.peer, parameters: LEConnectionParameters(), timeout: 1))
        _ = h.receive(Self.status(0x200D))
        _ = h.tick(at: 1)
        _ = h.receive(Self.complete(0x200E))
        let second = h.id()
        #expect(h.feed(.connect(second, address: Self.peer, parameters: LEConnectionParameters(), timeout: 1)).isEmpty)
        #expect(h.core.nextDeadline == .seconds(3))
        #expect(Self.opcodes(h.tick(at: 2.9)).isEmpty)
        #expect(Self.opcodes(h.tick(at: 3)) == [0x200D])
    }

    @Test func scansShareOneControllerScanThatStopsWithTheLastScanner() {
        var h = Harness()
        let first = h.id()
        var out = h.feed(.startScan(first, scanner: 1, active: true))
        #expect(Self.opcodes(out) == [0x200B], "parameters first; enable waits for the credit")
        out = h.receive(Self.complete(0x200B))
        #expect(Self.opcodes(out) == [0x200C])
        #expect(Self.finished(out).isEmpty)
        out = h.receive(Self.complete(0x200C))
        #expect(Self.finished(out).map(\.0) == [first])
        // A second scanner joins the running scan: no command.
        let second = h.id()
        out = h.feed(.startScan(second, scanner: 2, active: true))
        #expect(out.packets.isEmpty)
        #expect(Self.finished(out).map(\.0) == [second])
        #expect(h.feed(.stopScan(scanner: 1)).packets.isEmpty)
        out = h.feed(.stopScan(scanner: 2))
        #expect(out.packets == [LESetScanEnable(enable: false).packet])
        #expect(h.feed(.stopScan(scanner: 2)).isEmpty, "stopping twice sends nothing")
    }

    @Test func aScanWhoseEnableFailsEndsAndTheNextScanStartsAgain() {
        var h = Harness()
        let first = h.id()
        _ = h.feed(.startScan(first, scanner: 1, active: true))
        _ = h.receive(Self.complete(0x200B))
        let out = h.receive(Self.complete(0x200C, [0x0C]))
        guard case .failure? = Self.finished(out).first?.1 else {
            Issue.record("expected the scan to fail, got \(out.events)")
            return
        }
        #expect(Self.opcodes(h.feed(.startScan(h.id(), scanner: 2, active: false))) == [0x200B])
    }

    // MARK: ATT and flow control

    @Test func anATTTimeoutFailsTheRequestAndClosesTheBearer() {
        var h = Harness(configuration: HostConfiguration(attTransactionTimeout: 30))
        h.incomingLink()
        let request = h.id()
        var out = h.feed(.attRequest(request, handle: 0x40, pdu: .readRequest(handle: 3)))
        #expect(Self.acl(out) == [Self.l2cap(4, [0x0A, 0x03, 0x00])])
        #expect(h.core.nextDeadline == .seconds(30))
        #expect(Self.finished(h.tick(at: 29.9)).isEmpty)
        out = h.tick(at: 30)
        guard case .failure(let error)? = Self.finished(out).first?.1 else {
            Issue.record("expected a timeout, got \(out.events)")
            return
        }
        #expect(error as? ATTBearerError == .timedOut)
        // The bearer is closed: later requests fail at once and nothing is sent.
        let later = h.id()
        out = h.feed(.attRequest(later, handle: 0x40, pdu: .readRequest(handle: 3)))
        #expect(out.packets.isEmpty)
        guard case .failure(let closed)? = Self.finished(out).first?.1 else {
            Issue.record("expected a failure, got \(out.events)")
            return
        }
        #expect(closed as? ATTBearerError == .bearerClosed)
    }

    @Test func aclCreditsPaceTheSenderAndCompletedPacketsReleaseIt() throws {
        var h = Harness()
        h.incomingLink(buffers: 2)
        var out = HostOutputs()
        for i in 0..<3 {
            try h.core.sendATTCommand(.writeCommand(handle: 5, value: [UInt8(i)]), on: 0x40, now: h.now, into: &out)
        }
        #expect(Self.acl(out) == [Self.l2cap(4, [0x52, 0x05, 0x00, 0]), Self.l2cap(4, [0x52, 0x05, 0x00, 1])])
        // Credits for an unknown handle grant nothing.
        #expect(h.receive(HCINumberOfCompletedPackets(entries: [.init(handle: 0x99, completedPackets: 1)]).packet).isEmpty)
        out = h.receive(HCINumberOfCompletedPackets(entries: [.init(handle: 0x40, completedPackets: 1)]).packet)
        #expect(Self.acl(out) == [Self.l2cap(4, [0x52, 0x05, 0x00, 2])])
    }

    @Test func aWriteCommandIsFramedInOneGoAndRefusedBeyondMTUMinus3() throws {
        var h = Harness()
        h.incomingLink(buffers: 8, length: 12)
        var out = HostOutputs()
        let value = (0..<20).map { UInt8($0) }
        try h.core.sendWriteCommand(value, to: 0x0105, on: 0x40, into: &out)
        let frame = Self.l2cap(4, [0x52, 0x05, 0x01] + value)
        #expect(Self.acl(out) == [Array(frame[0..<12]), Array(frame[12..<24]), Array(frame[24...])])
        #expect(throws: GATTClientError.valueTooLong(length: 21, maximum: 20)) {
            try h.core.sendWriteCommand(value + [0], to: 0x0105, on: 0x40, into: &out)
        }
        #expect(throws: HostError.noSuchConnection(0x41)) {
            try h.core.sendWriteCommand(value, to: 0x0105, on: 0x41, into: &out)
        }
        #expect(Self.acl(out).count == 3, "nothing more was sent")
    }

    @Test func aLongPDUIsFragmentedToTheBufferLength() throws {
        var h = Harness()
        h.incomingLink(buffers: 8, length: 12)
        var out = HostOutputs()
        let value = (0..<20).map { UInt8($0) }
        try h.core.sendATTCommand(.writeCommand(handle: 5, value: value), on: 0x40, now: h.now, into: &out)
        let frame = Self.l2cap(4, [0x52, 0x05, 0x00] + value)
        #expect(out.packets == [
            .acl(handle: 0x40, boundary: .firstNonFlushable, broadcast: 0, data: Array(frame[0..<12])),
            .acl(handle: 0x40, boundary: .continuing, broadcast: 0, data: Array(frame[12..<24])),
            .acl(handle: 0x40, boundary: .continuing, broadcast: 0, data: Array(frame[24...])),
        ])
    }

    @Test func aSenderWaitsForBuffersBeyondTheBacklogAndTimesOutWithoutCompletedPackets() throws {
        var h = Harness(configuration: HostConfiguration(attTransactionTimeout: 10))
        h.incomingLink(buffers: 1)
        var out = HostOutputs()
        for i in 0...HostCore.backlogLimit + 1 {
            try h.core.sendATTCommand(.writeCommand(handle: 5, value: [UInt8(i)]), on: 0x40, now: h.now, into: &out)
        }
        #expect(!h.core.hasRoomForData(on: 0x40))
        let waiting = h.id()
        #expect(Self.finished(h.feed(.waitForBuffers(waiting, handle: 0x40))).isEmpty)
        // One credit back lets one fragment out: the queue is at the limit, the waiter goes on.
        out = h.receive(HCINumberOfCompletedPackets(entries: [.init(handle: 0x40, completedPackets: 1)]).packet)
        #expect(Self.finished(out).map(\.0) == [waiting])
        try h.core.sendATTCommand(.writeCommand(handle: 5, value: [0xFF]), on: 0x40, now: h.now, into: &out)
        let starved = h.id()
        _ = h.feed(.waitForBuffers(starved, handle: 0x40))
        out = h.tick(at: 10)
        guard case .failure(let error)? = Self.finished(out).first?.1 else {
            Issue.record("expected a timeout, got \(out.events)")
            return
        }
        #expect("\(error)".contains("no Number Of Completed Packets"), "\(error)")
    }

    @Test func fragmentsAreReassembledIntoOneNotification() {
        var h = Harness()
        h.incomingLink()
        let frame = Self.l2cap(4, [0x1B, 0x09, 0x00] + Array(repeating: 0xAB, count: 20))
        var out = h.receive(.acl(handle: 0x40, boundary: .firstFlushable, broadcast: 0, data: Array(frame[0..<3])))
        #expect(out.isEmpty)
        out = h.receive(.acl(handle: 0x40, boundary: .continuing, broadcast: 0, data: Array(frame[3..<15])))
        #expect(out.isEmpty)
        #expect(h.core.pendingReassemblyBytes == 15)
        out = h.receive(.acl(handle: 0x40, boundary: .continuing, broadcast: 0, data: Array(frame[15...])))
        guard case let .notification(handle, valueHandle, value)? = out.events.first else {
            Issue.record("expected a notification, got \(out.events)")
            return
        }
        #expect(handle == 0x40 && valueHandle == 9 && value == Array(repeating: 0xAB, count: 20))
        #expect(h.core.pendingReassemblyBytes == 0)
    }

    @Test func aDisconnectionFailsTheLinksRequestsAndReturnsItsCredits() throws {
        var h = Harness()
        h.incomingLink(buffers: 1)
        let request = h.id()
        _ = h.feed(.attRequest(request, handle: 0x40, pdu: .readRequest(handle: 3)))
        let out = h.receive(HCIDisconnectionComplete(handle: 0x40, reason: .remoteUserTerminated).packet)
        #expect(out.events.contains { if case .linkClosed(0x40, .remoteUserTerminated, _) = $0 { true } else { false } })
        guard case .failure(let error)? = Self.finished(out).first?.1 else {
            Issue.record("expected the request to fail, got \(out.events)")
            return
        }
        #expect(error as? HostError == .disconnected(0x40, reason: .remoteUserTerminated))
        #expect(h.core.openLinks.isEmpty)
        #expect(h.core.nextDeadline == nil)
    }

    // MARK: Security seam

    @Test func pairingIsRefusedAndLongTermKeyRequestsGetANegativeReply() {
        // A host configured not to pair (the default pairs: see the next test).
        var h = Harness(configuration: HostConfiguration(
            randomAddress: .randomStatic(0x1111_2222_3333), security: SecurityPolicy(pairing: .notPairable)))
        h.incomingLink()
        var out = h.receive(.acl(
            handle: 0x40, boundary: .firstFlushable, broadcast: 0,
            data: Self.l2cap(6, [0x01, 0x03, 0x00, 0x01, 0x10, 0x07, 0x07])))
        #expect(Self.acl(out) == [Self.l2cap(6, [0x05, 0x05])])
        out = h.receive(LELongTermKeyRequest(handle: 0x40, randomNumber: 0, encryptedDiversifier: 0).packet)
        #expect(out.packets == [LELongTermKeyRequestNegativeReply(handle: 0x40).packet])
        out = h.receive(HCIEncryptionChange(status: HCIStatus(rawValue: 0x06), handle: 0x40, encryptionEnabled: 0).packet)
        guard case let .encryptionChanged(handle, encrypted, status)? = out.events.first else {
            Issue.record("expected an encryption change, got \(out.events)")
            return
        }
        #expect(handle == 0x40 && !encrypted && status == HCIStatus(rawValue: 0x06))
    }

    /// By default the security component pairs: a Pairing Request gets a Pairing Response.
    @Test func pairingRequestIsAnsweredWithAPairingResponse() {
        var h = Harness()
        h.incomingLink()
        let out = h.receive(.acl(
            handle: 0x40, boundary: .firstFlushable, broadcast: 0,
            data: Self.l2cap(6, [0x01, 0x03, 0x00, 0x09, 0x10, 0x07, 0x07])))
        // NoInputNoOutput, no OOB, Bonding | SC, 16; of the central we ask all three keys, of
        // the three asked of us we send EncKey and SignKey (IdKey needs an identity we lack).
        #expect(Self.acl(out) == [Self.l2cap(6, [0x02, 0x03, 0x00, 0x09, 0x10, 0x07, 0x05])])
        #expect(h.core.nextDeadline == .seconds(30))
    }

    /// A central that stops answering mid-pairing: the SMP timer (30 s on the core's time) ends
    /// pairing, and the pair request waiting on it fails with the timeout.
    @Test func silentPeerMidPairingTimesOut() {
        var h = Harness()
        h.incomingLink()
        let request = h.id()
        var out = h.feed(.pair(request, handle: 0x40, force: false))
        // As peripheral: a Security Request with Bonding | SC (no IO, so no MITM).
        #expect(Self.acl(out) == [Self.l2cap(6, [0x0B, 0x09])])
        #expect(h.core.nextDeadline == .seconds(30))
        out = h.tick(at: 29.9)
        #expect(Self.finished(out).isEmpty)
        out = h.tick(at: 30)
        guard case .failure(let error)? = Self.finished(out).first?.1 else {
            Issue.record("expected the pair request to fail, got \(out.events)")
            return
        }
        #expect(error as? SMPPairingError == .timeout)
        #expect(out.events.contains { if case .security(.pairingFailed(handle: 0x40, .timeout)) = $0 { true } else { false } })
        #expect(h.core.nextDeadline == nil)
    }

    // MARK: Stop

    @Test func stoppingFailsEveryRequestAndLaterOnes() {
        var h = Harness()
        h.incomingLink()
        let command = h.id()
        _ = h.feed(.command(command, opcode: HCIOpcode(rawValue: 0x1001), parameters: [], timeout: nil))
        let att = h.id()
        _ = h.feed(.attRequest(att, handle: 0x40, pdu: .readRequest(handle: 3)))
        var out = h.feed(.stop(.notRunning))
        #expect(Set(Self.finished(out).map(\.0)) == [command, att])
        #expect(out.events.contains { if case .linkClosed = $0 { true } else { false } })
        let later = h.id()
        out = h.feed(.connect(later, address: Self.peer, parameters: LEConnectionParameters(), timeout: 1))
        #expect(out.packets.isEmpty)
        #expect(Self.finished(out).map(\.0) == [later])
        #expect(h.core.nextDeadline == nil)
    }
}
