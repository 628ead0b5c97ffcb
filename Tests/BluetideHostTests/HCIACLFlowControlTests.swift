import BluetideBase
import BluetideHCI
import Testing
@testable import BluetideHost

@Suite struct HCIACLFlowControlTests {
    /// An L2CAP PDU on the ATT channel with `payload` bytes 0, 1, 2, ...
    static func pdu(_ payload: Int) -> [UInt8] {
        [UInt8(payload & 0xFF), UInt8(payload >> 8), 0x04, 0x00] + (0..<payload).map { UInt8(truncatingIfNeeded: $0) }
    }

    static func nocp(_ pairs: [(UInt16, UInt16)]) throws -> HCIEvent {
        var params: [UInt8] = [UInt8(pairs.count)]
        for (handle, count) in pairs {
            params += [UInt8(handle & 0xFF), UInt8(handle >> 8), UInt8(count & 0xFF), UInt8(count >> 8)]
        }
        return try HCIEvent(code: 0x13, parameters: params)
    }

    @Test func buffersFromLEReadBufferSizeOrTheSharedFallback() throws {
        // Bumble: LE Read Buffer Size returns 00 | 1B00 | 40 -> 27-byte packets, 64 buffers.
        #expect(try ACLBufferSize(leReadBufferSizeReturn: [0x00, 0x1B, 0x00, 0x40]) == ACLBufferSize(packetLength: 27, packetCount: 64))
        // v2 carries ISO sizes after the ACL ones.
        #expect(try ACLBufferSize(leReadBufferSizeReturn: [0x00, 0x1B, 0x00, 0x40, 0xC0, 0x03, 0x40]) == ACLBufferSize(packetLength: 27, packetCount: 64))
        // 0 means "shared with BR/EDR": fall back to Read Buffer Size (00 1B00 00 4000 0000).
        #expect(try ACLBufferSize(leReadBufferSizeReturn: [0x00, 0x00, 0x00, 0x00]) == nil)
        #expect(try ACLBufferSize(readBufferSizeReturn: [0x00, 0x1B, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00]) == ACLBufferSize(packetLength: 27, packetCount: 64))
        #expect(throws: DecodingError.truncated("LE Read Buffer Size Total_Num_LE_ACL_Data_Packets", needed: 1, present: 0, at: 3)) {
            try ACLBufferSize(leReadBufferSizeReturn: [0x00, 0x1B, 0x00])
        }
        #expect(throws: DecodingError.invalid("Read Buffer Size status", expected: "0x00 success", found: "0x01", at: 0)) {
            try ACLBufferSize(readBufferSizeReturn: [0x01])
        }
        #expect(throws: DecodingError.self) {
            try ACLBufferSize(readBufferSizeReturn: [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00])
        }
    }

    @Test func aLongBacklogDrainsInOrderAcrossQueueCompactionAndReuse() throws {
        // Two credits, 300 one-fragment PDUs and 50 three-fragment ones on one handle, 40 on
        // another: every fragment leaves exactly once, in order per handle, the handles take
        // turns, and the queues (compacted and reset as they drain) fill and drain again.
        var flow = ACLFlowControl(bufferSize: ACLBufferSize(packetLength: 27, packetCount: 2))
        var sent: [HCIPacket] = []
        var expected: [UInt16: [[UInt8]]] = [:]
        for round in 0..<2 {
            for n in 0..<300 {
                let pdu = Self.pdu(n % 23)
                expected[1, default: []].append(pdu)
                sent += flow.send(pdu, on: 1)
                if n % 6 == 0 {
                    let long = Self.pdu(60 + round)
                    expected[1, default: []].append(long)
                    sent += flow.send(long, on: 1)
                }
                if n % 7 == 0 {
                    let other = Self.pdu(n % 40)
                    expected[2, default: []].append(other)
                    sent += flow.send(other, on: 2)
                }
            }
            var rounds = 0
            while flow.queuedFragments(on: 1) + flow.queuedFragments(on: 2) > 0 {
                let one = UInt16(flow.outstandingPackets(on: 1)), two = UInt16(flow.outstandingPackets(on: 2))
                sent += flow.handle(try Self.nocp([(1, one), (2, two)]))
                rounds += 1
                try #require(rounds < 10_000)
            }
            sent += flow.handle(try Self.nocp([(1, UInt16(flow.outstandingPackets(on: 1))), (2, UInt16(flow.outstandingPackets(on: 2)))]))
            #expect(flow.availableCredits == 2)
        }
        var rebuilt: [UInt16: [[UInt8]]] = [:]
        var current: [UInt16: [UInt8]] = [:]
        for case let .acl(handle, boundary, _, data) in sent {
            if boundary == .firstNonFlushable, let done = current[handle] { rebuilt[handle, default: []].append(done); current[handle] = nil }
            current[handle, default: []] += data
        }
        for (handle, last) in current { rebuilt[handle, default: []].append(last) }
        #expect(rebuilt[1] == expected[1])
        #expect(rebuilt[2] == expected[2])
    }

    @Test func fragmentsToTheBufferLengthWithStartAndContinuationFlags() {
        let flow = ACLFlowControl(bufferSize: ACLBufferSize(packetLength: 27, packetCount: 64))
        let pdu = Self.pdu(100)  // 104 bytes -> 27 + 27 + 27 + 23, as Bumble's bench sends
        let packets = flow.fragments(of: pdu, handle: 0x0001)
        var sizes: [Int] = []
        var flags: [ACLBoundary] = []
        var joined: [UInt8] = []
        for case let .acl(handle, boundary, broadcast, data) in packets {
            #expect(handle == 1 && broadcast == 0)
            sizes.append(data.count)
            flags.append(boundary)
            joined += data
        }
        #expect(sizes == [27, 27, 27, 23])
        #expect(flags == [.firstNonFlushable, .continuing, .continuing, .continuing])
        #expect(joined == pdu)
        // On the wire: 02 | handle 0x0001 PB 00 -> 01 00 | length 1B 00, then PB 01 -> 01 10.
        #expect(packets[0].h4Bytes.prefix(5) == [0x02, 0x01, 0x00, 0x1B, 0x00])
        #expect(packets[1].h4Bytes.prefix(5) == [0x02, 0x01, 0x10, 0x1B, 0x00])
        // Exactly one buffer: one packet.
        #expect(flow.fragments(of: Self.pdu(23), handle: 2).count == 1)
        #expect(flow.fragments(of: Self.pdu(24), handle: 2).count == 2)
    }

    @Test func creditsLimitPacketsInFlightAndNOCPReturnsThem() throws {
        var flow = ACLFlowControl(bufferSize: ACLBufferSize(packetLength: 27, packetCount: 3))
        let sent = flow.send(Self.pdu(100), on: 1)  // 4 fragments, 3 credits
        #expect(sent.count == 3)
        #expect(flow.availableCredits == 0)
        #expect(flow.outstandingPackets(on: 1) == 3)
        #expect(flow.queuedFragments(on: 1) == 1)
        // Bumble's NOCP after one packet: 04 13 05 01 0100 0100.
        let freed = flow.handle(try Self.nocp([(1, 1)]))
        #expect(freed.count == 1)
        if case let .acl(_, boundary, _, data)? = freed.first {
            #expect(boundary == .continuing && data.count == 23)
        }
        #expect(flow.availableCredits == 0)
        _ = flow.handle(try Self.nocp([(1, 3)]))
        #expect(flow.availableCredits == 3)
        #expect(flow.outstandingPackets(on: 1) == 0)
    }

    @Test func bogusCompletionsCannotInflateCredits() throws {
        var flow = ACLFlowControl(bufferSize: ACLBufferSize(packetLength: 27, packetCount: 2))
        _ = flow.send(Self.pdu(10), on: 1)
        _ = flow.handle(try Self.nocp([(1, 50), (7, 9)]))
        #expect(flow.availableCredits == 2)
    }

    @Test func disconnectionReclaimsCreditsAndDropsTheQueue() throws {
        var flow = ACLFlowControl(bufferSize: ACLBufferSize(packetLength: 27, packetCount: 4))
        _ = flow.send(Self.pdu(200), on: 1)  // 8 fragments: 4 sent, 4 queued
        #expect(flow.availableCredits == 0)
        _ = flow.send(Self.pdu(10), on: 2)
        #expect(flow.queuedFragments(on: 2) == 1)
        // Disconnection Complete: 05 04 | status 00 | handle 0100 | reason 13.
        let disconnect = try HCIEvent(code: 0x05, parameters: [0x00, 0x01, 0x00, 0x13])
        #expect(disconnect == .disconnectionComplete(HCIDisconnectionComplete(status: .success, handle: 1, reason: .remoteUserTerminated)))
        let next = flow.handle(disconnect)
        #expect(flow.queuedFragments(on: 1) == 0)
        #expect(flow.outstandingPackets(on: 1) == 0)
        // The reclaimed credits let handle 2's waiting PDU out.
        #expect(next.count == 1)
        if case let .acl(handle, _, _, _)? = next.first { #expect(handle == 2) }
        #expect(flow.availableCredits == 3)
        // A failed disconnection changes nothing.
        _ = flow.handle(try HCIEvent(code: 0x05, parameters: [0x0C, 0x02, 0x00, 0x13]))
        #expect(flow.outstandingPackets(on: 2) == 1)
    }

    @Test func handlesWithQueuedDataAreServedInTurn() throws {
        var flow = ACLFlowControl(bufferSize: ACLBufferSize(packetLength: 10, packetCount: 1))
        _ = flow.send(Self.pdu(36), on: 1)  // 4 fragments; 1 sent
        _ = flow.send(Self.pdu(16), on: 2)  // 2 fragments
        var order: [UInt16] = []
        for _ in 0..<5 {
            let handle = flow.handle(try Self.nocp([(1, 1), (2, 1)])).compactMap { packet -> UInt16? in
                if case let .acl(handle, _, _, _) = packet { return handle }
                return nil
            }
            order += handle
        }
        // Handle 1 was queued first; then they alternate until handle 2 is done.
        #expect(order == [1, 2, 1, 2, 1])
    }

    @Test func randomTrafficKeepsCreditsWithinBounds() throws {
        var generator = SystemRandomNumberGenerator()
        let total = 5
        var flow = ACLFlowControl(bufferSize: ACLBufferSize(packetLength: 27, packetCount: total))
        for _ in 0..<5000 {
            let handle = UInt16.random(in: 1...3, using: &generator)
            switch Int.random(in: 0..<3, using: &generator) {
            case 0:
                let sent = flow.send(Self.pdu(Int.random(in: 0...120, using: &generator)), on: handle)
                for case let .acl(_, _, _, data) in sent { #expect(data.count <= 27) }
            case 1:
                _ = flow.handle(try Self.nocp([(handle, UInt16.random(in: 0...6, using: &generator))]))
            default:
                if Int.random(in: 0..<10, using: &generator) == 0 { flow.disconnected(handle) }
            }
            let outstanding = (1...3).map { flow.outstandingPackets(on: $0) }.reduce(0, +)
            #expect(flow.availableCredits >= 0 && flow.availableCredits <= total)
            #expect(outstanding + flow.availableCredits == total)
        }
    }
}
