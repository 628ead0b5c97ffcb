import BluetideBase
import Foundation
import BluetideProfiles
import Testing

@testable import BluetideDeviceModels

@Suite struct COLMIRingModelTests {
    /// 2024-08-10 00:00:00, the default clock's day.
    let dayStart: UInt32 = 1_723_248_000

    private func send(_ model: inout COLMIRingModel, _ request: COLMIRequest, at now: Double) throws -> [COLMIPacket] {
        let outcome = model.write(COLMIUUID.write, request.packet.bytes, now: now)
        return try outcome.outputs.map { output in
            #expect(output.characteristic == COLMIUUID.notify)
            return try COLMIPacket(exactly: output.bytes)  // checks the checksum
        }
    }

    private func log(_ packets: [COLMIPacket]) throws -> COLMIHeartRateLog? {
        var assembler = COLMIHeartRateLogAssembler()
        for packet in packets {
            if case let .complete(log) = try assembler.feed(packet) { return log }
        }
        return nil
    }

    @Test func everyDocumentedRequestGetsAValidResponse() throws {
        var model = COLMIRingModel(seed: 5, options: .augustTenAtNine)
        let requests: [COLMIRequest] = [
            .setTime(try COLMISetTime(COLMIDateTime(year: 2024, month: 8, day: 10, hour: 12))),
            .camera(mode: 4), .camera(mode: 6), .battery, .phoneName(try COLMIPhoneName(name: "GB")),
            .readUserPreferences, .writeUserPreferences(COLMIUserPreferences(ageYears: 40, heightCentimeters: 180, weightKilograms: 80)),
            .blinkTwice, .heartRateLog(dayStart: dayStart), .readHeartRateLogSettings,
            .writeHeartRateLogSettings(COLMIHeartRateLogSettingsWrite(enabled: true, intervalMinutes: 60)), .readGoals,
            .readAutoMeasurement(.spo2), .readAutoMeasurement(.stress), .readAutoMeasurement(.hrv), .readAutoMeasurement(.temperature),
            .writeAutoMeasurement(.hrv, enabled: false), .writeAutoMeasurement(.temperature, enabled: true),
            .stressHistory(dayIndex: 0), .hrvHistory(daysAgo: 0), .deviceSupport, .sportDetail(dayOffset: 0),
            .sportDetail(dayOffset: 3), .findDevice, .factoryReset, .powerOff,
        ]
        for request in requests {
            let replies = try send(&model, request, at: 1)
            #expect(!replies.isEmpty, "\(request)")
            #expect(replies.first?.opcode == request.packet.opcode, "\(request)")
            for reply in replies { _ = try COLMIResponse(packet: reply) }
        }
        // Settings are persisted and read back.
        var replies = try send(&model, .writeHeartRateLogSettings(COLMIHeartRateLogSettingsWrite(enabled: false, intervalMinutes: 15)), at: 2)
        replies = try send(&model, .readHeartRateLogSettings, at: 2)
        #expect(try COLMIResponse(packet: #require(replies.first)) == .heartRateLogSettings(.init(action: 1, enabled: false, intervalMinutes: 15)))
        replies = try send(&model, .writeUserPreferences(COLMIUserPreferences(ageYears: 40, heightCentimeters: 180, weightKilograms: 80)), at: 2)
        replies = try send(&model, .readUserPreferences, at: 2)
        #expect(replies.first?.payload.prefix(7) == [0x01, 0, 0, 2, 40, 180, 80])
        // A packet with a bad checksum is ignored.
        var bad = COLMIRequest.battery.packet.bytes
        bad[15] &+= 1
        #expect(model.write(COLMIUUID.write, bad, now: 3) == .ok)
    }

