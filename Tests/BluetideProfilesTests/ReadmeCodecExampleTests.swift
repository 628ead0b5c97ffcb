import Testing
import BluetideBase
import BluetideProfiles

/// The codec example shown in README.md, kept compiling and true by running it here.
/// If you change one, change the other.
@Suite struct ReadmeCodecExampleTests {
    @Test func readmeCodecExample() throws {
        // --- README example begins ---
        // A Heart Rate Measurement notification, as any Bluetooth API delivers it.
        let heartRate = try HeartRateMeasurement(bytes: [0x16, 0x4E, 0x1C, 0x03, 0xF4, 0x02])
        print(heartRate.beatsPerMinute, heartRate.rrIntervalSeconds)   // 78 [0.77734375, 0.73828125]

        // CSC packets become speed and distance; rollovers and stale repeats are handled.
        var cycling = CSCCalculator(wheelCircumferenceMetres: 2.105)
        for (time, hex) in [(0.0, "03A25E01006D0E4B63967F"), (1.1, "03A45E0100D7124B63967F")] {
            let packet = try CSCMeasurement(bytes: try Hex.parse(hex))
            let motion = cycling.update(packet, at: time)
            print(motion.speedKilometresPerHour ?? 0, motion.distanceMetres)   // … 13.73 km/h, 4.21 m
        }

        // Truncated input never traps: the error names the field and the bytes.
        do {
            _ = try CSCMeasurement(bytes: [0x03, 0xA2, 0x5E])
        } catch {
            print(error)   // CSC Measurement.cumulative wheel revolutions at byte 1: needs 4 bytes, 2 present
        }
        // --- README example ends ---

        #expect(heartRate.beatsPerMinute == 78)
        #expect(abs((cycling.update(try CSCMeasurement(bytes: try Hex.parse("03A45E0100D7124B63967F")), at: 2).distanceMetres) - 4.21) < 0.001)
        #expect(throws: DecodingError.truncated("CSC Measurement.cumulative wheel revolutions", needed: 4, present: 2, at: 1)) {
            try CSCMeasurement(bytes: [0x03, 0xA2, 0x5E])
        }
    }
}
