import BluetideBase
import BluetideHCI
import Testing
@testable import BluetideHost

/// GATT client procedures inside ``HostCore``, on the manual time of ``HostCoreTests/Harness``:
/// one procedure at a time per link, the rest in order; link loss, the ATT timeout and
/// cancellation end them with the right error.
@Suite struct HostCoreGATTClientTests {
    typealias Harness = HostCoreTests.Harness

    /// The ATT PDUs the core sent (one L2CAP frame per ACL packet at these sizes).
    static func att(_ outputs: HostOutputs) -> [[UInt8]] {
        HostCoreTests.acl(outputs).map { Array($0.dropFirst(4)) }
    }

    /// An ATT PDU from the peer on link 0x40.
    static func peer(_ pdu: [UInt8]) -> HCIPacket {
        .acl(handle: 0x40, boundary: .firstFlushable, broadcast: 0, data: HostCoreTests.l2cap(4, pdu))
    }

    static func results(_ outputs: HostOutputs) -> [(HostRequestID, Result<GATTProcedureResult, any Error>)] {
        HostCoreTests.finished(outputs).map { id, result in
            (id, result.flatMap { reply in
                guard case let .gatt(gatt) = reply else { return .failure(HostError.malformed("not a GATT result: \(reply)")) }
                return .success(gatt)
            })
        }
    }

    static func failure(_ outputs: HostOutputs, _ id: HostRequestID) -> (any Error)? {
        guard let result = results(outputs).first(where: { $0.0 == id })?.1, case let .failure(error) = result else { return nil }
        return error
    }

    static func harness() -> Harness {
        var h = Harness(configuration: HostConfiguration(attTransactionTimeout: 30))
        h.incomingLink(buffers: 64, length: 251)
        return h
    }

    @Test func twoProceduresOnOneLinkRunOneAfterTheOther() throws {
        var h = Self.harness()
        let read = h.id()
        let write = h.id()
        var out = h.feed(.gattProcedure(read, handle: 0x40, .read(handle: 3)))
        out.packets += h.feed(.gattProcedure(write, handle: 0x40, .write(handle: 5, value: [9]))).packets
        #expect(Self.att(out) == [[0x0A, 0x03, 0x00]], "the write waits for the read")
        // The read's answer ends it and sends the write in the same round.
        out = h.receive(Self.peer([0x0B, 0x01, 0x02]))
        #expect(Self.att(out) == [[0x12, 0x05, 0x00, 0x09]])
        #expect(Self.results(out).map(\.0) == [read])
        #expect(try Self.results(out).first?.1.get() == .value([1, 2]))
        out = h.receive(Self.peer([0x13]))
        #expect(try Self.results(out).map { try $0.1.get() } == [.written])
        #expect(Self.att(out).isEmpty)
    }

    @Test func aMultiRequestProcedureHoldsTheSlotUntilItsEnd() throws {
        var h = Self.harness()
        let discovery = h.id()
        let read = h.id()
        var out = h.feed(.gattProcedure(discovery, handle: 0x40, .discoverPrimaryServices(uuid: nil)))
        out.packets += h.feed(.gattProcedure(read, handle: 0x40, .read(handle: 3))).packets
        #expect(Self.att(out) == [[0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28]])
        out = h.receive(Self.peer([0x11, 0x06, 0x01, 0x00, 0x05, 0x00, 0x00, 0x18]))
        #expect(Self.att(out) == [[0x10, 0x06, 0x00, 0xFF, 0xFF, 0x00, 0x28]], "the discovery goes on before the read")
        #expect(Self.results(out).isEmpty)
        out = h.receive(Self.peer([0x01, 0x10, 0x06, 0x00, 0x0A]))
        #expect(try Self.results(out).first?.1.get() == .services([GATTServiceRange(uuid: .genericAccess, startHandle: 1, endHandle: 5)]))
        #expect(Self.att(out) == [[0x0A, 0x03, 0x00]])
    }

    @Test func aLinkLossFailsTheRunningAndTheWaitingProceduresWithTheLinksError() {
        var h = Self.harness()
        let running = h.id()
        let waiting = h.id()
        _ = h.feed(.gattProcedure(running, handle: 0x40, .discoverDatabase))
        _ = h.feed(.gattProcedure(waiting, handle: 0x40, .writeLong(handle: 3, value: [1, 2, 3], offset: 0)))
        let out = h.receive(HCIDisconnectionComplete(handle: 0x40, reason: .remoteUserTerminated).packet)
        #expect(Set(Self.results(out).map(\.0)) == [running, waiting])
        for id in [running, waiting] {
            #expect(Self.failure(out, id) as? HostError == .disconnected(0x40, reason: .remoteUserTerminated))
        }
        #expect(out.packets.isEmpty)
        // Later procedures on the link fail at once.
        let later = h.id()
        #expect(Self.failure(h.feed(.gattProcedure(later, handle: 0x40, .read(handle: 3))), later) as? HostError == .noSuchConnection(0x40))
    }

