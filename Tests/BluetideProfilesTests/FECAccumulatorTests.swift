import BluetideBase
import Testing

@testable import BluetideProfiles

@Suite struct FECAccumulatorTests {
    func general(_ elapsed: UInt8, _ distance: UInt8, speed: UInt16 = 8000, state: FEState = .inUse, distanceEnabled: Bool = true) -> FECPage {
        .generalData(
            FECGeneralData(
                elapsedTimeQuarterSeconds: elapsed, distanceTraveledMeters: distance, speedMillimetersPerSecond: speed,
                distanceTraveledEnabled: distanceEnabled, state: state))
    }

    func trainer(_ events: UInt8, _ accumulated: UInt16, power: UInt16 = 250) -> FECPage {
        .trainerData(FECTrainerData(eventCount: events, cadenceRpm: 90, accumulatedPowerWatts: accumulated, instantaneousPowerWatts: power, state: .inUse))
    }

    @Test func elapsedAndDistanceRollOverWithModularDeltas() {
        var acc = FECAccumulator()
        acc.add(general(0xFC, 0xFA), at: 0)
        #expect(acc.elapsedSeconds == 0 && acc.distanceMeters == 0, "first page is the baseline")
        let derived = acc.add(general(0x03, 0x05), at: 1.75)
        #expect(derived.elapsedSeconds == 1.75)
        #expect(derived.distanceMeters == 11)
        #expect(derived.speedKmh == 28.8)
    }

    @Test func longSessionAcrossManyWraps() {
        var acc = FECAccumulator()
        // 4 pages a second for 300 s at 8 m/s: elapsed wraps every 64 s, distance every 32 s.
        for tick in 0...1200 {
            let seconds = Double(tick) / 4
            let meters = Int(seconds * 8)
            acc.add(general(UInt8(truncatingIfNeeded: tick), UInt8(truncatingIfNeeded: meters)), at: seconds)
        }
        #expect(acc.elapsedSeconds == 300)
        #expect(acc.distanceMeters == 2400)
    }

    @Test func gapLongerThanAWrapUsesThePassedInTime() {
        var acc = FECAccumulator()
        acc.add(general(10, 0, speed: 5000), at: 100)
        // 130 s later the counter shows +2 s (two whole wraps hidden) and +138 m (650 m travelled at 5 m/s: two hidden wraps).
        acc.add(general(18, 138, speed: 5000), at: 230)
        #expect(acc.elapsedSeconds == 130)
        #expect(acc.distanceMeters == 650)
    }

    @Test func gapWhileNotInUseDoesNotInventTime() {
        var acc = FECAccumulator()
        acc.add(general(10, 0, state: .ready), at: 0)
        acc.add(general(12, 0, state: .ready), at: 200)
        #expect(acc.elapsedSeconds == 0.5)
    }

    @Test func distanceOnlyCountsWhenEnabledAndTimeBackwardsRebaselines() {
        var acc = FECAccumulator()
        acc.add(general(0, 0, distanceEnabled: false), at: 0)
        acc.add(general(4, 10, distanceEnabled: false), at: 1)
        #expect(acc.distanceMeters == 0 && acc.elapsedSeconds == 1)
        acc.add(general(8, 20), at: 0.5)  // time went backwards: new baseline, nothing added
        #expect(acc.elapsedSeconds == 1)
        acc.add(general(12, 30), at: 1.5)
        #expect(acc.elapsedSeconds == 2 && acc.distanceMeters == 10)
    }

    @Test func specPage25PairAveragesTo278W() throws {
        var acc = FECAccumulator()
        acc.add(try FECFrame(exactly: trainerHex("A4 09 4E 05 19 2A 5A 10 27 FA 40 30 32")), at: 0)
        #expect(acc.averagePowerWatts == nil)
        let derived = acc.add(try FECFrame(exactly: trainerHex("A4 09 4E 05 19 2B 5A 26 28 2C 01 30 9D")), at: 0.25)
        #expect(derived.intervalAveragePowerWatts == 278)
        #expect(derived.averagePowerWatts == 278)
        #expect(derived.instantaneousPowerWatts == 300 && derived.cadenceRpm == 90)
    }

