import BluetideBase
import Testing
@testable import BluetideHCI

@Suite struct HCIEventTests {
    @Test func commandStatus() throws {
        let bytes = hex("00 01 0D 20")
        let event = try HCIEvent(code: 0x0F, parameters: bytes)
        #expect(event == .commandStatus(HCICommandStatus(status: .success, opcode: LECreateConnection.opcode)))
        #expect(event.packet.h4Bytes == hex("04 0F 04 00 01 0D 20"))
        expectEveryPrefixTruncated(HCICommandStatus.self, bytes)
    }

    @Test func commandCompleteForAnUnknownCommandCarriesOnlyTheStatus() throws {
        let event = try HCIEvent(code: 0x0E, parameters: hex("01 22 20 01"))
        guard case let .commandComplete(cc) = event else { Issue.record("\(event)"); return }
        #expect(cc.status == .unknownCommand)
        #expect(cc.opcode == LESetDataLength.opcode)
        // Decoding the full return then fails clearly, naming the command and field.
        #expect {
            try cc.decodeReturn(LESetDataLength.self)
        } throws: { error in
            (error as? DecodingError)?.field == "LE Set Data Length return.connection handle"
        }
        #expect(throws: DecodingError.self) { try cc.decodeReturn(HCIReset.self) }
        expectEveryPrefixTruncated(HCICommandComplete.self, hex("01 22 20"))
        // The no-op credits-only Command Complete has no status.
        let credits = try HCICommandComplete(parameters: hex("01 00 00"))
        #expect(credits.status == nil && credits.opcode == .noOperation)
    }

    @Test func typedCommandCompleteRoundTrip() throws {
        let rssi = HCICommandComplete(HCIReadRSSI.self, returning: .init(handle: 1, rssi: -50))
        #expect(HCIEvent.commandComplete(rssi).packet.h4Bytes == hex("04 0E 07 01 05 14 00 0100 CE"))
        let decoded = try HCIEvent(code: 0x0E, parameters: rssi.parameterBytes)
        guard case let .commandComplete(cc) = decoded else { Issue.record("\(decoded)"); return }
        #expect(try cc.decodeReturn(HCIReadRSSI.self) == .init(handle: 1, rssi: -50))
    }

    @Test func disconnectionComplete() throws {
        let bytes = hex("00 0100 13")
        let event = try HCIEvent(code: 0x05, parameters: bytes)
        #expect(event == .disconnectionComplete(HCIDisconnectionComplete(handle: 1, reason: .remoteUserTerminated)))
        #expect(event.packet.h4Bytes == hex("04 05 04 00 01 00 13"))
        expectEveryPrefixTruncated(HCIDisconnectionComplete.self, bytes)
    }

    @Test func encryptionChange() throws {
        let bytes = hex("00 0100 01")
        let event = try HCIEvent(code: 0x08, parameters: bytes)
        #expect(event == .encryptionChange(HCIEncryptionChange(handle: 1, encryptionEnabled: 1)))
        expectEveryPrefixTruncated(HCIEncryptionChange.self, bytes)
    }

    @Test func numberOfCompletedPacketsAsBumbleSendsIt() throws {
        let bytes = hex("04 13 05 01 0100 0100")
        let event = try HCIEvent(code: bytes[1], parameters: Array(bytes[3...]))
        #expect(event == .numberOfCompletedPackets(.init(entries: [.init(handle: 1, completedPackets: 1)])))
        #expect(event.packet.h4Bytes == bytes)
        // Several handles: pairs interleaved.
        let two = try roundTrip(HCINumberOfCompletedPackets.self, hex("02 0100 0300 0200 0100"))
        #expect(two.entries == [.init(handle: 1, completedPackets: 3), .init(handle: 2, completedPackets: 1)])
        expectEveryPrefixTruncated(HCINumberOfCompletedPackets.self, hex("02 0100 0300 0200 0100"))
    }

    @Test func leConnectionComplete() throws {
        // Central side as Bumble reports it: handle 1, peer F1:F1:F1:F1:F1:F1 random, 15 ms, 0, 720 ms.
        let bytes = hex("01 00 0100 00 01 F1F1F1F1F1F1 0C00 0000 4800 00")
        let event = try HCIEvent(code: 0x3E, parameters: bytes)
        let expected = LEConnectionComplete(
            handle: 1, role: .central, peerAddress: try BluetoothAddress("F1:F1:F1:F1:F1:F1", type: .random),
            interval: 12, latency: 0, supervisionTimeout: 72)
        #expect(event == .leMeta(.connectionComplete(expected)))
        #expect(event.packet == expected.packet)
        #expect(event.packet.h4Bytes == hex("04 3E 13") + bytes)
        expectEveryPrefixTruncated(LEConnectionComplete.self, Array(bytes.dropFirst()))
    }

    @Test func leEnhancedConnectionComplete() throws {
        let body = hex("00 0200 01 03 010203040506 000000000000 000000000000 2800 0000 C800 01")
        let event = try HCIEvent(code: 0x3E, parameters: [0x0A] + body)
        guard case let .leMeta(.enhancedConnectionComplete(e)) = event else { Issue.record("\(event)"); return }
        #expect(e.handle == 2 && e.role == .peripheral)
        #expect(e.peerAddressType == .randomIdentity)
        #expect(e.peerAddress == (try BluetoothAddress("06:05:04:03:02:01", type: .random)))
        #expect(e.interval == 40 && e.supervisionTimeout == 200 && e.centralClockAccuracy == 1)
        try roundTrip(LEEnhancedConnectionComplete.self, body)
        expectEveryPrefixTruncated(LEEnhancedConnectionComplete.self, body)
    }

    @Test func legacyAdvertisingReportWithTwoReports() throws {
        let body = hex("02"
            + " 00 01 C1C2C3C4C5C6 03 020106 CE"  // ADV_IND, random, flags, -50 dBm
            + " 04 00 010000000000 00 B0")  // SCAN_RSP, public, no data, -80 dBm
        let event = try HCIEvent(code: 0x3E, parameters: [0x02] + body)
        guard case let .leMeta(.advertisingReport(report)) = event else { Issue.record("\(event)"); return }
        #expect(report.reports.count == 2)
        #expect(report.reports[0] == .init(
            eventType: .advInd, address: try BluetoothAddress("C6:C5:C4:C3:C2:C1", type: .random), data: [2, 1, 6], rssi: -50))
        #expect(report.reports[1].eventType == .scanResponse)
        #expect(report.reports[1].rssi == -80 && report.reports[1].data.isEmpty)
        try roundTrip(LEAdvertisingReport.self, body)
        expectEveryPrefixTruncated(LEAdvertisingReport.self, body)
        // A truncated second report names its index.
        #expect {
            try LEAdvertisingReport(parameters: Array(body.dropLast()))
        } throws: { error in
            (error as? DecodingError)?.field == "report[1].RSSI"
        }
    }

    @Test func extendedAdvertisingReportAsBumbleSendsIt() throws {
        // Spec §1.6: evt_type 0001 (connectable, no legacy bit), random address, 1M/1M, SID 0,
        // TX power 0, RSSI -50, no periodic, no direct address, 3 data bytes.
        let body = hex("01 0100 01 F1F1F1F1F1F1 01 01 00 00 CE 0000 00 000000000000 03 020106")
        let event = try HCIEvent(code: 0x3E, parameters: [0x0D] + body)
        guard case let .leMeta(.extendedAdvertisingReport(ext)) = event else { Issue.record("\(event)"); return }
        let report = try #require(ext.reports.first)
        #expect(report.eventType == .connectable)
        #expect(!report.eventType.contains(.legacy))
        #expect(report.address == (try BluetoothAddress("F1:F1:F1:F1:F1:F1", type: .random)))
        #expect(report.primaryPHY == .le1M && report.secondaryPHY == .le1M)
        #expect(report.advertisingSID == 0 && report.txPower == 0 && report.rssi == -50)
        #expect(report.data == [2, 1, 6])
        try roundTrip(LEExtendedAdvertisingReport.self, body)
        expectEveryPrefixTruncated(LEExtendedAdvertisingReport.self, body)
        // The scan response copy Bumble sends next: event type 0x0008.
        let rsp = try LEExtendedAdvertisingReport(parameters: hex("01 0800") + Array(body.dropFirst(3)))
        #expect(rsp.reports.first?.eventType == .scanResponse)
    }

    @Test func otherLESubevents() throws {
        let update = hex("00 0100 1800 0000 4800")
        #expect(try HCIEvent(code: 0x3E, parameters: [0x03] + update)
            == .leMeta(.connectionUpdateComplete(.init(handle: 1, interval: 24, latency: 0, supervisionTimeout: 72))))
        expectEveryPrefixTruncated(LEConnectionUpdateComplete.self, update)

        let features = hex("00 0100 FF79010000000000")
        #expect(try HCIEvent(code: 0x3E, parameters: [0x04] + features)
            == .leMeta(.readRemoteFeaturesComplete(.init(handle: 1, features: LEFeatures(rawValue: 0x179FF)))))
        expectEveryPrefixTruncated(LEReadRemoteFeaturesComplete.self, features)

        let ltk = hex("0100 0102030405060708 3412")
        #expect(try HCIEvent(code: 0x3E, parameters: [0x05] + ltk)
            == .leMeta(.longTermKeyRequest(.init(handle: 1, randomNumber: 0x0807_0605_0403_0201, encryptedDiversifier: 0x1234))))
        expectEveryPrefixTruncated(LELongTermKeyRequest.self, ltk)

        let dle = hex("0100 FB00 4808 FB00 4808")
        #expect(try HCIEvent(code: 0x3E, parameters: [0x07] + dle)
            == .leMeta(.dataLengthChange(.init(handle: 1, maxTxOctets: 251, maxTxTime: 2120, maxRxOctets: 251, maxRxTime: 2120))))
        expectEveryPrefixTruncated(LEDataLengthChange.self, dle)

        let phy = hex("00 0100 02 02")
        #expect(try HCIEvent(code: 0x3E, parameters: [0x0C] + phy)
            == .leMeta(.phyUpdateComplete(.init(handle: 1, txPHY: .le2M, rxPHY: .le2M))))
        expectEveryPrefixTruncated(LEPHYUpdateComplete.self, phy)
    }

    @Test func unknownEventsAndSubeventsAreKeptRaw() throws {
        let hardwareError = try HCIEvent(code: 0x10, parameters: [0x01])
        #expect(hardwareError == .unknown(code: 0x10, parameters: [0x01]))
        #expect(hardwareError.packet.h4Bytes == hex("04 10 01 01"))
        let channelSelection = try HCIEvent(code: 0x3E, parameters: hex("14 0100 01"))
        #expect(channelSelection == .leMeta(.unknown(subevent: 0x14, parameters: hex("0100 01"))))
        #expect(channelSelection.packet.h4Bytes == hex("04 3E 04 14 0100 01"))
        #expect(try HCIEvent(packet: .acl(handle: 1, boundary: .firstFlushable, broadcast: 0, data: [])) == nil)
        // An empty LE Meta event names the missing subevent code.
        #expect {
            try HCIEvent(code: 0x3E, parameters: [])
        } throws: { error in
            (error as? DecodingError)?.field == "LE Meta.subevent code"
        }
        #expect {
            try HCIEvent(code: 0x3E, parameters: [0x01, 0x00])
        } throws: { error in
            (error as? DecodingError)?.field == "LE Meta.LE Connection Complete.connection handle"
        }
    }
}
