import BluetideBase
import Testing
@testable import BluetideProfiles

@Suite struct COLMIBigDataTests {
    static let sleepFrameHex = """
        bc 27 33 00 d4 89 01 00 30 3f 05 1e 02 02 36 03 11 05 11 02 30 03 10 02 20 04 20 03 20
        02 20 04 10 03 20 02 20 04 10 02 20 03 20 02 40 03 20 02 30 03 10 02 02 05 0c 02 19
        """

    @Test func crc16Modbus() {
        #expect(COLMICRC16.modbus([]) == 0xFFFF)
        #expect(COLMICRC16.modbus([0x00]) == 0x40BF)
        #expect(COLMICRC16.modbus([0xFF]) == 0x00FF)
        #expect(COLMICRC16.modbus(Array("123456789".utf8)) == 0x4B37, "the CRC-16/MODBUS check value")
    }

    @Test func requestFrames() throws {
        #expect(COLMIBigDataFrame.sleepRequest().bytes == (try Hex.parse("bc 27 01 00 ff 00 ff")))
        #expect(COLMIBigDataFrame.spo2Request.bytes == (try Hex.parse("bc 2a 01 00 ff 00 ff")))
        #expect(COLMIBigDataFrame.temperatureRequest.bytes == (try Hex.parse("bc 25 01 00 3e 81 02")))
        #expect(COLMIBigDataFrame.sleepRequest(.allProtocolV1).bytes == (try Hex.parse("bc 27 02 00 81 80 ff 01")))
        #expect(COLMIBigDataFrame.sleepRequest(.empty).bytes == (try Hex.parse("bc 27 00 00 ff ff")))
        for hex in ["bc 27 01 00 ff 00 ff", "bc 2a 01 00 ff 00 ff", "bc 25 01 00 3e 81 02", "bc 27 02 00 81 80 ff 01", "bc 27 00 00 ff ff"] {
            let bytes = try Hex.parse(hex)
            #expect(try COLMIBigDataFrame(exactly: bytes).bytes == bytes)
        }
    }

