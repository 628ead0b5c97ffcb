import BluetideBase
import Testing
@testable import BluetideProfiles

/// Byte vectors of the settings commands `ring settings` writes. Each packet's layout is named
/// with its public source (docs/specs/colmi-r02.md §6.6, §6.10, §6.11, §6.21); checksums
/// computed by hand (sum of bytes 0...14 mod 256).
@Suite struct COLMISettingsVectorTests {
    @Test func goalsWriteUsesTheReadReplysLayoutWithAction02() throws {
        // colmi-docs settings.md "Health Targets": read and write share one layout, uint24 LE
        // steps, calories, distance, then u16 LE sport and sleep minutes.
        let goals = COLMIGoals(action: 2, steps: 8000, calories: 300, distanceMeters: 6000, sportMinutes: 60, sleepMinutes: 480)
        try COLMIRequestVectorTests.check(.writeGoals(goals), "21 02 40 1f 00 2c 01 00 70 17 00 3c 00 e0 01", 0x53)
        try COLMIRequestVectorTests.check(
            .writeGoals(COLMIGoals(action: 2, steps: 10000, calories: 500, distanceMeters: 5000, sportMinutes: 45, sleepMinutes: 450)),
            "21 02 10 27 00 f4 01 00 88 13 00 2d 00 c2 01", 0xDA)
        try COLMIRequestVectorTests.check(.readGoals, "21 01", 0x22)
        // The action byte is always written as 02, whatever the value carries.
        #expect(COLMIRequest.writeGoals(COLMIGoals(steps: 8000, calories: 300, distanceMeters: 6000, sportMinutes: 60, sleepMinutes: 480)).bytes
            == COLMIRequest.writeGoals(goals).bytes)
        // The read reply decodes to the same fields.
        let reply = try COLMIResponse(bytes: try COLMIVector.v1("21 01 40 1f 00 2c 01 00 70 17 00 3c 00 e0 01", checksum: 0x52))
        #expect(reply == .goals(COLMIGoals(action: 1, steps: 8000, calories: 300, distanceMeters: 6000, sportMinutes: 60, sleepMinutes: 480)))
    }

    @Test func userProfileWriteAsGadgetbridgeSendsIt() throws {
        // Gadgetbridge ColmiR0xDeviceSupport.setUserPreferences: 24 h, metric, sex 2 (other),
        // age, height cm, weight kg, then systolic, diastolic, HR warning 0.
        let profile = COLMIUserPreferences(timeFormat: 0, units: 0, gender: 2, ageYears: 35, heightCentimeters: 175, weightKilograms: 72)
        try COLMIRequestVectorTests.check(.writeUserPreferences(profile), "0a 02 00 00 02 23 af 48 00 00 00", 0x28)
        try COLMIRequestVectorTests.check(.readUserPreferences, "0a 01", 0x0B)
        let twelveHourImperial = COLMIUserPreferences(
            timeFormat: 1, units: 1, gender: 1, ageYears: 40, heightCentimeters: 160, weightKilograms: 55, systolicMmHg: 120,
            diastolicMmHg: 80, heartRateWarningBPM: 160)
        #expect(COLMIRequest.writeUserPreferences(twelveHourImperial).bytes.prefix(11) == [0x0A, 0x02, 1, 1, 1, 40, 160, 55, 120, 80, 160])
    }

    @Test func monitoringSwitches() throws {
        // Gadgetbridge (yawell ring driver): `38 02 <0|1>` HRV, `3A 03 02 <0|1>` temperature.
        try COLMIRequestVectorTests.check(.writeAutoMeasurement(.hrv, enabled: true), "38 02 01", 0x3B)
        try COLMIRequestVectorTests.check(.writeAutoMeasurement(.temperature, enabled: true), "3a 03 02 01", 0x40)
        try COLMIRequestVectorTests.check(.readAutoMeasurement(.temperature), "3a 03 01", 0x3E)
    }

    @Test func displayWriteAsTheYawellDriverSendsIt() throws {
        // `05 04 <on 1|off 2> <left 1|right 2> <brightness 1-5> 05 <all day 2|scheduled 1> hh mm hh mm`.
        let display = COLMIDisplaySettings(enabled: true, leftHand: true, brightness: 3, allDay: false, fromMinuteOfDay: 7 * 60, toMinuteOfDay: 22 * 60)
        try COLMIRequestVectorTests.check(.writeDisplay(display), "05 04 01 01 03 05 01 07 00 16 00", 0x31)
        let off = COLMIDisplaySettings(enabled: false, leftHand: false, brightness: 5, allDay: true, fromMinuteOfDay: 6 * 60 + 30, toMinuteOfDay: 23 * 60 + 59)
        #expect(COLMIRequest.writeDisplay(off).bytes.prefix(12) == [0x05, 0x04, 2, 2, 5, 5, 2, 6, 30, 23, 59, 0])
        #expect(try COLMIRequest(bytes: COLMIRequest.writeDisplay(off).bytes) == .writeDisplay(off))
        // Another 05 packet (colmi-docs' "palm screen" read) is kept as it is.
        let palm = try COLMIVector.v1("05 01", checksum: 0x06)
        #expect(try COLMIRequest(bytes: palm) == .other(try COLMIPacket(bytes: palm)))
    }
}
