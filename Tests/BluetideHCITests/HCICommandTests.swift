import BluetideBase
import Testing
@testable import BluetideHCI

@Suite struct HCICommandTests {
    // MARK: Startup sequence (spec §1.3, verified against Bumble)

    @Test func resetCommandAndItsCompleteMatchTheVerifiedBytes() throws {
        #expect(HCIReset().packet.h4Bytes == hex("01 03 0C 00"))
        #expect(try HCIReset(packet: .command(opcode: HCIOpcode(rawValue: 0x0C03), parameters: [])) == HCIReset())
        let complete = HCICommandComplete(HCIReset.self, returning: HCIStatusReturn())
        #expect(HCIEvent.commandComplete(complete).packet.h4Bytes == hex("04 0E 04 01 03 0C 00"))
        let decoded = try HCIEvent(code: 0x0E, parameters: hex("01 03 0C 00"))
        guard case let .commandComplete(cc) = decoded else { Issue.record("not CC: \(decoded)"); return }
        #expect(cc.numHCICommandPackets == 1)
        #expect(cc.opcode == HCIReset.opcode)
        #expect(cc.status == .success)
        #expect(try cc.decodeReturn(HCIReset.self).status == .success)
    }

    @Test func readLocalVersionInformation() throws {
        #expect(HCIReadLocalVersionInformation().packet.h4Bytes == hex("01 01 10 00"))
        let bytes = hex("00 09 0000 09 FFFF 0000")
        let value = try roundTrip(HCIReadLocalVersionInformation.ReturnParameters.self, bytes)
        #expect(value == .init(hciVersion: 9, hciSubversion: 0, lmpVersion: 9, companyIdentifier: 0xFFFF, lmpSubversion: 0))
        expectEveryPrefixTruncated(HCIReadLocalVersionInformation.ReturnParameters.self, bytes)
    }

    @Test func readLocalSupportedFeaturesSaysLEOnly() throws {
        #expect(HCIReadLocalSupportedFeatures().packet.h4Bytes == hex("01 03 10 00"))
        let bytes = hex("00 00000000 60 0000 80")
        let value = try roundTrip(HCIReadLocalSupportedFeatures.ReturnParameters.self, bytes)
        #expect(value.features & (1 << 38) != 0, "LE supported (controller)")
        #expect(value.features & (1 << 37) != 0, "BR/EDR not supported")
        expectEveryPrefixTruncated(HCIReadLocalSupportedFeatures.ReturnParameters.self, bytes)
    }

    @Test func leReadLocalSupportedFeatures() throws {
        #expect(LEReadLocalSupportedFeatures().packet.h4Bytes == hex("01 03 20 00"))
        let bytes = hex("00 FF 79 01 00 00 00 00 00")
        let value = try roundTrip(LEReadLocalSupportedFeatures.ReturnParameters.self, bytes)
        #expect(value.features.contains([.encryption, .dataPacketLengthExtension, .le2MPHY, .extendedAdvertising]))
        #expect(!value.features.contains(LEFeatures(rawValue: 1 << 9)))
        expectEveryPrefixTruncated(LEReadLocalSupportedFeatures.ReturnParameters.self, bytes)
    }

    @Test func eventMasks() throws {
        let mask = HCISetEventMask(mask: 0x3FFF_BFFF_FFFF_FFFF)
        #expect(mask.packet.h4Bytes == hex("01 01 0C 08 FFFFFFFFFFBFFF3F"))
        #expect(try HCISetEventMask(packet: mask.packet) == mask)
        let le = LESetEventMask(mask: 0x1F)
        #expect(le.packet.h4Bytes == hex("01 01 20 08 1F00000000000000"))
        #expect(try LESetEventMask(packet: le.packet) == le)
        expectEveryPrefixTruncated(HCISetEventMask.self, hex("FFFFFFFFFFBFFF3F"))
        expectEveryPrefixTruncated(LESetEventMask.self, hex("1F00000000000000"))
    }

