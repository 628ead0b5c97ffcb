import BluetideBase
import Testing
@testable import BluetideProfiles

@Suite struct CSCCalculatorTests {
    func measurement(_ hex: String) -> CSCMeasurement {
        (try? CSCMeasurement(bytes: fitnessHex(hex))) ?? CSCMeasurement()
    }

    func wheel(_ revs: UInt32, _ ticks: UInt16) -> CSCMeasurement {
        CSCMeasurement(wheel: WheelRevolutionData(cumulativeRevolutions: revs, lastEventTimeTicks: ticks))
    }

    func crank(_ revs: UInt16, _ ticks: UInt16) -> CSCMeasurement {
        CSCMeasurement(crank: CrankRevolutionData(cumulativeRevolutions: revs, lastEventTimeTicks: ticks))
    }

    @Test func aToBSpeedAndDistance() throws {
        var calc = CSCCalculator(wheelCircumferenceMetres: 2.105)
        let first = calc.update(measurement("03 A2 5E 01 00 6D 0E 4B 63 96 7F"), at: 0)
        #expect(first.wheelStatus == .baseline)
        #expect(first.crankStatus == .baseline)
        #expect(first.speedKilometresPerHour == nil)
        #expect(first.cadenceRPM == nil)
        #expect(first.distanceMetres == 0)

        let second = calc.update(measurement("03 A4 5E 01 00 D7 12 4B 63 96 7F"), at: 1.1)
        let expectedMPS = 2 * 2.105 / (1130.0 / 1024)
        #expect(second.wheelStatus == .measured)
        #expect(abs(try #require(second.speedMetresPerSecond) - expectedMPS) < 1e-12)
        #expect(abs(try #require(second.speedKilometresPerHour) - expectedMPS * 3.6) < 1e-12)
        #expect(FitnessFormat.fixed(second.speedMetresPerSecond ?? 0, 3) == "3.815")
        #expect(FitnessFormat.fixed(second.speedKilometresPerHour ?? 0, 2) == "13.73")
        #expect(abs(second.distanceMetres - 4.21) < 1e-12)
        // Crank block unchanged: stale, no rate known yet, so nothing to hold.
        #expect(second.crankStatus == .heldStale)
        #expect(second.cadenceRPM == nil)
        #expect(second.summary == "13.73 km/h, 4.21 m")
    }

    @Test func staleHoldsThenZeroAfterTimeout() throws {
        var calc = CSCCalculator(wheelCircumferenceMetres: 2.105)
        let a = measurement("03 A2 5E 01 00 6D 0E 4B 63 96 7F"), b = measurement("03 A4 5E 01 00 D7 12 4B 63 96 7F")
        _ = calc.update(a, at: 0)
        let measured = calc.update(b, at: 1.1)
        // Same packet again 1.9 s later: speed held, baseline kept.
        let held = calc.update(b, at: 3.0)
        #expect(held.wheelStatus == .heldStale)
        #expect(held.speedKilometresPerHour == measured.speedKilometresPerHour)
        #expect(held.distanceMetres == measured.distanceMetres)
        #expect(held.crankStatus == .heldStale)
        #expect(held.cadenceRPM == nil)
        // 3.1 s after the last wheel event, 4.2 s after the crank baseline: both report 0.
        let stopped = calc.update(b, at: 4.2)
        #expect(stopped.wheelStatus == .stoppedStale)
        #expect(stopped.speedKilometresPerHour == 0)
        #expect(stopped.crankStatus == .stoppedStale)
        #expect(stopped.cadenceRPM == 0)
        #expect(stopped.distanceMetres == measured.distanceMetres)
        // The baseline was kept: the next real event divides by the true interval (B → +1130 ticks).
        let next = calc.update(wheel(89766, 4823 &+ 1130), at: 5.0)
        #expect(next.wheelStatus == .measured)
        #expect(abs((next.speedMetresPerSecond ?? 0) - 2 * 2.105 / (1130.0 / 1024)) < 1e-12)
    }

    @Test func d1ToD2CrankRolloverGives90RPM() throws {
        var calc = CSCCalculator()
        _ = calc.update(measurement("02 FE FF 00 FC"), at: 0)
        let m = calc.update(measurement("02 01 00 00 04"), at: 2)
        #expect(m.crankStatus == .measured)
        #expect(m.cadenceRPM == 90)
        #expect(m.speedKilometresPerHour == nil)
        #expect(m.wheelStatus == nil)
        #expect(m.summary == "90 rpm, 0.00 m")
        // Held at 3 s, 0 once more than 3 s have passed since the event.
        #expect(calc.update(measurement("02 01 00 00 04"), at: 4.9).cadenceRPM == 90)
        #expect(calc.update(measurement("02 01 00 00 04"), at: 5.1).cadenceRPM == 0)
    }

    @Test func e1ToE2WheelRollover() throws {
        var calc = CSCCalculator(wheelCircumferenceMetres: 2.096)
        _ = calc.update(measurement("01 FF FF FF FF 00 FC"), at: 0)
        let m = calc.update(measurement("01 02 00 00 00 00 04"), at: 2)
        #expect(m.wheelStatus == .measured)
        #expect(abs((m.speedMetresPerSecond ?? 0) - 3.144) < 1e-12)
        #expect(abs((m.speedKilometresPerHour ?? 0) - 11.3184) < 1e-9)
        #expect(FitnessFormat.fixed(m.speedKilometresPerHour ?? 0, 2) == "11.32")
        #expect(abs(m.distanceMetres - 6.288) < 1e-12)
    }

