import BluetideBase
import Testing
@testable import BluetideProfiles

/// §8 single-packet vectors: decode to the expected values and encode back to the same bytes.
@Suite struct COLMIResponseTests {
    static func decode(_ bytes: [UInt8]) throws -> COLMIResponse {
        let response = try COLMIResponse(bytes: bytes)
        #expect(response.bytes == bytes, "re-encodes to the same packet")
        return response
    }

    @Test func battery() throws {
        let response = try Self.decode(try COLMIVector.v1("03 40", checksum: 0x43))
        #expect(response == .battery(COLMIBattery(levelPercent: 64, isCharging: false)))
        #expect(response.summary == "battery 64 %, not charging")
    }

    @Test func realTimeHeartRate() throws {
        let ok = try Self.decode(try COLMIVector.v1("69 01 00 4e", checksum: 0xB8))
        #expect(ok == .realTimeReading(COLMIRealTimeReading(type: .heartRate, errorCode: 0, value: 78)))
        #expect(ok.summary == "real-time HR 78 bpm")
        let error = try Self.decode(try COLMIVector.v1("69 01 01", checksum: 0x6B))
        guard case let .realTimeReading(reading) = error else {
            Issue.record("not a reading")
            return
        }
        #expect(reading.type == .heartRate && reading.errorCode == 1 && reading.isError && !reading.hasValue)
        #expect(error.summary.contains("not on finger"))
    }