    @Test func bufferSizes() throws {
        #expect(LEReadBufferSize().packet.h4Bytes == hex("01 02 20 00"))
        let v1 = try roundTrip(LEReadBufferSize.ReturnParameters.self, hex("00 1B00 40"))
        #expect(v1.leACLDataPacketLength == 27 && v1.totalNumLEACLDataPackets == 64)
        expectEveryPrefixTruncated(LEReadBufferSize.ReturnParameters.self, hex("00 1B00 40"))

        #expect(LEReadBufferSizeV2().packet.h4Bytes == hex("01 60 20 00"))
        let v2 = try roundTrip(LEReadBufferSizeV2.ReturnParameters.self, hex("00 1B00 40 C003 40"))
        #expect(v2 == .init(leACLDataPacketLength: 27, totalNumLEACLDataPackets: 64, isoDataPacketLength: 960, totalNumISODataPackets: 64))
        expectEveryPrefixTruncated(LEReadBufferSizeV2.ReturnParameters.self, hex("00 1B00 40 C003 40"))

        #expect(HCIReadBufferSize().packet.h4Bytes == hex("01 05 10 00"))
        let classic = try roundTrip(HCIReadBufferSize.ReturnParameters.self, hex("00 1B00 00 4000 0000"))
        #expect(classic.aclDataPacketLength == 27 && classic.totalNumACLDataPackets == 64)
        expectEveryPrefixTruncated(HCIReadBufferSize.ReturnParameters.self, hex("00 1B00 00 4000 0000"))
    }

    @Test func randomAddressIsSentLeastSignificantByteFirst() throws {
        let address = try BluetoothAddress("C6:C5:C4:C3:C2:C1", type: .random)
        let command = LESetRandomAddress(address: address)
        #expect(command.packet.h4Bytes == hex("01 05 20 06 C1C2C3C4C5C6"))
        let decoded = try LESetRandomAddress(packet: command.packet)
        #expect(decoded.address == address)
        #expect(decoded.address.randomKind == .static)
        expectEveryPrefixTruncated(LESetRandomAddress.self, hex("C1C2C3C4C5C6"))
    }

    @Test func enablesAndDisables() throws {
        #expect(LESetAdvertisingEnable(enable: false).packet.h4Bytes == hex("01 0A 20 01 00"))
        #expect(LESetAdvertisingEnable(enable: true).packet.h4Bytes == hex("01 0A 20 01 01"))
        #expect(LESetScanEnable(enable: false).packet.h4Bytes == hex("01 0C 20 02 00 00"))
        #expect(LESetScanEnable(enable: true, filterDuplicates: true).packet.h4Bytes == hex("01 0C 20 02 01 01"))
        #expect(try LESetScanEnable(parameters: [1, 0]) == LESetScanEnable(enable: true, filterDuplicates: false))
        expectEveryPrefixTruncated(LESetScanEnable.self, [1, 1])
        expectEveryPrefixTruncated(LESetAdvertisingEnable.self, [1])
    }

    @Test func bdAddrAndSupportedCommands() throws {
        #expect(HCIReadBDADDR().packet.h4Bytes == hex("01 09 10 00"))
        let addr = try roundTrip(HCIReadBDADDR.ReturnParameters.self, hex("00 01 00 00 00 00 00"))
        #expect(addr.address == (try BluetoothAddress("00:00:00:00:00:01")))
        expectEveryPrefixTruncated(HCIReadBDADDR.ReturnParameters.self, hex("00 01 00 00 00 00 00"))

        #expect(HCIReadLocalSupportedCommands().packet.h4Bytes == hex("01 02 10 00"))
        var bitmap = [UInt8](repeating: 0, count: 64)
        bitmap[5] = 0xC0
        let commands = try roundTrip(HCIReadLocalSupportedCommands.ReturnParameters.self, [0] + bitmap)
        #expect(commands.supports(octet: 5, bit: 7))
        #expect(!commands.supports(octet: 5, bit: 5))
        #expect(!commands.supports(octet: 64, bit: 0))
        expectEveryPrefixTruncated(HCIReadLocalSupportedCommands.ReturnParameters.self, [0] + bitmap)
    }