    @Test func accumulatedPowerAndEventCountWrap() {
        var acc = FECAccumulator()
        acc.add(trainer(255, 65500), at: 0)
        acc.add(trainer(1, 200), at: 0.5)  // 2 events, 236 W accumulated
        #expect(acc.intervalAveragePowerWatts == 118)
        acc.add(trainer(3, 800), at: 1.0)  // 2 events, 600 W
        #expect(acc.powerEventCount == 4 && acc.powerSumWatts == 836)
        #expect(acc.averagePowerWatts == 209)
    }

    @Test func repeatedPagesGlitchesAndLongGapsAreIgnored() {
        var acc = FECAccumulator()
        acc.add(trainer(10, 1000), at: 0)
        acc.add(trainer(10, 1000), at: 0.25)  // repeated: no events
        #expect(acc.averagePowerWatts == nil)
        acc.add(trainer(11, 1200), at: 0.5)
        #expect(acc.averagePowerWatts == 200)
        acc.add(trainer(12, 60000), at: 0.75)  // 58800 W in one event: a glitch
        #expect(acc.averagePowerWatts == 200 && acc.powerEventCount == 1)
        acc.add(trainer(13, 60300), at: 1.0)  // from the glitch page as the new baseline
        #expect(acc.averagePowerWatts == 250)
        acc.add(trainer(20, 61000), at: 100)  // 99 s later: the event count may have wrapped unseen
        #expect(acc.powerEventCount == 2)
        acc.add(trainer(21, 61100), at: 100.25)
        #expect(acc.powerEventCount == 3 && acc.powerSumWatts == 600)
    }

    @Test func torqueMaths() throws {
        var acc = FECAccumulator(wheelCircumferenceMeters: 2.0)
        acc.add(.trainerTorqueData(FECTrainerTorqueData(eventCount: 250, wheelTicks: 0, accumulatedWheelPeriod2048ths: 63488, accumulatedTorque32ndsNewtonMeter: 65000, state: .inUse)), at: 0)
        // 4 events over 4096/2048 = 2 s (period wraps), 1280/32 = 40 N·m over 4 events = 10 N·m.
        let d = acc.add(
            .trainerTorqueData(
                FECTrainerTorqueData(
                    eventCount: 254, wheelTicks: 4, accumulatedWheelPeriod2048ths: 63488 &+ 4096,
                    accumulatedTorque32ndsNewtonMeter: 65000 &+ 1280, state: .inUse)), at: 2)
        let omega = 2 * Double.pi * 4 / 2
        #expect(abs((acc.angularVelocityRadiansPerSecond ?? 0) - omega) < 1e-9)
        #expect(abs((d.torqueNewtonMeters ?? 0) - 10) < 1e-9)
        #expect(abs((d.torquePowerWatts ?? 0) - 10 * omega) < 1e-9)
        #expect(abs((d.wheelSpeedKmh ?? 0) - 2.0 * 4 / 2 * 3.6) < 1e-9)
    }

    @Test func statefulCatalogDecoderDerivesAcrossPackets() throws {
        let entry = try #require(ProfileCatalog.named("fec"))
        #expect(entry.isStateful && entry.characteristic == .tacxFECNotify)
        var decoder = entry.makeDecoder(ProfileOptions())
        _ = try decoder.decode(trainerHex("A4 09 4E 05 19 2A 5A 10 27 FA 40 30 32"), at: 0)
        let packet = try decoder.decode(trainerHex("A4 09 4E 05 19 2B 5A 26 28 2C 01 30 9D"), at: 0.25)
        let derived = try #require(packet.derived as? FECDerivedValues)
        #expect(derived.averagePowerWatts == 278)
        #expect(packet.summary.hasSuffix("| elapsed 0.00 s, distance 0 m, avg 278.0 W"))
        #expect(packet.summary.hasPrefix("page 25 trainer: event 43"))
    }
}