    @Test func heartRateLogReassemblesTo288SlotsFollowingTheSettings() throws {
        var model = COLMIRingModel(seed: 5, options: .augustTenAtNine)
        // Default: every 30 minutes; the clock is at 09:00, so 00:00...09:00 are filled.
        var day = try #require(try log(send(&model, .heartRateLog(dayStart: dayStart), at: 0)))
        #expect(day.bpmBySlot.count == 288)
        #expect(day.packetCount == 24)
        #expect(day.requestTimestamp == dayStart)
        #expect(day.measurements.map(\.minuteOfDay) == Array(stride(from: 0, through: 540, by: 30)))
        #expect(day.measurements.allSatisfy { (40...200).contains($0.bpm) })
        // Hourly logging, yesterday: a full day of 24 values.
        _ = try send(&model, .writeHeartRateLogSettings(COLMIHeartRateLogSettingsWrite(enabled: true, intervalMinutes: 60)), at: 1)
        let yesterday = try #require(try log(send(&model, .heartRateLog(dayStart: dayStart - 86_400), at: 1)))
        #expect(yesterday.measurements.count == 24)
        // The same slot reads the same on every request (stored history, not fresh noise).
        day = try #require(try log(send(&model, .heartRateLog(dayStart: dayStart), at: 2)))
        #expect(day.measurements.count == 10)
        let again = try #require(try log(send(&model, .heartRateLog(dayStart: dayStart), at: 3)))
        #expect(again.bpmBySlot == day.bpmBySlot)
        // Off: no values.
        _ = try send(&model, .writeHeartRateLogSettings(COLMIHeartRateLogSettingsWrite(enabled: false, intervalMinutes: 60)), at: 4)
        #expect(try log(send(&model, .heartRateLog(dayStart: dayStart), at: 4))?.measurements.isEmpty == true)
        // Too old or in the future: `15 FF`.
        #expect(try send(&model, .heartRateLog(dayStart: dayStart - 30 * 86_400), at: 5).map(\.bytes) == [COLMIResponse.heartRateLog(.noData).packet.bytes])
        #expect(try send(&model, .heartRateLog(dayStart: dayStart + 86_400), at: 5).first?[1] == 0xFF)
    }

    @Test func setTimeMovesTheClock() throws {
        var model = COLMIRingModel(seed: 5, options: .augustTenAtNine)
        let replies = try send(&model, .setTime(try COLMISetTime(COLMIDateTime(year: 2025, month: 3, day: 14, hour: 15, minute: 9, second: 26))), at: 100)
        #expect(replies.map(\.opcode) == [0x01, 0x2F])
        #expect(replies.last?[1] == 0xF1)
        #expect(model.ringSeconds(at: 100) == COLMIDateTime(year: 2025, month: 3, day: 14, hour: 15, minute: 9, second: 26).secondsSince1970)
        #expect(model.ringSeconds(at: 160) == model.ringSeconds(at: 100) + 60)
        let start = UInt32(COLMIDateTime(year: 2025, month: 3, day: 14).secondsSince1970)
        let day = try #require(try log(send(&model, .heartRateLog(dayStart: start), at: 160)))
        #expect(day.measurements.last?.minuteOfDay == 15 * 60)
    }

    @Test func byDefaultTheClockStartsAtTheCurrentTimeAndHoldsAWeek() throws {
        let before = Int64(Date().timeIntervalSince1970)
        var model = COLMIRingModel(seed: 5)
        let after = Int64(Date().timeIntervalSince1970)
        #expect((before...after).contains(model.ringSeconds(at: 0)))
        // Today's log is not empty (at least the slot of midnight), and seven days are held.
        let today = Int(model.ringSeconds(at: 0) / 86_400)
        for back in 0..<COLMIRingModel.historyDays {
            let start = UInt32((today - back) * 86_400)
            let day = try #require(try log(send(&model, .heartRateLog(dayStart: start), at: 1)), "day -\(back)")
            #expect(!day.measurements.isEmpty)
            #expect(try send(&model, .sportDetail(dayOffset: UInt8(back)), at: 1).first?[1] != 0xFF || back == 0)
        }
        // Before the week: no data, as the real ring answers.
        let older = UInt32((today - COLMIRingModel.historyDays) * 86_400)
        #expect(try send(&model, .heartRateLog(dayStart: older), at: 1).map(\.bytes) == [[0x15, 0xFF] + Array(repeating: 0, count: 13) + [0x14]])
        #expect(try send(&model, .sportDetail(dayOffset: UInt8(COLMIRingModel.historyDays)), at: 1).first?[1] == 0xFF)
    }

