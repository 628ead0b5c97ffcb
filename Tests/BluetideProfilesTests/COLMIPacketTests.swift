import BluetideBase
import Testing
@testable import BluetideProfiles

@Suite struct COLMIPacketTests {
    @Test func checksumIsSumModulo256() throws {
        let packet = try COLMIPacket(opcode: 0x50, payload: [0x55, 0xAA])
        #expect(packet.checksum == 0x4F, "0x50 + 0x55 + 0xAA = 0x14F")
        #expect(packet.bytes == (try COLMIVector.v1("50 55 aa", checksum: 0x4F)))
        #expect(packet.bytes.count == 16)
        #expect(COLMIPacket.checksum(of: [0xFF, 0xFF, 0x02]) == 0x00)
    }

    @Test func decodeRejectsBadChecksumNamingExpectedAndFound() throws {
        var bytes = try COLMIVector.v1("03 40", checksum: 0x43)
        bytes[15] = 0x44
        #expect(throws: DecodingError.invalid("COLMI packet.checksum", expected: "0x43", found: "0x44", at: 15)) {
            try COLMIPacket(bytes: bytes)
        }
    }

    /// Halo-iOS computes the checksum mod 255; its packets must be rejected, and the error says why.
    @Test func mod255ChecksumBugIsRejectedAndFlagged() throws {
        let findDevice = try COLMIVector.v1("50 55 aa", checksum: 0x50)  // 0x14F mod 255 = 0x50
        do {
            _ = try COLMIPacket(bytes: findDevice)
            Issue.record("mod-255 checksum accepted")
        } catch {
            #expect(error.field == "COLMI packet.checksum")
            #expect(error.description.contains("expected 0x4f"))
            #expect(error.description.contains("mod 255"))
        }
        let hrLog = try COLMIVector.v1("15 80 ad b6 66", checksum: 0x60)  // 606 mod 255 = 96
        #expect(throws: DecodingError.self) { try COLMIRequest(bytes: hrLog) }
        #expect(COLMIPacket.buggyMod255Checksum(of: [0x15, 0x80, 0xAD, 0xB6, 0x66]) == 0x60)
    }

    @Test func payloadLongerThan14BytesIsAThrownError() {
        #expect(throws: COLMIEncodingError(field: "COLMI packet.payload", expected: "at most 14 bytes", found: "15 bytes")) {
            try COLMIPacket(opcode: 0x01, payload: Array(repeating: 1, count: 15))
        }
        #expect((try? COLMIPacket(opcode: 0x01, payload: Array(repeating: 1, count: 14))) != nil)
        #expect(throws: COLMIEncodingError.self) { try COLMIPhoneName(name: "a name far too long") }
        #expect(throws: COLMIEncodingError.self) { try COLMISetTime(COLMIDateTime(year: 1999, month: 1, day: 1)) }
        #expect(throws: COLMIEncodingError.self) { try COLMISetTime(COLMIDateTime(year: 2024, month: 13, day: 1)) }
    }

    @Test func truncationAtEveryLengthNamesThePacket() throws {
        let bytes = try COLMIVector.v1("03 40", checksum: 0x43)
        for n in 0..<16 {
            #expect(throws: DecodingError.truncated("COLMI packet", needed: 16, present: n, at: 0)) {
                try COLMIPacket(bytes: Array(bytes.prefix(n)))
            }
        }
        #expect(throws: DecodingError.self) { try COLMIPacket(exactly: bytes + [0]) }
    }

    @Test func payloadSubscriptIsSafeOutsideRange() throws {
        let p = try COLMIPacket(opcode: 3, payload: [64])
        #expect(p[1] == 64 && p[14] == 0 && p[0] == 0 && p[15] == 0 && p[-3] == 0)
    }

    @Test func uuidsMatchTheSpec() {
        #expect(COLMIUUID.service.uuidString == "6E40FFF0-B5A3-F393-E0A9-E50E24DCCA9E")
        #expect(COLMIUUID.write.uuidString == "6E400002-B5A3-F393-E0A9-E50E24DCCA9E")
        #expect(COLMIUUID.notify.uuidString == "6E400003-B5A3-F393-E0A9-E50E24DCCA9E")
        #expect(COLMIUUID.bigDataService.uuidString == "DE5BF728-D711-4E47-AF26-65E3012A5DC7")
        #expect(COLMIUUID.bigDataWrite.uuidString == "DE5BF72A-D711-4E47-AF26-65E3012A5DC7")
        #expect(COLMIUUID.bigDataNotify.uuidString == "DE5BF729-D711-4E47-AF26-65E3012A5DC7")
    }
}

/// §2.1 worked request packets: encode to the exact bytes, and decode back to the same request.
@Suite struct COLMIRequestVectorTests {
    static func check(_ request: COLMIRequest, _ prefix: String, _ checksum: UInt8) throws {
        let expected = try COLMIVector.v1(prefix, checksum: checksum)
        #expect(request.bytes == expected, "\(request.summary)")
        #expect(try COLMIRequest(bytes: expected) == request)
    }

