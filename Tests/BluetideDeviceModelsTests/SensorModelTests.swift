import BluetideBase
import BluetideProfiles
import Testing

@testable import BluetideDeviceModels

@Suite struct CSCModelTests {
    @Test func speedAndCadenceMatchTheRiderWithinOnePercent() throws {
        var options = EmulatorOptions()
        options.speedKilometresPerHour = 30
        options.cadenceRPM = 90
        var model = CSCModel(seed: 1, options: options)
        // An irregular tick step: timing must follow real revolutions, not the loop.
        let outputs = values(drive(&model, to: 200, step: 0.37), .cscMeasurement)
        #expect(outputs.count > 150)
        var calculator = CSCCalculator(wheelCircumferenceMetres: 2.105)
        var speeds: [Double] = [], cadences: [Double] = []
        for (time, bytes) in outputs {
            let motion = calculator.update(try CSCMeasurement(exactly: bytes), at: time)
            if let v = motion.speedKilometresPerHour { speeds.append(v) }
            if let c = motion.cadenceRPM { cadences.append(c) }
        }
        #expect(speeds.count > 100)
        #expect(cadences.count > 100)
        for v in speeds { #expect(abs(v - 30) / 30 < 0.01, "speed \(v)") }
        for c in cadences { #expect(abs(c - 90) / 90 < 0.01, "cadence \(c)") }
        // Distance agrees with 200 s at 30 km/h (within a few revolutions).
        #expect(abs(calculator.distanceMetres - 30 / 3.6 * 199) < 25)
    }

    @Test func eventTimeIsTheLastRevolutionAndWrapsAfter64Seconds() throws {
        var model = CSCModel(seed: 1)
        let outputs = values(drive(&model, to: 140, step: 0.1), .cscMeasurement)
        var previous: UInt16?
        var wraps = 0
        let wheelPeriod = 2.105 / (30 / 3.6)
        for (time, bytes) in outputs {
            let m = try CSCMeasurement(exactly: bytes)
            let wheel = try #require(m.wheel)
            // The event happened at most one revolution before the notification.
            let nowTicks = UInt16(truncatingIfNeeded: Int(time * 1024))
            let age = Double(nowTicks &- wheel.lastEventTimeTicks) / 1024
            #expect(age >= 0 && age <= wheelPeriod + 0.11, "age \(age) at \(time)")
            if let previous, wheel.lastEventTimeTicks < previous { wraps += 1 }
            previous = wheel.lastEventTimeTicks
        }
        #expect(wraps == 2)
    }

    @Test func setCumulativeValueIsIndicatedAndResetsTheCount() throws {
        var model = CSCModel(seed: 1)
        _ = drive(&model, to: 10, step: 0.1)
        let outcome = model.write(.scControlPoint, SCControlPointRequest.setCumulativeValue(0).bytes, now: 10)
        #expect(outcome.outputs == [EmulatedOutput(.scControlPoint, [0x10, 0x01, 0x01], .indicate)])
        #expect(model.measurement.wheel?.cumulativeRevolutions == 0)
        let unsupported = model.write(.scControlPoint, [0x02], now: 10)
        #expect(unsupported.outputs.first?.bytes == [0x10, 0x02, 0x02])
        let truncated = model.write(.scControlPoint, [0x01, 0x00], now: 10)
        #expect(truncated.outputs.first?.bytes == [0x10, 0x01, 0x03])
        do {
            let outcome = model.write(.scControlPoint, [], now: 10)
            #expect(outcome.attError == 0x0D)
        }
        #expect(model.read(.cscFeature, now: 10) == [0x03, 0x00])
    }
}

@Suite struct HeartRateModelTests {
    @Test func theRateOptionNotifiesThatManyMeasurementsASecondEachOnItsOwnTick() throws {
        var options = EmulatorOptions()
        try options.set("rate", to: "200")
        var model = HeartRateModel(seed: 7, options: options)
        #expect(model.tickInterval == 0.005)
        let outputs = values(drive(&model, to: 10, step: model.tickInterval), .heartRateMeasurement)
        #expect((1999...2000).contains(outputs.count))
        // About one a tick (two where the floating-point sums meet), not bursts of a tenth of a
        // second: a benchmark sees an even load.
        let perTick = Dictionary(grouping: outputs, by: \.time).values.map(\.count)
        #expect(perTick.max() ?? 0 <= 2)
        for (_, bytes) in outputs { #expect((60...180).contains(try HeartRateMeasurement(exactly: bytes).beatsPerMinute)) }
        var bad = EmulatorOptions()
        #expect(throws: EmulatorOptionError.self) { try bad.set("rate", to: "5000") }
    }

    @Test func measurementsArePlausibleAndRRMatchesTheRate() throws {
        var model = HeartRateModel(seed: 7)
        let outputs = values(drive(&model, to: 600, step: 0.1), .heartRateMeasurement)
        #expect(outputs.count == 600)
        var rrTotal = 0.0
        for (index, (_, bytes)) in outputs.enumerated() {
            let m = try HeartRateMeasurement(exactly: bytes)
            #expect((60...180).contains(m.beatsPerMinute))
            #expect(m.sensorContact == .detected)
            #expect((m.energyExpendedKilojoules != nil) == ((index + 1) % 10 == 0))
            let rr = m.rrIntervalSeconds
            rrTotal += rr.reduce(0, +)
            if !rr.isEmpty {
                let implied = 60 / (rr.reduce(0, +) / Double(rr.count))
                #expect(abs(implied - Double(m.beatsPerMinute)) / Double(m.beatsPerMinute) < 0.05)
            }
        }
        // Every beat's interval is reported once: they add up to the elapsed time.
        #expect(abs(rrTotal - 600) < 2)
        let rates = try outputs.map { try HeartRateMeasurement(exactly: $0.bytes).beatsPerMinute }
        #expect(Set(rates).count > 10, "the rate drifts")
    }

    @Test func controlPointAndLocation() {
        var model = HeartRateModel(seed: 7)
        _ = drive(&model, to: 60, step: 0.5)
        #expect(model.energyKilojoules > 0)
        do {
            let outcome = model.write(.heartRateControlPoint, [0x01], now: 60)
            #expect(outcome == .ok)
        }
        #expect(model.energyKilojoules == 0)
        do {
            let outcome = model.write(.heartRateControlPoint, [0x02], now: 60)
            #expect(outcome.attError == 0x80)
        }
        #expect(model.read(.bodySensorLocation, now: 60) == [0x01])
        #expect(model.read(.batteryLevel, now: 60) == [100])
    }
}

@Suite struct BatteryModelTests {
    @Test func drainsAndNotifiesEachChange() throws {
        var options = EmulatorOptions()
        options.batterySecondsPerPercent = 2
        options.batteryPercent = 3
        var model = BatteryModel(seed: 0, options: options)
        let levels = try values(drive(&model, to: 10, step: 0.5), .batteryLevel).map { try BatteryLevel(exactly: $0.bytes).percent }
        #expect(levels == [2, 1, 0, 100, 99])
        #expect(model.read(.batteryLevel, now: 10) == [99])
        do {
            let outcome = model.write(.batteryLevel, [5], now: 10)
            #expect(outcome.attError == 0x03)
        }
    }
}

@Suite struct CyclingPowerModelTests {
    @Test func powerSpeedAndCadenceDecodeConsistently() throws {
        var model = CyclingPowerModel(seed: 3)
        let outputs = values(drive(&model, to: 120, step: 0.2), .cyclingPowerMeasurement)
        var calculator = CyclingPowerCalculator(wheelCircumferenceMetres: 2.105)
        let expectedSpeed = model.physics.speedMetersPerSecond * 3.6
        var wraps = 0
        var previousWheelTime: UInt16?
        var energies: [UInt16] = []
        for (time, bytes) in outputs {
            let m = try CyclingPowerMeasurement(exactly: bytes)
            #expect(abs(Double(m.instantaneousPowerWatts) - 200) < 30)
            let motion = calculator.update(m, at: time)
            if let v = motion.speedKilometresPerHour { #expect(abs(v - expectedSpeed) / expectedSpeed < 0.01) }
            if let c = motion.cadenceRPM { #expect(abs(c - 90) < 1) }
            let wheelTime = try #require(m.wheel).lastEventTimeTicks
            if let previousWheelTime, wheelTime < previousWheelTime { wraps += 1 }
            previousWheelTime = wheelTime
            energies.append(try #require(m.accumulatedEnergyKilojoules))
        }
        #expect(wraps == 3, "1/2048 s wheel time wraps every 32 s")
        #expect(energies.last == 24)  // 200 W × 120 s = 24 kJ
        let feature = try #require(model.read(.cyclingPowerFeature, now: 0))
        #expect(try CyclingPowerFeature(exactly: feature).contains(.wheelRevolutionData))
    }

    @Test func controlPoint() {
        var model = CyclingPowerModel(seed: 3)
        _ = drive(&model, to: 5, step: 0.1)
        do {
            let outcome = model.write(.cyclingPowerControlPoint, [0x01, 0x0A, 0, 0, 0], now: 5)
            #expect(outcome.outputs.first?.bytes == [0x20, 0x01, 0x01])
        }
        #expect(model.measurement.wheel?.cumulativeRevolutions == 10)
        do {
            let outcome = model.write(.cyclingPowerControlPoint, [0x05], now: 5)
            #expect(outcome.outputs.first?.bytes == [0x20, 0x05, 0x02])
        }
    }
}