    @Test func sleepVector() throws {
        let bytes = try Hex.parse(Self.sleepFrameHex)
        #expect(bytes.count == 57)
        let frame = try COLMIBigDataFrame(exactly: bytes)
        #expect(frame.dataID == 0x27 && frame.payload.count == 51 && frame.crc == 0x89D4)
        guard case let .sleep(history) = try COLMIBigDataPayload(frame: frame), let night = history.days.first else {
            Issue.record("not sleep")
            return
        }
        #expect(history.days.count == 1)
        #expect(night.daysAgo == 0 && night.startMinute == 1343 && night.endMinute == 542)
        #expect(night.periods.count == 22)
        #expect(Array(night.periods.prefix(7)) == [
            COLMISleepPeriod(stage: .light, minutes: 54), COLMISleepPeriod(stage: .deep, minutes: 17),
            COLMISleepPeriod(stage: .awake, minutes: 17), COLMISleepPeriod(stage: .light, minutes: 48),
            COLMISleepPeriod(stage: .deep, minutes: 16), COLMISleepPeriod(stage: .light, minutes: 32),
            COLMISleepPeriod(stage: .rem, minutes: 32),
        ])
        #expect(Array(night.periods.suffix(3)) == [
            COLMISleepPeriod(stage: .light, minutes: 2), COLMISleepPeriod(stage: .awake, minutes: 12),
            COLMISleepPeriod(stage: .light, minutes: 25),
        ])
        #expect(night.totalMinutes == 639)
        #expect(night.totalMinutes == (Int(night.endMinute) + 1440 - Int(night.startMinute)) % 1440)
        #expect(COLMIBigDataPayload.sleep(history).frame.bytes == bytes, "encodes back to the captured frame")
    }

    @Test func emptySleepReply() throws {
        let frame = try COLMIBigDataFrame(exactly: try Hex.parse("bc 27 01 00 bf 40 00"))
        #expect(try COLMIBigDataPayload(frame: frame) == .sleep(COLMISleepHistory(days: [])))
        #expect(try COLMIBigDataPayload(frame: try COLMIBigDataFrame(exactly: try Hex.parse("bc 03 01 00 3e 81 02")))
            == .otaStatus(step: 3, status: 2))
    }

    @Test func crcMismatchNamesExpectedAndFound() throws {
        var bytes = try Hex.parse(Self.sleepFrameHex)
        bytes[4] = 0xD5
        #expect(throws: DecodingError.invalid("COLMI big data.crc", expected: "0x89d4", found: "0x89d5", at: 4)) {
            try COLMIBigDataFrame(bytes: bytes)
        }
        var payloadFlip = try Hex.parse(Self.sleepFrameHex)
        payloadFlip[20] ^= 0x01
        #expect(throws: DecodingError.self) { try COLMIBigDataFrame(bytes: payloadFlip) }
        #expect(throws: DecodingError.invalid("COLMI big data.magic", expected: "0xbc", found: "0x15", at: 0)) {
            try COLMIBigDataFrame(bytes: [0x15, 0x27, 0, 0, 0xFF, 0xFF])
        }
    }

    @Test func frameTruncationAtFieldBoundaries() throws {
        let bytes = try Hex.parse(Self.sleepFrameHex)
        let fields: [(Int, String)] = [(0, "magic"), (1, "data id"), (2, "length"), (4, "crc"), (6, "payload")]
        for (cut, field) in fields {
            do {
                _ = try COLMIBigDataFrame(bytes: Array(bytes.prefix(cut)))
                Issue.record("cut at \(cut) accepted")
            } catch {
                #expect(error.field == "COLMI big data.\(field)")
                if case .truncated = error.kind {} else { Issue.record("cut at \(cut): \(error)") }
            }
        }
        for cut in 7..<57 { #expect(throws: DecodingError.self) { try COLMIBigDataFrame(bytes: Array(bytes.prefix(cut))) } }
    }

    @Test func sleepPayloadTruncationAtRecordBoundaries() throws {
        let payload = Array(try Hex.parse(Self.sleepFrameHex).dropFirst(6))
        for cut in [1, 2, 3, 5, 7, 8, 9, 50] {
            #expect(throws: DecodingError.self, "cut at \(cut)") { try COLMISleepHistory(exactly: Array(payload.prefix(cut))) }
        }
        var odd = payload
        odd[2] = 0x31
        #expect(throws: DecodingError.invalid("COLMI sleep.record length", expected: "4 + 2 × periods (even, ≥ 4)", found: "49", at: 2)) {
            try COLMISleepHistory(bytes: odd)
        }
    }

    @Test func reassemblesAcrossNotifications() throws {
        let bytes = try Hex.parse(Self.sleepFrameHex)
        var reassembler = COLMIBigDataReassembler()
        #expect(try reassembler.feed(Array(bytes[0..<3])).isEmpty, "not even the length yet")
        #expect(reassembler.expectedFrameSize == nil)
        #expect(try reassembler.feed(Array(bytes[3..<20])).isEmpty)
        #expect(reassembler.expectedFrameSize == 57 && reassembler.bufferedByteCount == 20)
        #expect(try reassembler.feed(Array(bytes[20..<40])).isEmpty)
        let frames = try reassembler.feed(Array(bytes[40...]) + (try Hex.parse("bc 27 01 00 bf 40")))
        #expect(frames.count == 1 && frames.first?.payload.count == 51)
        #expect(reassembler.bufferedByteCount == 6, "the next frame's start is kept")
        let next = try reassembler.feed([0x00])
        #expect(next == [try COLMIBigDataFrame(dataID: 0x27, payload: [0])])
        #expect(!reassembler.isInProgress)
    }

    @Test func reassemblerRejectsBadStartAndBadCRC() throws {
        var reassembler = COLMIBigDataReassembler()
        #expect(throws: DecodingError.self) { try reassembler.feed([0x27, 0x01]) }
        var bytes = try Hex.parse(Self.sleepFrameHex)
        bytes[56] ^= 0xFF
        _ = try reassembler.feed(Array(bytes[0..<30]))
        #expect(throws: DecodingError.self) { try reassembler.feed(Array(bytes[30...])) }
        #expect(!reassembler.isInProgress, "a bad frame is dropped")
    }

    @Test func spo2AndTemperaturePayloads() throws {
        let yesterday = COLMISpO2Day(daysAgo: 1, minimumPercentByHour: Array(repeating: 95, count: 24), maximumPercentByHour: Array(repeating: 98, count: 24))
        var today = COLMISpO2Day(daysAgo: 0, minimumPercentByHour: Array(repeating: 0, count: 24), maximumPercentByHour: Array(repeating: 0, count: 24))
        today.minimumPercentByHour[3] = 94
        today.maximumPercentByHour[3] = 99
        let history = COLMISpO2History(days: [yesterday, today])
        let frame = COLMIBigDataPayload.spo2(history).frame
        #expect(frame.payload.count == 98)
        #expect(try COLMIBigDataPayload(frame: try COLMIBigDataFrame(exactly: frame.bytes)) == .spo2(history))
        #expect(today.averagePercentByHour[3] == 97 && today.averagePercentByHour[0] == nil)
        #expect(throws: DecodingError.self) { try COLMISpO2History(bytes: Array(yesterday.bytes.prefix(30))) }

        let temps = COLMITemperatureDay(daysAgo: 0, rawByHalfHour: [0, 165] + Array(repeating: 0, count: 46))
        #expect(temps.celsiusByHalfHour[1] == 36.5 && temps.celsiusByHalfHour[0] == nil)
        #expect(COLMITemperatureDay.celsius(raw: 200) == 40.0, "read unsigned: no negative temperatures")
        #expect(COLMITemperatureDay.raw(celsius: 36.5) == 165)
        let tFrame = COLMIBigDataPayload.temperature(COLMITemperatureHistory(days: [temps])).frame
        #expect(tFrame.payload.count == 50 && tFrame.payload[1] == 0x1E)
        #expect(try COLMIBigDataPayload(frame: tFrame) == .temperature(COLMITemperatureHistory(days: [temps])))
        #expect(try COLMITemperatureHistory(bytes: [0x02]) == COLMITemperatureHistory(days: []), "short payloads hold no days")
        #expect(throws: DecodingError.self) { try COLMITemperatureHistory(bytes: temps.bytes + [0, 0x1E, 1]) }
    }

    @Test func payloadLimit() {
        #expect(throws: COLMIEncodingError.self) { try COLMIBigDataFrame(dataID: 1, payload: Array(repeating: 0, count: 65_536)) }
    }
}