    @Test func slowPedallingExtendsTheStaleTimeout() {
        var calc = CSCCalculator()
        _ = calc.update(crank(0, 0), at: 0)
        #expect(calc.update(crank(1, 2048), at: 2).cadenceRPM == 30)
        // Timeout is max(3 s, 2.5 × 2 s) = 5 s.
        #expect(calc.update(crank(1, 2048), at: 6.5).cadenceRPM == 30)
        #expect(calc.update(crank(1, 2048), at: 7.5).cadenceRPM == 0)
    }

    @Test func revolutionsWithoutTimeAreSkipped() {
        var calc = CSCCalculator()
        _ = calc.update(wheel(100, 1000), at: 0)
        let skipped = calc.update(wheel(101, 1000), at: 1)
        #expect(skipped.wheelStatus == .skippedInconsistent)
        #expect(skipped.speedKilometresPerHour == nil)
        #expect(skipped.distanceMetres == 0)
        // Re-baselined on the skipped sample: 2 revolutions in 1 s from there.
        let next = calc.update(wheel(103, 2024), at: 2)
        #expect(next.wheelStatus == .measured)
        #expect(next.speedMetresPerSecond == 2 * 2.105)
        #expect(next.distanceMetres == 2 * 2.105)
    }

    @Test func timeWithoutRevolutionsIsRateZero() {
        var calc = CSCCalculator()
        _ = calc.update(crank(10, 1000), at: 0)
        _ = calc.update(crank(11, 1000 + 683), at: 0.7)
        let m = calc.update(crank(11, 3000), at: 1.4)
        #expect(m.crankStatus == .noRevolutions)
        #expect(m.cadenceRPM == 0)
        // Time re-baselined: the next revolution is measured from tick 3000.
        let next = calc.update(crank(12, 3000 + 1024), at: 2.4)
        #expect(next.cadenceRPM == 60)
    }

    @Test func longGapRebaselines() {
        var calc = CSCCalculator()
        _ = calc.update(wheel(100, 0), at: 0)
        _ = calc.update(wheel(102, 1024), at: 1)
        let gap = calc.update(wheel(110, 5000), at: 62)
        #expect(gap.wheelStatus == .rebaselinedAfterGap)
        #expect(gap.speedKilometresPerHour == nil)
        #expect(abs(gap.distanceMetres - 2 * 2.105) < 1e-12, "the gap adds no distance")
        let next = calc.update(wheel(112, 5000 + 1024), at: 63)
        #expect(next.wheelStatus == .measured)
        #expect(next.speedMetresPerSecond == 2 * 2.105)
    }

    @Test func staleForLongerThanTheGapStillReportsZero() {
        var calc = CSCCalculator()
        _ = calc.update(crank(1, 0), at: 0)
        _ = calc.update(crank(2, 1024), at: 1)
        #expect(calc.update(crank(2, 1024), at: 90).cadenceRPM == 0)
    }

    @Test func implausibleJumpIsDroppedAndRebaselined() throws {
        var calc = CSCCalculator(wheelCircumferenceMetres: 2.105)
        _ = calc.update(measurement("03 A2 5E 01 00 6D 0E 4B 63 96 7F"), at: 0)
        let good = calc.update(measurement("03 A4 5E 01 00 D7 12 4B 63 96 7F"), at: 1.1)
        // Set Cumulative Value 0: the counter goes backwards, a huge modular delta.
        let reset = calc.update(wheel(0, 4823 &+ 1024), at: 2.1)
        #expect(reset.wheelStatus == .droppedImplausible)
        #expect(reset.speedKilometresPerHour == good.speedKilometresPerHour, "previous rate held")
        #expect(reset.distanceMetres == good.distanceMetres, "no 577 million km")
        let after = calc.update(wheel(2, 4823 &+ 1024 &+ 1130), at: 3.2)
        #expect(after.wheelStatus == .measured)
        #expect(abs((after.speedKilometresPerHour ?? 0) - (good.speedKilometresPerHour ?? 0)) < 1e-12)
        #expect(abs(after.distanceMetres - 4 * 2.105) < 1e-12)
        // Just under and over the 120 km/h limit: 33.33 m/s at 2.105 m is 15.8 rev/s.
        var limit = CSCCalculator(wheelCircumferenceMetres: 2.105)
        _ = limit.update(wheel(0, 0), at: 0)
        #expect(limit.update(wheel(15, 1024), at: 1).wheelStatus == .measured)
        #expect(limit.update(wheel(31, 2048), at: 2).wheelStatus == .droppedImplausible)
    }

    @Test func implausibleCadenceIsDropped() {
        var calc = CSCCalculator()
        _ = calc.update(crank(0, 0), at: 0)
        let m = calc.update(crank(5, 1024), at: 1)  // 300 rpm
        #expect(m.crankStatus == .droppedImplausible)
        #expect(m.cadenceRPM == nil)
        #expect(calc.update(crank(6, 2048), at: 2).cadenceRPM == 60)
    }

    @Test func eventTimeRolloverIs65536NotSixtyFiveFiveThreeFive() {
        var calc = CSCCalculator()
        _ = calc.update(crank(100, 65000), at: 0)
        // 65000 → 536 is 1072 ticks; an off-by-one (65535) would give 1071.
        let m = calc.update(crank(101, 536), at: 1)
        #expect(m.cadenceRPM == 60.0 * 1024 / 1072)
    }
}
