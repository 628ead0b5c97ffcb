import BluetideHCI
import Testing
@testable import BluetideHost

@Suite struct HCIACLReassemblerTests {
    /// ATT Exchange MTU Request in an L2CAP PDU: length 3, CID 4, 02 F7 01 (MTU 503).
    static let mtuRequest: [UInt8] = [0x03, 0x00, 0x04, 0x00, 0x02, 0xF7, 0x01]

    @Test func wholePDUInOnePacket() {
        var reassembler = ACLReassembler()
        let out = reassembler.receive(.acl(handle: 0x0001, boundary: .firstFlushable, broadcast: 0, data: Self.mtuRequest))
        #expect(out.pdu?.handle == 1)
        #expect(out.pdu?.bytes == Self.mtuRequest)
        #expect(out.errors.isEmpty)
    }

    @Test func wholePDULongerThanTheBufferSize() {
        // Bumble forwards a 104-byte PDU in one ACL packet although its buffers are 27 bytes.
        var reassembler = ACLReassembler()
        let pdu: [UInt8] = [100, 0, 0x04, 0x00] + (0..<100).map { UInt8($0) }
        let out = reassembler.receive(handle: 1, boundary: .firstFlushable, data: pdu)
        #expect(out.pdu?.bytes == pdu)
    }

    @Test func fragmentsSplitAnywhereEvenInsideTheHeader() {
        let pdu: [UInt8] = [100, 0, 0x04, 0x00] + (0..<100).map { UInt8($0) }
        for cut1 in 1..<pdu.count {
            for cut2 in [cut1 + 1, cut1 + 27, pdu.count] where cut2 <= pdu.count && cut2 > cut1 {
                var reassembler = ACLReassembler()
                var outputs = [reassembler.receive(handle: 5, boundary: .firstNonFlushable, data: Array(pdu[..<cut1]))]
                outputs.append(reassembler.receive(handle: 5, boundary: .continuing, data: Array(pdu[cut1..<cut2])))
                if cut2 < pdu.count {
                    outputs.append(reassembler.receive(handle: 5, boundary: .continuing, data: Array(pdu[cut2...])))
                }
                let pdus = outputs.compactMap(\.pdu)
                #expect(pdus.count == 1 && pdus.first?.bytes == pdu, "cut at \(cut1), \(cut2)")
                #expect(outputs.last?.pdu != nil)
                #expect(outputs.allSatisfy { $0.errors.isEmpty })
                #expect(reassembler.pendingBytes(on: 5) == 0)
            }
        }
    }

    @Test func handlesAreReassembledSeparately() {
        var reassembler = ACLReassembler()
        _ = reassembler.receive(handle: 1, boundary: .firstFlushable, data: Array(Self.mtuRequest[..<3]))
        _ = reassembler.receive(handle: 2, boundary: .firstFlushable, data: Array(Self.mtuRequest[..<5]))
        let two = reassembler.receive(handle: 2, boundary: .continuing, data: Array(Self.mtuRequest[5...]))
        let one = reassembler.receive(handle: 1, boundary: .continuing, data: Array(Self.mtuRequest[3...]))
        #expect(two.pdu?.handle == 2 && two.pdu?.bytes == Self.mtuRequest)
        #expect(one.pdu?.handle == 1 && one.pdu?.bytes == Self.mtuRequest)
    }

    @Test func continuationWithoutStartIsDroppedWithAnError() {
        var reassembler = ACLReassembler()
        let out = reassembler.receive(handle: 3, boundary: .continuing, data: [1, 2, 3])
        #expect(out.pdu == nil)
        #expect(out.errors == [.continuationWithoutStart(handle: 3, bytes: 3)])
        #expect(out.errors.first?.description == "ACL handle 3: dropped a 3-byte continuation fragment with no L2CAP PDU started")
    }

    @Test func overlongPDUIsDroppedWithItsContinuations() {
        var reassembler = ACLReassembler(maximumPDULength: 4 + 517)
        let start = reassembler.receive(handle: 1, boundary: .firstFlushable, data: [0x00, 0x04, 0x04, 0x00, 0xAA])
        #expect(start.errors == [.pduTooLong(handle: 1, length: 4 + 1024, limit: 521)])
        // The rest of that PDU is dropped quietly, then the next PDU is fine.
        #expect(reassembler.receive(handle: 1, boundary: .continuing, data: [UInt8](repeating: 0, count: 500)) == ACLReassemblyOutput())
        let next = reassembler.receive(handle: 1, boundary: .firstFlushable, data: Self.mtuRequest)
        #expect(next.pdu?.bytes == Self.mtuRequest && next.errors.isEmpty)
    }

    @Test func newStartReplacesAnIncompletePDU() {
        var reassembler = ACLReassembler()
        _ = reassembler.receive(handle: 1, boundary: .firstFlushable, data: Array(Self.mtuRequest[..<4]))
        let out = reassembler.receive(handle: 1, boundary: .firstFlushable, data: Self.mtuRequest)
        #expect(out.errors == [.incompletePDUReplaced(handle: 1, received: 4, expected: 7)])
        #expect(out.pdu?.bytes == Self.mtuRequest)
    }

    @Test func excessBytesAreDropped() {
        var reassembler = ACLReassembler()
        let out = reassembler.receive(handle: 1, boundary: .firstFlushable, data: Self.mtuRequest + [0xEE])
        #expect(out.pdu == nil)
        #expect(out.errors == [.excessBytes(handle: 1, received: 8, expected: 7)])
    }