    @Test func theSameDayReadsTheSameOnEveryRequestAndAgreesAcrossCommands() throws {
        var model = COLMIRingModel(seed: 5, options: .augustTenAtNine)
        let start = dayStart - 86_400 * 3
        let first = try #require(try log(send(&model, .heartRateLog(dayStart: start), at: 1)))
        let again = try #require(try log(send(&model, .heartRateLog(dayStart: start), at: 500)))
        #expect(first.bpmBySlot == again.bpmBySlot)
        // The sleep night ending that day spans the hours the HR log shows as asleep (54 bpm ± 4).
        let night = model.data.sleepWindow(day: Int(start / 86_400))
        let asleep = first.measurements.filter { $0.minuteOfDay < night.wakeMinute }
        #expect(!asleep.isEmpty && asleep.allSatisfy { (50...58).contains($0.bpm) })
    }

    @Test func unknownAndMalformedCommandsAreTreatedAsTheRingDoes() throws {
        var model = COLMIRingModel(seed: 5, options: .augustTenAtNine)
        // An unknown opcode with a valid checksum is echoed back.
        let unknown = try COLMIPacket(opcode: 0x7E, payload: [1, 2, 3])
        #expect(try send(&model, .other(unknown), at: 1) == [unknown])
        // A bad checksum, a short packet, a long packet: ignored, no reply.
        var bad = COLMIRequest.battery.packet.bytes
        bad[15] &+= 1
        for bytes in [bad, Array(bad.prefix(15)), bad + [0]] {
            #expect(model.write(COLMIUUID.write, bytes, now: 2) == .ok)
        }
        // A big-data request with a bad CRC is ignored too; writing to the notify characteristic is refused.
        #expect(model.write(COLMIUUID.bigDataWrite, [0xBC, 0x27, 0x01, 0x00, 0x00, 0x00, 0xFF], now: 3) == .ok)
        #expect(model.write(COLMIUUID.notify, COLMIRequest.battery.packet.bytes, now: 3) == .rejected(attError: EmulatedATTError.writeNotPermitted))
        #expect(model.acceptsOneCentralAtATime)
    }

