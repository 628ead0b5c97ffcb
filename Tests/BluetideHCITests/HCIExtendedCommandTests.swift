import BluetideBase
import Testing
@testable import BluetideHCI

@Suite struct HCIExtendedCommandTests {
    @Test func extendedScanParametersCarryOneEntryPerPHY() throws {
        let oneM = LESetExtendedScanParameters(ownAddressType: .random, le1M: .init(active: true, interval: 0x60, window: 0x30))
        let bytes = hex("01 00 01 01 6000 3000")
        #expect(oneM.packet.h4Bytes == hex("01 41 20 08") + bytes)
        #expect(try roundTrip(LESetExtendedScanParameters.self, bytes) == oneM)
        expectEveryPrefixTruncated(LESetExtendedScanParameters.self, bytes)

        let both = try roundTrip(LESetExtendedScanParameters.self, hex("00 00 05 01 1000 1000 00 2000 1000"))
        #expect(both.le1M == .init(active: true, interval: 0x10, window: 0x10))
        #expect(both.coded == .init(active: false, interval: 0x20, window: 0x10))
        // Bit 1 (2M) is not a scanning PHY.
        #expect {
            try LESetExtendedScanParameters(parameters: hex("00 00 02 01 1000 1000"))
        } throws: { error in
            (error as? DecodingError)?.field == "scanning PHYs"
        }
    }

    @Test func extendedScanEnable() throws {
        let command = LESetExtendedScanEnable(enable: true, filterDuplicates: 1, duration: 0, period: 0)
        let bytes = hex("01 01 0000 0000")
        #expect(command.packet.h4Bytes == hex("01 42 20 06") + bytes)
        #expect(try roundTrip(LESetExtendedScanEnable.self, bytes) == command)
        expectEveryPrefixTruncated(LESetExtendedScanEnable.self, bytes)
    }

    @Test func extendedCreateConnection() throws {
        let peer = try BluetoothAddress("F1:F1:F1:F1:F1:F1", type: .random)
        let params = LEExtendedCreateConnection.PHYParameters(
            scanInterval: 0x60, scanWindow: 0x60,
            connection: .init(intervalMin: 0x18, intervalMax: 0x28, maxLatency: 0, supervisionTimeout: 0x1F4))
        let command = LEExtendedCreateConnection(peerAddress: peer, ownAddressType: .random, le1M: params)
        let bytes = hex("00 01 01 F1F1F1F1F1F1 01 6000 6000 1800 2800 0000 F401 0000 0000")
        #expect(command.packet.h4Bytes == hex("01 43 20 1A") + bytes)
        let decoded = try roundTrip(LEExtendedCreateConnection.self, bytes)
        #expect(decoded == command && decoded.primary == params)
        #expect(LEExtendedCreateConnection.completion == .commandStatus)
        expectEveryPrefixTruncated(LEExtendedCreateConnection.self, bytes)
        // Three PHYs: three 16-byte entries, in bit order.
        let three = LEExtendedCreateConnection(peerAddress: peer, le1M: params, le2M: params, coded: params)
        #expect(three.parameterBytes.count == 10 + 3 * 16)
        #expect(try LEExtendedCreateConnection(parameters: three.parameterBytes) == three)
        #expect {
            try LEExtendedCreateConnection(parameters: Array(three.parameterBytes.dropLast()))
        } throws: { error in
            (error as? DecodingError)?.field == "LE Coded.max CE length"
        }
    }

    @Test func extendedAdvertisingParameters() throws {
        let command = LESetExtendedAdvertisingParameters(
            handle: 0, properties: [.connectable, .scannable, .legacy], primaryIntervalMin: 0xA0, primaryIntervalMax: 0xA0,
            ownAddressType: .random, txPower: 127, sid: 0)
        let bytes = hex("00 1300 A00000 A00000 07 01 00 000000000000 00 7F 01 00 01 00 00")
        #expect(command.packet.h4Bytes == hex("01 36 20 19") + bytes)
        #expect(try roundTrip(LESetExtendedAdvertisingParameters.self, bytes) == command)
        expectEveryPrefixTruncated(LESetExtendedAdvertisingParameters.self, bytes)
        let ret = try roundTrip(LESetExtendedAdvertisingParameters.ReturnParameters.self, hex("00 F6"))
        #expect(ret.selectedTxPower == -10)
        expectEveryPrefixTruncated(LESetExtendedAdvertisingParameters.ReturnParameters.self, hex("00 F6"))
    }

    @Test func extendedDataEnableAndSetManagement() throws {
        let data = LESetExtendedAdvertisingData(handle: 1, data: [2, 1, 6])
        #expect(data.packet.h4Bytes == hex("01 37 20 07 01 03 01 03 020106"))
        #expect(try roundTrip(LESetExtendedAdvertisingData.self, hex("01 03 01 03 020106")) == data)
        expectEveryPrefixTruncated(LESetExtendedAdvertisingData.self, hex("01 03 01 03 020106"))
        let response = LESetExtendedScanResponseData(handle: 1, data: [])
        #expect(response.packet.h4Bytes == hex("01 38 20 04 01 03 01 00"))

        let enable = LESetExtendedAdvertisingEnable(enable: true, sets: [.init(handle: 0), .init(handle: 1, duration: 100, maxExtendedEvents: 5)])
        let bytes = hex("01 02 00 0000 00 01 6400 05")
        #expect(enable.packet.h4Bytes == hex("01 39 20 0A") + bytes)
        #expect(try roundTrip(LESetExtendedAdvertisingEnable.self, bytes) == enable)
        expectEveryPrefixTruncated(LESetExtendedAdvertisingEnable.self, bytes)

        let random = LESetAdvertisingSetRandomAddress(handle: 2, address: .randomStatic(0x0102_0304_0506))
        #expect(random.packet.h4Bytes == hex("01 35 20 07 02 06 05 04 03 02 C1"))
        #expect(try LESetAdvertisingSetRandomAddress(packet: random.packet) == random)
        expectEveryPrefixTruncated(LESetAdvertisingSetRandomAddress.self, random.parameterBytes)

        #expect(LEReadMaximumAdvertisingDataLength().packet.h4Bytes == hex("01 3A 20 00"))
        #expect(try roundTrip(LEReadMaximumAdvertisingDataLength.ReturnParameters.self, hex("00 FB00")).maximumLength == 251)
        #expect(LEReadNumberOfSupportedAdvertisingSets().packet.h4Bytes == hex("01 3B 20 00"))
        #expect(try roundTrip(LEReadNumberOfSupportedAdvertisingSets.ReturnParameters.self, hex("00 04")).count == 4)
        #expect(LERemoveAdvertisingSet(handle: 3).packet.h4Bytes == hex("01 3C 20 01 03"))
        #expect(LEClearAdvertisingSets().packet.h4Bytes == hex("01 3D 20 00"))
    }

    @Test func advertisingSetTerminated() throws {
        let body = hex("00 01 0200 00")
        let event = try HCIEvent(code: 0x3E, parameters: [0x12] + body)
        #expect(event == .leMeta(.advertisingSetTerminated(.init(advertisingHandle: 1, connectionHandle: 2))))
        expectEveryPrefixTruncated(LEAdvertisingSetTerminated.self, body)
    }
}