    @Test func aLinkLossMidLongWriteEndsItWithTheLinksError() {
        var h = Self.harness()
        let write = h.id()
        let waiting = h.id()
        let out1 = h.feed(.gattProcedure(write, handle: 0x40, .write(handle: 3, value: [UInt8](repeating: 1, count: 30))))
        #expect(Self.att(out1).first?.first == 0x16)
        _ = h.feed(.gattProcedure(waiting, handle: 0x40, .read(handle: 3)))
        let out = h.receive(HCIDisconnectionComplete(handle: 0x40, reason: .connectionTimeout).packet)
        #expect(Self.failure(out, write) as? HostError == .disconnected(0x40, reason: .connectionTimeout))
        #expect(Self.failure(out, waiting) as? HostError == .disconnected(0x40, reason: .connectionTimeout))
        #expect(out.packets.isEmpty, "no cancel on a link that is gone")
    }

    @Test func proceduresOfALinkReplacedOnItsHandleFailAndNothingGoesToTheNewLink() {
        var h = Self.harness()
        let write = h.id()
        let waiting = h.id()
        _ = h.feed(.gattProcedure(write, handle: 0x40, .writeLong(handle: 3, value: [1, 2, 3], offset: 0)))
        _ = h.feed(.gattProcedure(waiting, handle: 0x40, .read(handle: 3)))
        // A Connection Complete for the open handle: its Disconnection Complete was lost.
        let out = h.receive(LEConnectionComplete(
            handle: 0x40, role: .peripheral, peerAddress: HostCoreTests.peer, interval: 24, latency: 0, supervisionTimeout: 72).packet)
        #expect(Self.failure(out, write) as? HostError == .disconnected(0x40, reason: .unspecifiedError))
        #expect(Self.failure(out, waiting) as? HostError == .disconnected(0x40, reason: .unspecifiedError))
        #expect(Self.att(out).isEmpty, "neither the cancel nor the read goes to the new link")
        #expect(h.core.link(0x40) != nil)
    }

    @Test func theATTTimeoutFailsTheRunningProcedureAndTheWaitingOnesFindTheBearerClosed() {
        var h = Self.harness()
        let write = h.id()
        let read = h.id()
        _ = h.feed(.gattProcedure(write, handle: 0x40, .write(handle: 3, value: [UInt8](repeating: 1, count: 30))))
        _ = h.feed(.gattProcedure(read, handle: 0x40, .read(handle: 5)))
        #expect(h.core.nextDeadline == .seconds(30), "the bearer's transaction timeout")
        #expect(Self.results(h.tick(at: 29.9)).isEmpty)
        let out = h.tick(at: 30)
        #expect(Self.failure(out, write) as? ATTBearerError == .timedOut, "the long write ends with the timeout, its cancel unsent")
        #expect(Self.failure(out, read) as? ATTBearerError == .bearerClosed)
        #expect(out.packets.isEmpty)
        #expect(h.core.nextDeadline == nil)
    }

    @Test func aCancelledProcedureIsAnsweredAtOnceAndTheNextStartsAfterTheLateAnswer() throws {
        var h = Self.harness()
        let read = h.id()
        let queued = h.id()
        let next = h.id()
        _ = h.feed(.gattProcedure(read, handle: 0x40, .read(handle: 3)))
        _ = h.feed(.gattProcedure(queued, handle: 0x40, .read(handle: 4)))
        _ = h.feed(.gattProcedure(next, handle: 0x40, .read(handle: 5)))
        var out = h.feed(.cancelGATTProcedure(read))
        #expect(Self.failure(out, read) is CancellationError)
        out = h.feed(.cancelGATTProcedure(queued))
        #expect(Self.failure(out, queued) is CancellationError)
        #expect(out.packets.isEmpty)
        #expect(h.feed(.cancelGATTProcedure(read)).isEmpty, "cancelling twice does nothing")
        // The late answer ends the cancelled read silently; the next one goes out.
        out = h.receive(Self.peer([0x0B, 0x01]))
        #expect(Self.results(out).isEmpty)
        #expect(Self.att(out) == [[0x0A, 0x05, 0x00]])
        out = h.receive(Self.peer([0x0B, 0x02]))
        #expect(try Self.results(out).map { try $0.1.get() } == [.value([2])])
    }