    @Test func stepsAgreeWithTheLiveTotals() throws {
        var model = COLMIRingModel(seed: 5, options: .augustTenAtNine)
        var assembler = COLMISportDetailAssembler()
        var detail: COLMISportDetail?
        for packet in try send(&model, .sportDetail(dayOffset: 0), at: 0) {
            if case let .complete(d) = try assembler.feed(packet) { detail = d }
        }
        let today = try #require(detail)
        #expect(today.totalSteps > 0)
        #expect(today.records.allSatisfy { $0.date == COLMIDate(year: 2024, month: 8, day: 10) && $0.quarterHourIndex < 36 })
        #expect(UInt32(today.totalSteps) == model.liveActivity(now: 0).steps)
        // Unsolicited 73 packets appear while time passes: live totals and new HR-log data.
        let outputs = drive(&model, to: 1800, step: 5)
        let notices = try outputs.map { try COLMIResponse(packet: COLMIPacket(exactly: $0.output.bytes)) }
        let live = notices.compactMap { n -> COLMILiveActivity? in
            if case let .deviceNotification(.liveActivity(a)) = n { return a }
            return nil
        }
        // Every 5 minutes, and each minute the totals grew.
        #expect(live.count >= 6)
        #expect(live.last == model.liveActivity(now: 1800))
        #expect(notices.contains { n in
            if case .deviceNotification(.event(subtype: 0x01, _)) = n { return true }
            return false
        })
        #expect(zip(live, live.dropFirst()).allSatisfy { $0.steps <= $1.steps })
        // Too far back: `43 FF`.
        #expect(try send(&model, .sportDetail(dayOffset: 20), at: 1800).first?[1] == 0xFF)
    }

    @Test func realTimeStreamsRunUntilStopped() throws {
        var model = COLMIRingModel(seed: 5, options: .augustTenAtNine)
        #expect(try send(&model, .realTimeStart(.heartRate, .start), at: 0).isEmpty)
        var readings = try values(drive(&model, to: 10, step: 0.25), COLMIUUID.notify).compactMap { v -> COLMIRealTimeReading? in
            if case let .realTimeReading(r) = try COLMIResponse(packet: COLMIPacket(exactly: v.bytes)) { return r }
            return nil
        }
        #expect(readings.count == 10)
        #expect(readings.prefix(2).allSatisfy { $0.value == 0 && !$0.isError })
        #expect(readings.dropFirst(2).allSatisfy { $0.type == .heartRate && (45...150).contains($0.value) })
        _ = try send(&model, .realTimeStop(.heartRate), at: 10)
        _ = try send(&model, .realTimeStart(.spo2, .start), at: 10)
        readings = try values(drive(&model, from: 10, to: 20, step: 0.25), COLMIUUID.notify).compactMap { v -> COLMIRealTimeReading? in
            if case let .realTimeReading(r) = try COLMIResponse(packet: COLMIPacket(exactly: v.bytes)) { return r }
            return nil
        }
        #expect(readings.allSatisfy { $0.type == .spo2 })
        #expect(readings.dropFirst(2).allSatisfy { (95...99).contains($0.value) })
        _ = try send(&model, .realTimeStart(.spo2, .stop), at: 20)
        // Continuous HR times out 60 s after the last continue.
        _ = try send(&model, .continuousHeartRate(action: 1), at: 20)
        let continuous = values(drive(&model, from: 20, to: 200, step: 0.5), COLMIUUID.notify).filter { $0.bytes[0] == 0x1E }
        #expect(continuous.count == 60)
    }

    @Test func bigDataFramesReassembleWithValidCRC() throws {
        var model = COLMIRingModel(seed: 5, options: .augustTenAtNine)
        for request in [COLMIBigDataFrame.sleepRequest(), .sleepRequest(.allProtocolV1), .spo2Request, .temperatureRequest] {
            let outputs = model.write(COLMIUUID.bigDataWrite, request.bytes, now: 0).outputs
            #expect(outputs.allSatisfy { $0.characteristic == COLMIUUID.bigDataNotify && $0.bytes.count <= 20 })
            var reassembler = COLMIBigDataReassembler()
            var frames: [COLMIBigDataFrame] = []
            for output in outputs { frames += try reassembler.feed(output.bytes) }
            let frame = try #require(frames.first)
            #expect(frames.count == 1)
            switch try COLMIBigDataPayload(frame: frame) {
            case let .sleep(history):
                #expect(history.days.map(\.daysAgo) == [6, 5, 4, 3, 2, 1, 0])
                for day in history.days {
                    #expect(day.totalMinutes == 1440 - Int(day.startMinute) + Int(day.endMinute))
                }
            case let .spo2(history):
                #expect(history.days.count == 7)
                #expect(history.days.last?.averagePercentByHour.prefix(9).allSatisfy { ($0 ?? 0) >= 94 } == true)
                #expect(history.days.last?.averagePercentByHour[10] == nil)
            case let .temperature(history):
                #expect(history.days.count == 7)
                #expect(history.days.first?.celsiusByHalfHour.allSatisfy { ($0 ?? 0) > 33 } == true)
            default:
                Issue.record("unexpected payload for \(request)")
            }
        }
    }
}

extension EmulatorOptions {
    /// The ring clock these tests were written against: 2024-08-10 09:00:00.
    static var augustTenAtNine: EmulatorOptions {
        var options = EmulatorOptions()
        options.clockStartSeconds = 1_723_280_400
        return options
    }
}