    @Test func heartRateLogSettings() throws {
        #expect(try Self.decode(try COLMIVector.v1("16 01 01 3c", checksum: 0x54))
            == .heartRateLogSettings(COLMIHeartRateLogSettings(action: 1, enabled: true, intervalMinutes: 60)))
        #expect(try Self.decode(try COLMIVector.v1("16 01 02 3c", checksum: 0x55))
            == .heartRateLogSettings(COLMIHeartRateLogSettings(action: 1, enabled: false, intervalMinutes: 60)))
    }

    @Test func capabilities() throws {
        let response = try Self.decode(try COLMIVector.full("01 00 01 00 22 00 00 00 00 01 00 30 01 00 10 66"))
        guard case let .capabilities(c) = response else {
            Issue.record("not capabilities")
            return
        }
        #expect(c.supportsSpO2 && c.supportsWeather && !c.supportsTemperature)
        #expect(c.usesNewSleepProtocol && c.supportsManualHeartRate && !c.supportsBloodSugar)
        #expect(c.supportsStress && !c.supportsHRV && c.maxContacts == 20)
    }

    @Test func unsolicitedPackets() throws {
        #expect(try Self.decode(try COLMIVector.v1("73 0c 15", checksum: 0x94))
            == .deviceNotification(.battery(COLMIBattery(levelPercent: 21, isCharging: false))))
        #expect(try Self.decode(try COLMIVector.v1("73 0c 2b 01", checksum: 0xAB))
            == .deviceNotification(.battery(COLMIBattery(levelPercent: 43, isCharging: true))))
        #expect(try Self.decode(try COLMIVector.v1("2f f1", checksum: 0x20)) == .packetSize(bytes: 241))
        let hrAvailable = try Self.decode(try COLMIResponse.deviceNotification(.event(subtype: 1, data: [])).bytes)
        #expect(hrAvailable.summary == "notification: new HR log data")
    }

    @Test func liveActivityIsBigEndian() throws {
        let bytes = try COLMIPacket(opcode: 0x73, payload: [0x12, 0x00, 0x04, 0xD2, 0x00, 0x01, 0x00, 0x00, 0x03, 0x20]).bytes
        #expect(try Self.decode(bytes) == .deviceNotification(.liveActivity(COLMILiveActivity(steps: 1234, caloriesRaw: 256, distanceMeters: 800))))
    }

    @Test func rawAccelerometer() throws {
        let response = try Self.decode(try COLMIVector.v1("a1 03 1d 09 07 08 fa 00", checksum: 0xD3))
        #expect(response == .rawSensor(.accelerometer(first: 0x1D9, second: 0x078, third: 0xFA0)))
        #expect(COLMIRawSensorSample.signed12(0xFA0) == -96)
        #expect(COLMIRawSensorSample.signed12(0x1D9) == 473)
        let ppg = COLMIResponse.rawSensor(.ppg(raw: 0x1234, max: 2, min: 3, diff: 4))
        #expect(ppg.bytes.prefix(4) == [0xA1, 0x02, 0x12, 0x34])
        #expect(try Self.decode(ppg.bytes) == ppg)
        let spo2 = COLMIResponse.rawSensor(.spo2(raw: 300, max: 9, min: 8, diff: 1))
        #expect(try Self.decode(spo2.bytes) == spo2)
    }

    @Test func stepsRecord() throws {
        let response = try Self.decode(try COLMIVector.full("43 23 08 13 10 00 05 c8 00 30 00 1b 00 00 00 a9"))
        guard case let .sportDetail(.record(r)) = response else {
            Issue.record("not a record")
            return
        }
        #expect(r.date == COLMIDate(year: 2023, month: 8, day: 13))
        #expect(r.quarterHourIndex == 16 && r.minuteOfDay == 240)
        #expect(r.caloriesRaw == 200 && r.steps == 48 && r.distanceMeters == 27)
        #expect(r.packetIndex == 0 && r.packetCount == 5 && !r.isLast)
        #expect(try Self.decode(try COLMIVector.v1("43 ff", checksum: 0x42)) == .sportDetail(.noData))
        #expect(try Self.decode(try COLMIVector.v1("15 ff", checksum: 0x14)) == .heartRateLog(.noData))
    }

    @Test func badBCDDateNamesTheField() throws {
        let packet = try COLMIPacket(opcode: 0x43, payload: [0x23, 0x1A, 0x13])
        #expect(throws: DecodingError.invalid("COLMI date.month", expected: "packed BCD (two digits 0-9)", found: "0x1a", at: 2)) {
            try COLMIResponse(packet: packet)
        }
    }

    @Test func everyOtherResponseRoundTrips() throws {
        let responses: [COLMIResponse] = [
            .camera(.takePhoto), .continuousHeartRate(bpm: 72),
            .goals(COLMIGoals(steps: 8000, calories: 300, distanceMeters: 5000, sportMinutes: 30, sleepMinutes: 480)),
            .autoMeasurement(COLMIAutoMeasurementSetting(kind: .spo2, enabled: true)),
            .autoMeasurement(COLMIAutoMeasurementSetting(kind: .temperature, action: 2, enabled: true)),
            .stressHistory(.header(packetCount: 5, range: 30)), .hrvHistory(.values(index: 3, values: Array(1...13))),
            .hrvHistory(.first(unknown: 7, values: Array(1...12))),
            .deviceSupport(flags: 0x08), .sportDetail(.header(recordCount: 3, newCalorieProtocol: true)),
            .heartRateLog(.header(packetCount: 24, slotMinutes: 5)), .heartRateLog(.first(timestamp: 7, bpm: Array(60...68))),
            .heartRateLog(.values(index: 9, bpm: Array(70...82))),
            .capabilities(COLMICapabilities(temperatureRaw: 1, flags1: 0x02, screenWidth: 240, screenHeight: 280)),
            .deviceNotification(.event(subtype: 0x04, data: Array(repeating: 0, count: 13))),
            .raw(try COLMIPacket(opcode: 0x7E, payload: [9])),
        ]
        for response in responses {
            #expect(try COLMIResponse(bytes: response.bytes) == response, "\(response.summary)")
        }
    }

    @Test func unknownOpcodesDecodeRaw() throws {
        for opcode in [UInt8(0x07), 0x44, 0x6A, 0x80, 0xFE, 0x50, 0x08] {
            let packet = try COLMIPacket(opcode: opcode, payload: [1, 2])
            #expect(try COLMIResponse(packet: packet) == .raw(packet))
        }
    }

    @Test func realTimeTruncationNamesFields() {
        #expect(throws: DecodingError.truncated("COLMI real-time reading.type", needed: 1, present: 0, at: 0)) {
            try COLMIRealTimeReading(bytes: [])
        }
        #expect(throws: DecodingError.truncated("COLMI real-time reading.error", needed: 1, present: 0, at: 1)) {
            try COLMIRealTimeReading(bytes: [1])
        }
        #expect(throws: DecodingError.truncated("COLMI real-time reading.value", needed: 1, present: 0, at: 2)) {
            try COLMIRealTimeReading(bytes: [1, 0])
        }
        #expect(throws: DecodingError.truncated("COLMI battery.charging", needed: 1, present: 0, at: 1)) {
            try COLMIBattery(bytes: [64])
        }
    }

    /// GATTCodable payload types (and Punch control values): each prefix shorter than the encoding throws.
    @Test func payloadTruncationAtEveryFieldBoundary() throws {
        let samples: [any GATTCodable] = [
            COLMIBattery(levelPercent: 5, isCharging: true),
            COLMIRealTimeReading(type: .spo2, value: 97),
            COLMIHeartRateLogSettings(enabled: true, intervalMinutes: 30),
            COLMIGoals(steps: 1, calories: 2, distanceMeters: 3, sportMinutes: 4, sleepMinutes: 5),
            COLMICapabilities(flags1: 2),
            COLMILiveActivity(steps: 1, caloriesRaw: 2, distanceMeters: 3),
            COLMISportDetailRecord(date: COLMIDate(year: 2024, month: 10, day: 15), quarterHourIndex: 92, packetIndex: 0, packetCount: 1, caloriesRaw: 121, steps: 21, distanceMeters: 16),
            try COLMISetTime(COLMIDateTime(year: 2024, month: 1, day: 1)),
            COLMIHeartRateLogSettingsWrite(enabled: true, intervalMinutes: 60),
            COLMIHeartRateLogPacket.header(packetCount: 24, slotMinutes: 5),
            COLMIHeartRateLogPacket.first(timestamp: 0x66B6_AD80, bpm: Array(60...68)),
            COLMIHeartRateLogPacket.values(index: 2, bpm: Array(60...72)),
            COLMIHalfHourHistoryPacket.header(packetCount: 5, range: 30),
            COLMIHalfHourHistoryPacket.first(unknown: 0, values: Array(1...12)),
            COLMIHalfHourHistoryPacket.values(index: 3, values: Array(1...13)),
            COLMISportDetailPacket.header(recordCount: 5, newCalorieProtocol: true),
            COLMIUserPreferences(ageYears: 30, heightCentimeters: 170, weightKilograms: 60),
            COLMIDate(year: 2024, month: 8, day: 18),
            COLMISleepDay(daysAgo: 0, startMinute: 1343, endMinute: 542, periods: [COLMISleepPeriod(stage: .light, minutes: 54)]),
            COLMISpO2Day(daysAgo: 0, minimumPercentByHour: Array(repeating: 95, count: 24), maximumPercentByHour: Array(repeating: 99, count: 24)),
            COLMITemperatureDay(daysAgo: 0, rawByHalfHour: Array(repeating: 165, count: 48)),
            try COLMIBigDataFrame(dataID: 0x27, payload: [0]),
            PunchControlStatus.finished(stepsDone: 20),
            PunchControlCommand.countdownStart(seconds: 3),
        ]
        for sample in samples {
            let full = sample.bytes
            for n in 0..<full.count {
                #expect(throws: DecodingError.self, "\(type(of: sample)) cut to \(n)") {
                    _ = try type(of: sample).init(bytes: Array(full.prefix(n)))
                }
            }
        }
    }
}
