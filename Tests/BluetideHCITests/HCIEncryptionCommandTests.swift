import BluetideBase
import Testing
@testable import BluetideHCI

@Suite struct HCIEncryptionCommandTests {
    static let key = HCIKey128(bytes: Array(0x00...0x0F))

    @Test func enableEncryptionLayout() throws {
        let command = LEEnableEncryption(handle: 1, randomNumber: 0x0807_0605_0403_0201, encryptedDiversifier: 0x1234, longTermKey: Self.key)
        let bytes = hex("0100 0102030405060708 3412 000102030405060708090A0B0C0D0E0F")
        #expect(command.packet.h4Bytes == hex("01 19 20 1C") + bytes)
        #expect(try roundTrip(LEEnableEncryption.self, bytes) == command)
        #expect(LEEnableEncryption.completion == .commandStatus)
        expectEveryPrefixTruncated(LEEnableEncryption.self, bytes)
    }

    @Test func keyRequestReplies() throws {
        let reply = LELongTermKeyRequestReply(handle: 1, longTermKey: Self.key)
        let bytes = hex("0100 000102030405060708090A0B0C0D0E0F")
        #expect(reply.packet.h4Bytes == hex("01 1A 20 12") + bytes)
        #expect(try roundTrip(LELongTermKeyRequestReply.self, bytes) == reply)
        expectEveryPrefixTruncated(LELongTermKeyRequestReply.self, bytes)
        // Bumble's answer to the same-key reply: 00 0100.
        let complete = try HCICommandComplete(parameters: hex("01 1A 20 00 0100"))
        #expect(try complete.decodeReturn(LELongTermKeyRequestReply.self) == HCIHandleReturn(handle: 1))

        #expect(LELongTermKeyRequestNegativeReply(handle: 2).packet.h4Bytes == hex("01 1B 20 02 0200"))
        expectEveryPrefixTruncated(LELongTermKeyRequestNegativeReply.self, hex("0200"))
        #expect(HCIKey128(bytes: [1, 2]).bytes.count == 16)
    }

    @Test func catalogNamesEveryModelledOpcodeOnce() {
        #expect(HCICommandCatalog.name(for: HCIOpcode(rawValue: 0x200C)) == "LE Set Scan Enable")
        #expect(HCICommandCatalog.name(for: HCIOpcode(rawValue: 0xFC01)) == "command 0xFC01")
        let opcodes = HCICommandCatalog.all.map { $0.opcode }
        #expect(Set(opcodes).count == opcodes.count)
        let reset = HCICommandCatalog.type(for: HCIReset.opcode)
        #expect(reset.map { ObjectIdentifier($0) } == ObjectIdentifier(HCIReset.self))
    }
}
