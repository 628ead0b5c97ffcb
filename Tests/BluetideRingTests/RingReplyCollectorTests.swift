import Bluetide
import Testing
@testable import BluetideRing

/// Packets from the spec notes (colmi-r02.md §8) matched to requests and assembled.
@Suite struct RingReplyCollectorTests {
    static func packet(_ hex: String) throws -> COLMIPacket {
        let bytes = stride(from: 0, to: hex.count, by: 2).map { i -> UInt8 in
            let start = hex.index(hex.startIndex, offsetBy: i)
            return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)!
        }
        return try COLMIPacket(bytes: bytes)
    }

    @Test func aBatteryReplyCompletesABatteryRequestAndUnsolicitedPacketsAreNotMine() throws {
        var collector = RingReplyCollector(.packet(opcode: COLMIOpcode.battery))
        #expect(collector.feed(try Self.packet("730c1500000000000000000000000094")) == .notMine)
        #expect(collector.feed(try Self.packet("2ff10000000000000000000000000020")) == .notMine)
        let reply = try Self.packet("03400000000000000000000000000043")
        #expect(collector.feed(reply) == .done(.packet(reply)))
    }

    @Test func theHeartRateLogNoDataPacketCompletesWithNil() throws {
        var collector = RingReplyCollector(.heartRateLog)
        #expect(collector.feed(try Self.packet("15ff0000000000000000000000000014")) == .done(.heartRateLog(nil)))
    }

    @Test func aFiveRecordStepsReplyIsAssembledAcrossAnInterleavedBatteryPush() throws {
        var collector = RingReplyCollector(.sportDetail)
        let packets = [
            "43f00501000000000000000000000039", "432308131000 05c80030001b000000a9".replacingOccurrences(of: " ", with: ""),
            "43230813140105b618aa0469030000 83".replacingOccurrences(of: " ", with: ""),
            "4323081318020538 04e10095000000 52".replacingOccurrences(of: " ", with: ""),
            "432308131c0305 05026c0048000000 60".replacingOccurrences(of: " ", with: ""),
        ]
        for hex in packets { #expect(collector.feed(try Self.packet(hex)) == .waiting) }
        #expect(collector.feed(try Self.packet("730c2b010000000000000000000000ab")) == .notMine)
        guard case let .done(.sportDetail(day?)) = collector.feed(try Self.packet("432308134c0405ef01630044000000 6d".replacingOccurrences(of: " ", with: ""))) else {
            Issue.record("not complete")
            return
        }
        #expect(day.records.map(\.steps) == [48, 1194, 225, 108, 99])
        #expect(day.records.map(\.quarterHourIndex) == [16, 20, 24, 28, 76])
    }

    @Test func theCapturedSleepFrameIsReassembledFromTwentyByteNotifications() throws {
        let hex = "bc273300d48901003 03f051e0202360311051102300310022004200320022004100320022004100220032002400320023003100202050c0219"
            .replacingOccurrences(of: " ", with: "")
        let bytes = stride(from: 0, to: hex.count, by: 2).map { i -> UInt8 in
            let start = hex.index(hex.startIndex, offsetBy: i)
            return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)!
        }
        #expect(bytes.count == 57)
        var collector = RingReplyCollector(.bigData(id: COLMIBigDataID.sleep))
        #expect(collector.feed(try Self.packet("03400000000000000000000000000043")) == .notMine)
        #expect(collector.feed(bigDataChunk: Array(bytes[0..<20])) == .waiting)
        #expect(collector.feed(bigDataChunk: Array(bytes[20..<40])) == .waiting)
        guard case let .done(.bigData(frame)) = collector.feed(bigDataChunk: Array(bytes[40...])) else {
            Issue.record("not complete")
            return
        }
        guard case let .sleep(history) = try COLMIBigDataPayload(frame: frame) else { Issue.record("not sleep"); return }
        #expect(history.days.first?.startMinute == 1343)
        #expect(history.days.first?.endMinute == 542)
        #expect(history.days.first?.totalMinutes == 639)
    }

    @Test func aBigDataFrameWithABadCRCFailsTheAttempt() throws {
        var collector = RingReplyCollector(.bigData(id: COLMIBigDataID.sleep))
        // `bc 27 01 00 bf 40 00` (0 nights) with the CRC's low byte changed.
        guard case .failed = collector.feed(bigDataChunk: [0xBC, 0x27, 0x01, 0x00, 0xBE, 0x40, 0x00]) else {
            Issue.record("a bad CRC was accepted")
            return
        }
        collector.reset()
        #expect(collector.feed(bigDataChunk: [0xBC, 0x27, 0x01, 0x00, 0xBF, 0x40, 0x00]) != .notMine)
    }
}