    @Test func simpleRequests() throws {
        try Self.check(.battery, "03", 0x03)
        try Self.check(.realTimeStart(.heartRate, .start), "69 01 01", 0x6B)
        try Self.check(.realTimeStart(.heartRate, .continue), "69 01 03", 0x6D)
        try Self.check(.realTimeStop(.heartRate), "6a 01 00", 0x6B)
        try Self.check(.realTimeStart(.spo2, .start), "69 03 01", 0x6D)
        try Self.check(.readHeartRateLogSettings, "16 01", 0x17)
        try Self.check(.writeHeartRateLogSettings(COLMIHeartRateLogSettingsWrite(enabled: true, intervalMinutes: 60)), "16 02 01 3c", 0x55)
        try Self.check(.sportDetail(dayOffset: 0), "43 00 0f 00 5f 01", 0xB2)
        try Self.check(.findDevice, "50 55 aa", 0x4F)
        try Self.check(.powerOff, "08 01", 0x09)
        try Self.check(.factoryReset, "ff 66 66", 0xCB)
        try Self.check(.rawSensorStart(mode: 0), "a1 04", 0xA5)
        try Self.check(.rawSensorStart(mode: 4), "a1 04 04", 0xA9)
        try Self.check(.phoneName(try COLMIPhoneName(majorVersion: 2, minorVersion: 10, name: "GB")), "04 02 0a 47 42", 0x99)
    }

    @Test func setTimeVectorsInUTC() throws {
        let newYear: Int64 = 1_704_067_200  // 2024-01-01 00:00:00Z
        try Self.check(.setTime(try COLMISetTime(secondsSince1970: newYear)), "01 24 01 01 00 00 00 01", 0x28)
        // Local midnight at UTC-4 is 04:00Z; Bluetide keeps the ring on UTC.
        try Self.check(.setTime(try COLMISetTime(secondsSince1970: newYear + 4 * 3600)), "01 24 01 01 04 00 00 01", 0x2C)
        try Self.check(.setTime(try COLMISetTime(secondsSince1970: 1_741_964_966)), "01 25 03 14 15 09 26 01", 0x82)
        // Gadgetbridge's convention (local wall clock) with an explicit offset.
        let local = try COLMISetTime(secondsSince1970: newYear + 4 * 3600, utcOffsetSeconds: -4 * 3600)
        #expect(local.bytes == [0x24, 0x01, 0x01, 0x00, 0x00, 0x00, 0x01])
        let decoded = try COLMISetTime(bytes: [0x25, 0x03, 0x14, 0x15, 0x09, 0x26, 0x01])
        #expect(decoded.dateTime.secondsSince1970 == 1_741_964_966)
        #expect(decoded.dateTime.description == "2025-03-14 15:09:26")
    }

    @Test func heartRateLogRequestForADay() throws {
        try Self.check(.heartRateLog(dayStart: 0x66B6_AD80), "15 80 ad b6 66", 0x5E)
        #expect(COLMIRequest.heartRateLog(dayContaining: 1_723_248_000 + 13 * 3600) == .heartRateLog(dayStart: 1_723_248_000))
        #expect(COLMIRequest.heartRateLog(dayContaining: 1_723_248_000 + 3600, utcOffsetSeconds: -4 * 3600) == .heartRateLog(dayStart: 1_723_161_600))
    }

    @Test func otherRequestsRoundTrip() throws {
        let requests: [COLMIRequest] = [
            .camera(mode: 4), .readUserPreferences,
            .writeUserPreferences(COLMIUserPreferences(ageYears: 40, heightCentimeters: 180, weightKilograms: 75)),
            .blinkTwice, .continuousHeartRate(action: 3), .readGoals, .readAutoMeasurement(.spo2), .readAutoMeasurement(.temperature),
            .writeAutoMeasurement(.stress, enabled: true), .writeAutoMeasurement(.temperature, enabled: false),
            .stressHistory(dayIndex: 0), .hrvHistory(daysAgo: 3), .deviceSupport, .rawSensorStop,
            .writeHeartRateLogSettings(COLMIHeartRateLogSettingsWrite(enabled: false, intervalMinutes: 5, tooLowBPM: 40, tooHighBPM: 180, alarmSwitch: 1)),
        ]
        for request in requests {
            #expect(try COLMIRequest(bytes: request.bytes) == request, "\(request.summary)")
        }
        #expect(COLMIRequest.readAutoMeasurement(.temperature).bytes.prefix(3) == [0x3A, 0x03, 0x01])
        #expect(COLMIRequest.writeAutoMeasurement(.temperature, enabled: true).bytes.prefix(4) == [0x3A, 0x03, 0x02, 0x01])
        #expect(COLMIRequest.continuousHeartRate(action: 3).bytes.prefix(2) == [0x1E, 0x03])
        #expect(COLMIRequest.hrvHistory(daysAgo: 3).bytes.prefix(5) == [0x39, 0x03, 0, 0, 0])
    }

    @Test func unknownRequestsStayRaw() throws {
        let packet = try COLMIPacket(opcode: 0x7E, payload: [1, 2, 3])
        #expect(COLMIRequest(packet: packet) == .other(packet))
        let resetTypo = try COLMIPacket(opcode: 0xFF, payload: [0x66, 0x65])
        #expect(COLMIRequest(packet: resetTypo) == .other(resetTypo), "only the exact reset bytes mean factory reset")
    }
}


/// Test helpers for COLMI vectors written as in the spec: the leading bytes, zero padding, then the
/// checksum the spec gives (so the spec's checksum itself is checked by decoding).
enum COLMIVector {
    /// `prefix` bytes, zero padded to 15, then `checksum`.
    static func v1(_ prefix: String, checksum: UInt8) throws -> [UInt8] {
        var bytes = try Hex.parse(prefix)
        bytes += Array(repeating: 0, count: max(0, 15 - bytes.count))
        return bytes + [checksum]
    }

    /// A full 16-byte hex vector.
    static func full(_ hex: String) throws -> [UInt8] { try Hex.parse(hex) }

    /// A valid packet with this opcode and payload (checksum computed).
    static func packet(_ opcode: UInt8, _ payload: [UInt8]) throws -> COLMIPacket {
        try COLMIPacket(opcode: opcode, payload: payload)
    }
}
