import BluetideBase
import Foundation
import Testing
@testable import BluetideProfiles

@Suite struct HeartRateTests {
    @Test func uint8HeartRateNoContactFeature() throws {
        let m = try HeartRateMeasurement(exactly: fitnessHex("00 48"))
        #expect(m.beatsPerMinute == 72)
        #expect(!m.usesUInt16Value)
        #expect(m.sensorContact == .notSupported)
        #expect(m.energyExpendedKilojoules == nil)
        #expect(m.rrIntervals1024 == nil)
        #expect(m.bytes == fitnessHex("00 48"))
        #expect(m.summary == "72 bpm")
    }

    @Test func contactAndTwoRRIntervals() throws {
        let bytes = fitnessHex("16 4E 1C 03 F4 02")
        let m = try HeartRateMeasurement(exactly: bytes)
        #expect(m.beatsPerMinute == 78)
        #expect(m.sensorContact == .detected)
        #expect(m.rrIntervals1024 == [796, 756])
        #expect(abs(m.rrIntervalSeconds[0] - 0.7773) < 0.0001)
        #expect(abs(m.rrIntervalSeconds[1] - 0.7383) < 0.0001)
        #expect(m.bytes == bytes)
        #expect(m.summary == "78 bpm, contact detected, RR 0.777 s 0.738 s")
    }

    @Test func uint16HeartRateEnergyAndRR() throws {
        let bytes = fitnessHex("19 96 00 10 27 9A 01")
        let m = try HeartRateMeasurement(exactly: bytes)
        #expect(m.beatsPerMinute == 150)
        #expect(m.usesUInt16Value)
        #expect(m.energyExpendedKilojoules == 10000)
        #expect(m.rrIntervals1024 == [410])
        #expect(abs(m.rrIntervalSeconds[0] - 0.4004) < 0.0001)
        #expect(m.sensorContact == .notSupported)
        #expect(m.bytes == bytes)
        #expect(m.summary == "150 bpm, energy 10000 kJ, RR 0.400 s")
    }

    @Test func contactStatusUsesBothBits() throws {
        let absent = try HeartRateMeasurement(exactly: fitnessHex("04 3C"))
        #expect(absent.beatsPerMinute == 60)
        #expect(absent.sensorContact == .notDetected, "value 2: supported but not detected")
        #expect(absent.bytes == fitnessHex("04 3C"))
        let present = try HeartRateMeasurement(exactly: fitnessHex("06 3C"))
        #expect(present.sensorContact == .detected)
        #expect(present.bytes == fitnessHex("06 3C"))
        #expect(try HeartRateMeasurement(bytes: fitnessHex("02 3C")).sensorContact == .notSupported)
    }

    @Test func oddTrailingByteIgnored() throws {
        let m = try HeartRateMeasurement(bytes: fitnessHex("10 48 1C 03 F4"))
        #expect(m.rrIntervals1024 == [796])
        let none = try HeartRateMeasurement(bytes: fitnessHex("10 48"))
        #expect(none.rrIntervals1024 == [])
        #expect(none.bytes == fitnessHex("10 48"))
    }

    @Test func encodePicksFlagsFromFields() {
        let m = HeartRateMeasurement(beatsPerMinute: 300, sensorContact: .detected, energyExpendedKilojoules: 5, rrIntervals1024: [1024])
        #expect(m.bytes == fitnessHex("1F 2C 01 05 00 00 04"))
        #expect(HeartRateMeasurement(beatsPerMinute: 72).bytes == fitnessHex("00 48"))
    }

    @Test func truncationNamesTheField() {
        fitnessExpectTruncations(HeartRateMeasurement.self, fitnessHex("19 96 00 10 27 9A 01"), fields: [
            (0, "Heart Rate Measurement.flags"),
            (1, "Heart Rate Measurement.heart rate (uint16)"),
            (2, "Heart Rate Measurement.heart rate (uint16)"),
            (3, "Heart Rate Measurement.energy expended"),
            (4, "Heart Rate Measurement.energy expended"),
        ])
        fitnessExpectTruncations(HeartRateMeasurement.self, fitnessHex("00 48"), fields: [(1, "Heart Rate Measurement.heart rate (uint8)")])
    }

    @Test func saturatedEnergy() throws {
        let m = try HeartRateMeasurement(exactly: fitnessHex("08 48 FF FF"))
        #expect(m.isEnergyExpendedSaturated)
        #expect(m.summary == "72 bpm, energy 65535 kJ (saturated)")
        #expect(!(try HeartRateMeasurement(exactly: fitnessHex("08 48 FE FF"))).isEnergyExpendedSaturated)
    }

    @Test func jsonHasUnits() throws {
        let m = try HeartRateMeasurement(bytes: fitnessHex("16 4E 1C 03 F4 02"))
        let json = String(decoding: try JSONEncoder().encode(m), as: UTF8.self)
        #expect(json.contains("\"beatsPerMinute\":78"))
        #expect(json.contains("\"rrIntervalSeconds\""))
        #expect(json.contains("\"sensorContact\":\"detected\""))
    }

    @Test func bodySensorLocation() throws {
        #expect(try BodySensorLocation(exactly: [0x01]) == .chest)
        #expect(try BodySensorLocation(exactly: [0x05]).description == "ear lobe")
        #expect(try BodySensorLocation(exactly: [0x09]) == .reserved(9))
        for raw in UInt8.min...UInt8.max { #expect(BodySensorLocation(rawValue: raw).rawValue == raw) }
        #expect(throws: DecodingError.truncated("Body Sensor Location", needed: 1, present: 0, at: 0)) {
            try BodySensorLocation(bytes: [])
        }
    }

    @Test func controlPoint() throws {
        #expect(try HeartRateControlPoint(exactly: [0x01]) == .resetEnergyExpended)
        #expect(HeartRateControlPoint.resetEnergyExpended.bytes == [0x01])
        #expect(try HeartRateControlPoint(exactly: [0x02]) == .unsupported(2))
        #expect(HeartRateControlPoint.controlPointNotSupportedError == 0x80)
    }
}