    // MARK: Advertising and scanning

    @Test func advertisingParameters() throws {
        let params = LESetAdvertisingParameters(intervalMin: 0x00A0, intervalMax: 0x00A0, ownAddressType: .random)
        let bytes = hex("A000 A000 00 01 00 000000000000 07 00")
        #expect(params.packet.h4Bytes == hex("01 06 20 0F") + bytes)
        let decoded = try roundTrip(LESetAdvertisingParameters.self, bytes)
        #expect(decoded == params)
        #expect(decoded.advertisingType.isConnectable && decoded.advertisingType.isScannable)
        expectEveryPrefixTruncated(LESetAdvertisingParameters.self, bytes)
    }

    @Test func advertisingDataIsPaddedTo31Bytes() throws {
        let data = hex("02 01 06 05 09 54 65 73 74")
        let command = LESetAdvertisingData(data: data)
        let expected = [UInt8(data.count)] + data + [UInt8](repeating: 0, count: 31 - data.count)
        #expect(command.packet == .command(opcode: HCIOpcode(rawValue: 0x2008), parameters: expected))
        #expect(try LESetAdvertisingData(parameters: expected) == command)
        // Hosts that omit the padding are accepted too.
        #expect(try LESetAdvertisingData(parameters: [UInt8(data.count)] + data) == command)
        expectEveryPrefixTruncated(LESetAdvertisingData.self, expected, required: 1 + data.count)
        // A length above 31 names the field.
        #expect {
            try LESetAdvertisingData(parameters: [32] + [UInt8](repeating: 0, count: 32))
        } throws: { error in
            (error as? DecodingError)?.field == "advertising data length"
        }
        let response = LESetScanResponseData(data: [3, 0x19, 0x40, 0x03])
        #expect(Array(response.packet.h4Bytes.prefix(5)) == hex("01 09 20 20 04"))
        #expect(try LESetScanResponseData(packet: response.packet) == response)
        // Over-long data is clipped to 31 bytes, never beyond the block.
        #expect(LESetAdvertisingData(data: [UInt8](repeating: 7, count: 40)).parameterBytes.count == 32)
    }

    @Test func scanParameters() throws {
        let command = LESetScanParameters(active: true, interval: 0x0060, window: 0x0030, ownAddressType: .random)
        let bytes = hex("01 6000 3000 01 00")
        #expect(command.packet.h4Bytes == hex("01 0B 20 07") + bytes)
        #expect(try roundTrip(LESetScanParameters.self, bytes) == command)
        expectEveryPrefixTruncated(LESetScanParameters.self, bytes)
    }

    // MARK: Connections

    @Test func createConnection() throws {
        let peer = try BluetoothAddress("F1:F1:F1:F1:F1:F1", type: .random)
        let command = LECreateConnection(
            peerAddress: peer, ownAddressType: .random,
            connection: LEConnectionParameters(intervalMin: 0x000C, intervalMax: 0x000C, maxLatency: 0, supervisionTimeout: 0x0048))
        let bytes = hex("6000 6000 00 01 F1F1F1F1F1F1 01 0C00 0C00 0000 4800 0000 0000")
        #expect(command.packet.h4Bytes == hex("01 0D 20 19") + bytes)
        let decoded = try roundTrip(LECreateConnection.self, bytes)
        #expect(decoded.peerAddress == peer)
        #expect(decoded.peerAddressType == .random)
        #expect(LECreateConnection.completion == .commandStatus)
        expectEveryPrefixTruncated(LECreateConnection.self, bytes)
        #expect(LECreateConnectionCancel().packet.h4Bytes == hex("01 0E 20 00"))
    }

    @Test func disconnectAndConnectionCommands() throws {
        let disconnect = HCIDisconnect(handle: 0x0001, reason: .remoteUserTerminated)
        #expect(disconnect.packet.h4Bytes == hex("01 06 04 03 01 00 13"))
        #expect(try HCIDisconnect(packet: disconnect.packet) == disconnect)
        expectEveryPrefixTruncated(HCIDisconnect.self, hex("01 00 13"))

        let update = LEConnectionUpdate(handle: 1, connection: LEConnectionParameters(
            intervalMin: 6, intervalMax: 12, maxLatency: 2, supervisionTimeout: 100, minCELength: 1, maxCELength: 2))
        let updateBytes = hex("0100 0600 0C00 0200 6400 0100 0200")
        #expect(update.packet.h4Bytes == hex("01 13 20 0E") + updateBytes)
        #expect(try roundTrip(LEConnectionUpdate.self, updateBytes) == update)
        expectEveryPrefixTruncated(LEConnectionUpdate.self, updateBytes)

        #expect(LEReadRemoteFeatures(handle: 0x0040).packet.h4Bytes == hex("01 16 20 02 40 00"))
        expectEveryPrefixTruncated(LEReadRemoteFeatures.self, hex("40 00"))

        let dataLength = LESetDataLength(handle: 1, txOctets: 251, txTime: 2120)
        #expect(dataLength.packet.h4Bytes == hex("01 22 20 06 0100 FB00 4808"))
        #expect(try LESetDataLength(packet: dataLength.packet) == dataLength)
        expectEveryPrefixTruncated(LESetDataLength.self, hex("0100 FB00 4808"))
        #expect(try roundTrip(HCIHandleReturn.self, hex("00 0100")) == HCIHandleReturn(handle: 1))

        let setPHY = LESetPHY(handle: 1, txPHYs: 0b10, rxPHYs: 0b10)
        #expect(setPHY.packet.h4Bytes == hex("01 32 20 07 0100 00 02 02 0000"))
        #expect(try LESetPHY(packet: setPHY.packet) == setPHY)
        expectEveryPrefixTruncated(LESetPHY.self, hex("0100 00 02 02 0000"))

        #expect(LEReadPHY(handle: 1).packet.h4Bytes == hex("01 30 20 02 01 00"))
        let phy = try roundTrip(LEReadPHY.ReturnParameters.self, hex("00 0100 01 02"))
        #expect(phy.txPHY == .le1M && phy.rxPHY == .le2M)
        expectEveryPrefixTruncated(LEReadPHY.ReturnParameters.self, hex("00 0100 01 02"))

        #expect(HCIReadRSSI(handle: 1).packet.h4Bytes == hex("01 05 14 02 01 00"))
        let rssi = try roundTrip(HCIReadRSSI.ReturnParameters.self, hex("00 0100 CE"))
        #expect(rssi.rssi == -50)
        expectEveryPrefixTruncated(HCIReadRSSI.ReturnParameters.self, hex("00 0100 CE"))
    }

    @Test func decodingAPacketOfAnotherCommandNamesBothOpcodes() {
        #expect {
            try LESetScanEnable(packet: HCIReset().packet)
        } throws: { error in
            guard let error = error as? DecodingError, case let .invalidValue(expected, found) = error.kind else { return false }
            return expected == "0x200C" && found == "0x0C03"
        }
        #expect(throws: DecodingError.self) { try HCIReset(packet: .event(code: 0x0E, parameters: [])) }
        // A truncated command names the command and the field.
        #expect {
            try LESetScanEnable(packet: .command(opcode: LESetScanEnable.opcode, parameters: [1]))
        } throws: { error in
            (error as? DecodingError)?.field == "LE Set Scan Enable.filter duplicates"
        }
    }

    @Test func statusNamesAndDescriptions() {
        #expect(HCIStatus.success.isSuccess)
        #expect(HCIStatus(0x13).description == "0x13 (remote user terminated connection)")
        #expect(HCIStatus.connectionTimeout.rawValue == 0x08)
        #expect(HCIStatus.localHostTerminated.rawValue == 0x16)
        #expect(HCIStatus.failedToEstablish.description == "0x3E (connection failed to be established)")
        #expect(HCIStatus.unknownCommand.name == "unknown HCI command")
        #expect(HCIStatus.commandDisallowed.rawValue == 0x0C)
        #expect(HCIStatus(0xEE).description == "0xEE (unknown status)")
    }
}
