import BluetideBase
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
        let version: [UInt8] = [0x00, 0x0D, 0x34, 0x12, 0x0C, 0x5F, 0x00, 0x78, 0x56]
        #expect(try HCIReadLocalVersionInformation.ReturnParameters(parameters: version) == HCIReadLocalVersionInformation.ReturnParameters(
            hciVersion: 0x0D, hciSubversion: 0x1234, lmpVersion: 0x0C, companyIdentifier: 0x005F, lmpSubversion: 0x5678))
        let buffers = HCIReadBufferSize.ReturnParameters(aclDataPacketLength: 1021, synchronousDataPacketLength: 60,
                                                         totalNumACLDataPackets: 8, totalNumSynchronousDataPackets: 2)
        #expect(buffers.parameterBytes == [0x00, 0xFD, 0x03, 60, 8, 0, 2, 0])
        #expect(try HCIReadBufferSize.ReturnParameters(parameters: buffers.parameterBytes) == buffers)
        #expect(try HCISetEventMask(parameters: HCISetEventMask(mask: HCISetEventMask.defaultMask).parameterBytes).mask == HCISetEventMask.defaultMask)
        #expect(try HCIReadLocalSupportedFeatures.ReturnParameters(parameters: [0, 1, 2, 3, 4, 5, 6, 7, 8]).features == 0x0807_0605_0403_0201)
    }

    @Test func flagsReadAnyNonZeroByteAsTrueAndWriteOne() throws {
        #expect(try LESetScanEnable(parameters: [0x02, 0x00]) == LESetScanEnable(enable: true, filterDuplicates: false))
        #expect(LESetScanEnable(enable: true, filterDuplicates: true).parameterBytes == [1, 1])
        #expect(try LESetAdvertisingEnable(parameters: [0]).enable == false)
        let scan = LESetScanParameters(active: false, interval: 0x60, window: 0x30, ownAddressType: .random, filterPolicy: 0)
        #expect(scan.parameterBytes == [0x00, 0x60, 0x00, 0x30, 0x00, 0x01, 0x00])
        #expect(try LESetScanParameters(parameters: scan.parameterBytes) == scan)
    }

    @Test func aShortBlockNamesTheFieldThatWasCut() {
        #expect(throws: DecodingError.truncated("ISO data packet length", needed: 2, present: 1, at: 4)) {
            try LEReadBufferSizeV2.ReturnParameters(parameters: [0x00, 0xFB, 0x00, 0x0F, 0x64])
        }
        #expect(throws: DecodingError.self) { try LESetEventMask(parameters: [0x1F, 0, 0]) }
    }
}
