import Testing
@testable import BluetideHCI

@Suite struct H4FramerTests {
    @Test func framesResetCompleteSplitAcrossReads() throws {
        var framer = H4Framer()
        let bytes: [UInt8] = [0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]
        #expect(try framer.append(bytes[0..<2]).isEmpty)
        #expect(try framer.append(bytes[2..<5]).isEmpty)
        let packets = try framer.append(bytes[5...])
        #expect(packets == [.event(code: 0x0E, parameters: [0x01, 0x03, 0x0C, 0x00])])
        #expect(framer.pendingByteCount == 0)
    }

    @Test func severalPacketsInOneRead() throws {
        var framer = H4Framer()
        let reset = HCIPacket.command(opcode: HCIOpcode(rawValue: 0x0C03), parameters: [])
        let acl = HCIPacket.acl(handle: 1, boundary: .firstFlushable, broadcast: 0, data: [3, 0, 4, 0, 0x0A, 0x01, 0x00])
        let packets = try framer.append(reset.h4Bytes + acl.h4Bytes + [0x04])
        #expect(packets == [reset, acl])
        #expect(reset.h4Bytes == [0x01, 0x03, 0x0C, 0x00])
        #expect(acl.h4Bytes.prefix(5) == [0x02, 0x01, 0x20, 0x07, 0x00])
        #expect(framer.pendingByteCount == 1)
    }

    @Test func unknownPacketTypeEndsTheStreamWithAClearError() throws {
        var framer = H4Framer()
        let delivered = try framer.append([0x01, 0x03, 0x0C, 0x00, 0x07, 0x01])
        #expect(delivered == [.command(opcode: HCIOpcode(rawValue: 0x0C03), parameters: [])])
        #expect(throws: H4FramingError(packetType: 0x07, streamOffset: 4)) { try framer.append([]) }
        #expect(throws: H4FramingError.self) { try framer.append([0x04]) }
    }

    @Test func opcodeFields() {
        let op = HCIOpcode(ogf: 0x08, ocf: 0x000D)
        #expect(op.rawValue == 0x200D)
        #expect(op.description == "0x200D")
        #expect(op.ogf == 8 && op.ocf == 0x0D)
    }
}