    @Test func aCancelledLongWriteStillCancelsTheServersQueueBeforeTheNextProcedure() {
        var h = Self.harness()
        let write = h.id()
        let read = h.id()
        let value = (0..<40).map { UInt8($0) }
        var out = h.feed(.gattProcedure(write, handle: 0x40, .writeLong(handle: 3, value: value, offset: 0)))
        let prepare = Self.att(out)
        #expect(prepare == [[0x16, 0x03, 0x00, 0x00, 0x00] + value.prefix(18)])
        _ = h.feed(.gattProcedure(read, handle: 0x40, .read(handle: 3)))
        #expect(Self.failure(h.feed(.cancelGATTProcedure(write)), write) is CancellationError)
        out = h.receive(Self.peer([0x17] + prepare[0].dropFirst()))
        #expect(Self.att(out) == [[0x18, 0x00]])
        out = h.receive(Self.peer([0x19]))
        #expect(Self.att(out) == [[0x0A, 0x03, 0x00]], "the read waits for the cancel")
        #expect(Self.results(out).isEmpty)
    }

    @Test func proceduresOnAnUnknownLinkFailUnlessTheyNeedNoRequest() throws {
        var h = Self.harness()
        let read = h.id()
        #expect(Self.failure(h.feed(.gattProcedure(read, handle: 0x41, .read(handle: 3))), read) as? HostError == .noSuchConnection(0x41))
        let descriptors = h.id()
        let none = GATTCharacteristic(uuid: .batteryLevel, declarationHandle: 1, valueHandle: 2, endHandle: 2, properties: .read)
        let out = h.feed(.gattProcedure(descriptors, handle: 0x41, .discoverDescriptors(none)))
        #expect(try Self.results(out).map { try $0.1.get() } == [.descriptors([])])
    }

    @Test func aProcedureThatNeedsNoRequestDoesNotTakeTheSlot() throws {
        var h = Self.harness()
        let plain = GATTCharacteristic(uuid: .batteryLevel, declarationHandle: 1, valueHandle: 2, endHandle: 3, properties: .read)
        let subscribe = h.id()
        let read = h.id()
        var out = h.feed(.gattProcedure(subscribe, handle: 0x40, .changeSubscription(.subscribe(preferIndications: false), of: plain)))
        #expect(Self.failure(out, subscribe) as? GATTClientError == .notSubscribable(valueHandle: 2))
        out = h.feed(.gattProcedure(read, handle: 0x40, .read(handle: 3)))
        #expect(Self.att(out) == [[0x0A, 0x03, 0x00]])
    }

    @Test func anMTUExchangeAheadChangesTheMTUOfTheProceduresBehindIt() throws {
        var h = Self.harness()
        let mtu = h.id()
        let write = h.id()
        _ = h.feed(.gattProcedure(mtu, handle: 0x40, .exchangeMTU(clientMTU: 517)))
        _ = h.feed(.gattProcedure(write, handle: 0x40, .write(handle: 3, value: [UInt8](repeating: 7, count: 40))))
        // The write is built when its turn comes, at the MTU of 100: one Write Request.
        let out = h.receive(Self.peer([0x03, 0x64, 0x00]))
        #expect(try Self.results(out).first?.1.get() == .mtu(100))
        #expect(Self.att(out) == [[0x12, 0x03, 0x00] + [UInt8](repeating: 7, count: 40)])
    }

    @Test func stoppingFailsRunningAndWaitingProcedures() {
        var h = Self.harness()
        let running = h.id()
        let waiting = h.id()
        _ = h.feed(.gattProcedure(running, handle: 0x40, .read(handle: 3)))
        _ = h.feed(.gattProcedure(waiting, handle: 0x40, .read(handle: 4)))
        let out = h.feed(.stop(.notRunning))
        #expect(Self.failure(out, running) as? HostError == .notRunning)
        #expect(Self.failure(out, waiting) as? HostError == .notRunning)
        let later = h.id()
        #expect(Self.failure(h.feed(.gattProcedure(later, handle: 0x40, .read(handle: 3))), later) as? HostError == .notRunning)
    }

    @Test func aMalformedResponseFailsTheProcedureAndTheNextOneRuns() {
        var h = Self.harness()
        let read = h.id()
        let next = h.id()
        _ = h.feed(.gattProcedure(read, handle: 0x40, .readMultipleVariable(handles: [1, 2])))
        _ = h.feed(.gattProcedure(next, handle: 0x40, .read(handle: 2)))
        // A Read Multiple Variable Response whose length field is cut short.
        let out = h.receive(Self.peer([0x21, 0x01]))
        #expect(Self.failure(out, read) is ATTBearerError)
        #expect(Self.att(out) == [[0x0A, 0x02, 0x00]])
    }
}
