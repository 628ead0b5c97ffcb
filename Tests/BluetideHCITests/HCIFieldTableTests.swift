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

    /// The field kinds the rest of the commands and events use: addresses typed by an earlier
    /// field, fixed and length-prefixed byte blocks, keys, nested groups and counted lists.
    @Test func theOtherFieldKindsKeepTheirWireRules() throws {
        // An address's type comes from the field before it.
        let create = LECreateConnection(peerAddress: BluetoothAddress(value: 0xC1B1_7E00_0102, type: .random))
        let decoded = try LECreateConnection(parameters: create.parameterBytes)
        #expect(decoded == create && decoded.peerAddress.type == .random)
        #expect(create.parameterBytes.count == 25, "4 scan + 1 policy + 1 type + 6 address + 1 own type + 12 connection")
        // A fixed block is padded when short and cut when long.
        #expect(HCIReadLocalSupportedCommands.ReturnParameters(commands: [0xFF]).parameterBytes == [0x00, 0xFF] + [UInt8](repeating: 0, count: 63))
        #expect(HCIReadLocalSupportedCommands.ReturnParameters(commands: [UInt8](repeating: 1, count: 70)).parameterBytes.count == 65)
        // A length-prefixed block keeps at most its cap (251 for extended advertising data).
        let long = LESetExtendedAdvertisingData(handle: 1, data: [UInt8](repeating: 0xAA, count: 300))
        #expect(long.parameterBytes.prefix(4) == [0x01, 0x03, 0x01, 251] && long.parameterBytes.count == 4 + 251)
        // A counted list writes at most its cap and names the item a short block cut.
        let sets = LESetExtendedAdvertisingEnable(enable: true, sets: (0..<70).map { .init(handle: UInt8($0)) })
        #expect(sets.parameterBytes[1] == 63 && sets.parameterBytes.count == 2 + 63 * 4)
        let cut = #expect(throws: DecodingError.self) {
            try LESetExtendedAdvertisingEnable(parameters: [0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01])
        }
        #expect(cut?.field == "set[1].duration")
        // A key is its 16 bytes; a reason byte is named as a reason.
        let key = HCIKey128(bytes: Array(1...16))
        #expect(LELongTermKeyRequestReply(handle: 0x40, longTermKey: key).parameterBytes == [0x40, 0x00] + Array(1...16))
        #expect(throws: DecodingError.truncated("reason", needed: 1, present: 0, at: 2)) { try HCIDisconnect(parameters: [0x40, 0x00]) }
        // A group (the connection parameters) sits inline.
        let update = LEConnectionUpdate(handle: 0x41, connection: LEConnectionParameters(intervalMin: 6, intervalMax: 12))
        #expect(update.parameterBytes == [0x41, 0x00, 6, 0, 12, 0, 0, 0, 0x90, 0x01, 0, 0, 0, 0])
        #expect(try LEConnectionUpdate(parameters: update.parameterBytes) == update)
    }
}
