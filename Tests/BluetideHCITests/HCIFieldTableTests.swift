import BluetideCore
import Testing

@testable import BluetideHCI

/// Parameters declared once per field (issue 22 item 4): the table decodes and encodes the same
/// bytes the hand-written code did, and a short block names the field that was cut.
@Suite struct HCIFieldTableTests {
    @Test func aFieldTableRoundTripsTheWireLayout() throws {
        let bytes: [UInt8] = [0x00, 0xFB, 0x00, 0x0F, 0x64, 0x00, 0x04]
        let v2 = try LEReadBufferSizeV2.ReturnParameters(parameters: bytes)
        #expect(v2 == LEReadBufferSizeV2.ReturnParameters(
            leACLDataPacketLength: 251, totalNumLEACLDataPackets: 15, isoDataPacketLength: 100, totalNumISODataPackets: 4))
        #expect(v2.parameterBytes == bytes)
        let v1 = try LEReadBufferSize.ReturnParameters(parameters: [0x0C, 0x1B, 0x00, 0x08])
        #expect(v1.status == HCIStatus(0x0C) && v1.leACLDataPacketLength == 27 && v1.totalNumLEACLDataPackets == 8)
        #expect(v1.parameterBytes == [0x0C, 0x1B, 0x00, 0x08])
        let features = try LEReadLocalSupportedFeatures.ReturnParameters(parameters: [0x00, 0x01, 0, 0, 0, 0, 0, 0, 0x80])
        #expect(features.features.rawValue == 0x8000_0000_0000_0001)
        #expect(features.parameterBytes == [0x00, 0x01, 0, 0, 0, 0, 0, 0, 0x80])
        #expect(LESetEventMask(mask: 0x1F).parameterBytes == [0x1F, 0, 0, 0, 0, 0, 0, 0])
        #expect(try LESetEventMask(parameters: [0x1F, 0, 0, 0, 0, 0, 0, 0x02]).mask == 0x0200_0000_0000_001F)
    }

    @Test func aShortBlockNamesTheFieldThatWasCut() {
        #expect(throws: DecodingError.truncated("ISO data packet length", needed: 2, present: 1, at: 4)) {
            try LEReadBufferSizeV2.ReturnParameters(parameters: [0x00, 0xFB, 0x00, 0x0F, 0x64])
        }
        #expect(throws: DecodingError.self) { try LESetEventMask(parameters: [0x1F, 0, 0]) }
    }
}