    @Test func disconnectionDropsThePartialPDU() {
        var reassembler = ACLReassembler()
        _ = reassembler.receive(handle: 1, boundary: .firstFlushable, data: Array(Self.mtuRequest[..<4]))
        #expect(reassembler.pendingBytes(on: 1) == 4)
        reassembler.disconnected(1)
        #expect(reassembler.pendingBytes(on: 1) == 0)
        #expect(reassembler.receive(handle: 1, boundary: .continuing, data: [0x02]).errors.count == 1)
    }

    @Test func randomFragmentsNeverTrap() {
        var generator = SystemRandomNumberGenerator()
        var reassembler = ACLReassembler(maximumPDULength: 300)
        for _ in 0..<20000 {
            let length = Int.random(in: 0...40, using: &generator)
            let data = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let boundary = ACLBoundary(rawValue: UInt8.random(in: 0...3, using: &generator)) ?? .continuing
            let out = reassembler.receive(handle: UInt16.random(in: 0...0xFFFF, using: &generator), boundary: boundary, data: data)
            if let pdu = out.pdu {
                #expect(pdu.bytes.count == 4 + (Int(pdu.bytes[0]) | Int(pdu.bytes[1]) << 8))
                #expect(pdu.bytes.count <= 300)
            }
        }
    }
}

/// The typed ``HCIEvent`` values the host's HCI layer (command queue, ACL flow control) acts on,
/// decoded from the bytes a controller sends.
@Suite struct HCIHostEventTests {
    @Test func decodesTheEventsTheHostActsOn() throws {
        #expect(try HCIEvent(packet: .event(code: 0x0E, parameters: [0x01, 0x03, 0x0C, 0x00]))
            == .commandComplete(HCICommandComplete(numHCICommandPackets: 1, opcode: HCIOpcode(rawValue: 0x0C03), returnParameters: [0x00])))
        #expect(try HCIEvent(packet: .event(code: 0x0F, parameters: [0x00, 0x01, 0x06, 0x04]))
            == .commandStatus(HCICommandStatus(status: .success, numHCICommandPackets: 1, opcode: HCIOpcode(rawValue: 0x0406))))
        #expect(try HCIEvent(packet: .event(code: 0x13, parameters: [0x02, 0x01, 0x00, 0x01, 0x00, 0x02, 0x20, 0x03, 0x00]))
            == .numberOfCompletedPackets(HCINumberOfCompletedPackets(entries: [
                .init(handle: 1, completedPackets: 1), .init(handle: 0x2002, completedPackets: 3),
            ])))
        #expect(try HCIEvent(packet: .event(code: 0x05, parameters: [0x00, 0x01, 0x00, 0x13]))
            == .disconnectionComplete(HCIDisconnectionComplete(status: .success, handle: 1, reason: .remoteUserTerminated)))
        #expect(try HCIEvent(packet: .acl(handle: 1, boundary: .firstFlushable, broadcast: 0, data: [])) == nil)
    }

    @Test func otherEventsLeaveTheQueueAndFlowControlAlone() throws {
        var queue = HCICommandQueue()
        _ = queue.enqueue(HCIOpcode(rawValue: 0x0C03), now: 0)
        var flow = ACLFlowControl(bufferSize: ACLBufferSize(packetLength: 27, packetCount: 1))
        _ = flow.send([1, 0, 4, 0, 0x0A], on: 1)
        _ = flow.send([1, 0, 4, 0, 0x0B], on: 1)
        let others: [HCIEvent] = [
            .unknown(code: 0xFF, parameters: [1, 2, 3]),
            try HCIEvent(code: 0x08, parameters: [0x00, 0x01, 0x00, 0x01]),
            .leMeta(.unknown(subevent: 0x7F, parameters: [])),
        ]
        for event in others {
            #expect(queue.handle(event, now: 0) == HCICommandQueueOutput())
            #expect(flow.handle(event).isEmpty)
        }
        #expect(queue.outstandingOpcodes == [HCIOpcode(rawValue: 0x0C03)])
        #expect(flow.queuedFragments(on: 1) == 1)
    }

    @Test func truncationAtEveryFieldNamesTheField() {
        let cases: [(UInt8, [UInt8], [String])] = [
            (0x0E, [0x01, 0x03, 0x0C], ["num HCI command packets", "command opcode", "command opcode"]),
            (0x0F, [0x00, 0x01, 0x06, 0x04], ["status", "num HCI command packets", "command opcode", "command opcode"]),
            (0x13, [0x01, 0x01, 0x00, 0x01, 0x00], ["number of handles", "handle/count pairs", "handle/count pairs", "handle/count pairs", "handle/count pairs"]),
            (0x05, [0x00, 0x01, 0x00, 0x13], ["status", "connection handle", "connection handle", "reason"]),
        ]
        for (code, full, fields) in cases {
            for cut in 0..<full.count {
                do {
                    _ = try HCIEvent(code: code, parameters: Array(full[..<cut]))
                    Issue.record("event \(code) cut at \(cut) decoded")
                } catch {
                    #expect(error.field.hasSuffix(fields[cut]), "\(error.field)")
                    guard case .truncated = error.kind else {
                        Issue.record("not a truncation: \(error)")
                        continue
                    }
                }
            }
        }
    }

    @Test func randomEventsNeverTrap() {
        var generator = SystemRandomNumberGenerator()
        var queue = HCICommandQueue()
        var flow = ACLFlowControl(bufferSize: ACLBufferSize(packetLength: 27, packetCount: 4))
        for _ in 0..<5000 {
            let codes: [UInt8] = [0x05, 0x0E, 0x0F, 0x13]
            let code = codes.randomElement(using: &generator) ?? 0
            let params = (0..<Int.random(in: 0...12, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if let event = try? HCIEvent(code: code, parameters: params) {
                _ = queue.handle(event, now: 0)
                _ = flow.handle(event)
            }
        }
    }
}
