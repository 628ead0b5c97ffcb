import BluetideBase
import Testing
@testable import BluetideProfiles

@Suite struct CyclingPowerMeasurementTests {
    static let first = fitnessHex("30 00 88 00 A2 5E 01 00 AF 1D 4B 63 96 7F")
    static let second = fitnessHex("30 00 8C 00 A4 5E 01 00 83 26 4B 63 96 7F")

    @Test func wheelAndCrank() throws {
        let m = try CyclingPowerMeasurement(exactly: Self.first)
        #expect(m.flags == 0x0030)
        #expect(m.instantaneousPowerWatts == 136)
        #expect(m.wheel == WheelRevolutionData(cumulativeRevolutions: 89762, lastEventTimeTicks: 7599))
        #expect(abs((m.lastWheelEventTimeSeconds ?? 0) - 3.710) < 0.001)
        #expect(m.crank == CrankRevolutionData(cumulativeRevolutions: 25419, lastEventTimeTicks: 32662))
        #expect(m.bytes == Self.first)
        let n = try CyclingPowerMeasurement(exactly: Self.second)
        #expect(n.instantaneousPowerWatts == 140)
        #expect(n.wheel == WheelRevolutionData(cumulativeRevolutions: 89764, lastEventTimeTicks: 9859))
        #expect(n.bytes == Self.second)
    }

    @Test func balanceCrankEnergy() throws {
        let bytes = fitnessHex("23 08 FA 00 64 00 04 00 80 96 00")
        let m = try CyclingPowerMeasurement(exactly: bytes)
        #expect(m.flags == 0x0823)
        #expect(m.instantaneousPowerWatts == 250)
        #expect(m.pedalPowerBalanceHalfPercent == 100)
        #expect(m.pedalPowerBalancePercent == 50.0)
        #expect(m.balanceReference == .left)
        #expect(m.crank == CrankRevolutionData(cumulativeRevolutions: 1024, lastEventTimeTicks: 32768))
        #expect(m.crank?.lastEventTimeSeconds == 32.0)
        #expect(m.accumulatedEnergyKilojoules == 150)
        #expect(m.wheel == nil)
        #expect(m.bytes == bytes)
        #expect(m.summary == "250 W, balance 50.0 % left, crank 1024 rev @ 32.000 s, energy 150 kJ")
    }

    @Test func negativePower() throws {
        let m = try CyclingPowerMeasurement(exactly: fitnessHex("00 00 FB FF"))
        #expect(m.instantaneousPowerWatts == -5)
        #expect(m.bytes == fitnessHex("00 00 FB FF"))
        #expect(m.summary == "-5 W")
    }

    @Test func extremeAngles() throws {
        let bytes = fitnessHex("00 01 2C 01 5A E0 10")
        let m = try CyclingPowerMeasurement(exactly: bytes)
        #expect(m.flags == 0x0100)
        #expect(m.instantaneousPowerWatts == 300)
        #expect(m.extremeAngles == .init(maximumDegrees: 90, minimumDegrees: 270))
        #expect(m.bytes == bytes)
    }

    /// Every field present: 34 bytes.
    static let full: (bytes: [UInt8], fields: [(String, Int)]) = {
        var w = ByteWriter()
        w.write(UInt16(0x1FFF))
        let fields: [(String, Int)] = [
            ("flags", 2), ("instantaneous power", 2), ("pedal power balance", 1), ("accumulated torque", 2),
            ("cumulative wheel revolutions", 4), ("last wheel event time", 2), ("cumulative crank revolutions", 2),
            ("last crank event time", 2), ("maximum force magnitude", 2), ("minimum force magnitude", 2),
            ("maximum torque magnitude", 2), ("minimum torque magnitude", 2), ("extreme angles", 3),
            ("top dead spot angle", 2), ("bottom dead spot angle", 2), ("accumulated energy", 2),
        ]
        w.write(Int16(-12)); w.write(UInt8(101)); w.write(UInt16(3200)); w.write(UInt32(7)); w.write(UInt16(2048))
        w.write(UInt16(9)); w.write(UInt16(1024)); w.write(Int16(400)); w.write(Int16(-50)); w.write(Int16(640))
        w.write(Int16(-32)); w.writeUInt24(0x10E05A); w.write(UInt16(12)); w.write(UInt16(190)); w.write(UInt16(77))
        return (w.bytes, fields)
    }()

    @Test func everyFieldRoundTrips() throws {
        #expect(Self.full.bytes.count == 34)
        let m = try CyclingPowerMeasurement(exactly: Self.full.bytes)
        #expect(m.instantaneousPowerWatts == -12)
        #expect(m.pedalPowerBalancePercent == 50.5)
        #expect(m.balanceReference == .left)
        #expect(m.accumulatedTorqueNewtonMetres == 100)
        #expect(m.accumulatedTorqueSource == .crankBased)
        #expect(m.lastWheelEventTimeSeconds == 1)
        #expect(m.crank?.lastEventTimeSeconds == 1)
        #expect(m.extremeForceMagnitudes == .init(maximumNewtons: 400, minimumNewtons: -50))
        #expect(m.extremeTorqueMagnitudes?.maximumNewtonMetres == 20)
        #expect(m.extremeTorqueMagnitudes?.minimumNewtonMetres == -1)
        #expect(m.extremeAngles == .init(maximumDegrees: 90, minimumDegrees: 270))
        #expect(m.topDeadSpotAngleDegrees == 12)
        #expect(m.bottomDeadSpotAngleDegrees == 190)
        #expect(m.accumulatedEnergyKilojoules == 77)
        #expect(m.offsetCompensationIndicator)
        #expect(m.bytes == Self.full.bytes)
    }

    @Test func truncationAtEveryFieldBoundary() {
        var cases: [(Int, String)] = []
        var offset = 0
        for (field, size) in Self.full.fields {
            for length in offset..<(offset + size) { cases.append((length, "Cycling Power Measurement.\(field)")) }
            offset += size
        }
        #expect(cases.count == 34)
        fitnessExpectTruncations(CyclingPowerMeasurement.self, Self.full.bytes, fields: cases.map { (prefixLength: $0.0, field: $0.1) })
    }

    @Test func featureBits() throws {
        let all = try CyclingPowerFeature(exactly: fitnessHex("FF FF 2F 00"))
        #expect(all.featureNames.count == 20)
        #expect(all.contains(.extremeAngles))
        #expect(all.contains(.enhancedOffsetCompensation))
        #expect(all.distributedSystemSupport == .forDistributedSystem)
        #expect(all.bytes == fitnessHex("FF FF 2F 00"))
        #expect(CyclingPowerFeature.extremeAngles.rawValue == 1 << 5)
        #expect(CyclingPowerFeature.topAndBottomDeadSpotAngles.rawValue == 1 << 6)
        #expect(CyclingPowerFeature.torqueBasedMeasurementContext.rawValue == 1 << 16)
        #expect(CyclingPowerFeature(rawValue: 1 << 20).distributedSystemSupport == .notForDistributedSystem)
        #expect(CyclingPowerFeature(rawValue: 3 << 20).distributedSystemSupport == .reserved)
        #expect(CyclingPowerFeature(rawValue: 0).distributedSystemSupport == .unspecified)
        let set = CyclingPowerFeature.crankRevolutionData.with(distributedSystemSupport: .forDistributedSystem)
        #expect(set.rawValue == 0x0020_0008)
        #expect(set.summary == "crankRevolutionData; distributed system: forDistributedSystem")
    }

    @Test func vector() throws {
        let bytes = fitnessHex("17 0A 00 00 04 5A 00 0A 00 F6 FF")
        let v = try CyclingPowerVector(exactly: bytes)
        #expect(v.crank == CrankRevolutionData(cumulativeRevolutions: 10, lastEventTimeTicks: 1024))
        #expect(v.firstCrankMeasurementAngleDegrees == 90)
        #expect(v.magnitudes == .forceNewtons([10, -10]))
        #expect(v.measurementDirection == .tangential)
        #expect(v.bytes == bytes)
        let torque = try CyclingPowerVector(bytes: fitnessHex("28 40 00 01"))
        #expect(torque.magnitudes == .torque32ndsNewtonMetre([64]))
        #expect(torque.measurementDirection == .radial)
        #expect(throws: DecodingError.self) { try CyclingPowerVector(bytes: [0x0C, 0x01, 0x00]) }
        fitnessExpectTruncations(CyclingPowerVector.self, bytes, fields: [
            (0, "Cycling Power Vector.flags"), (1, "Cycling Power Vector.cumulative crank revolutions"),
            (3, "Cycling Power Vector.last crank event time"), (5, "Cycling Power Vector.first crank measurement angle"),
        ])
    }

    @Test func controlPoint() throws {
        let requests: [(String, CyclingPowerControlPointRequest)] = [
            ("01 00 00 00 00", .setCumulativeValue(0)), ("02 05", .updateSensorLocation(.leftCrank)),
            ("03", .requestSupportedSensorLocations), ("04 59 01", .setCrankLengthHalfMillimetres(345)),
            ("05", .requestCrankLength), ("06 D0 07", .setChainLengthMillimetres(2000)), ("07", .requestChainLength),
            ("08 10 01", .setChainWeightGrams(272)), ("09", .requestChainWeight),
            ("0A 28 00", .setSpanLengthMillimetres(40)), ("0B", .requestSpanLength), ("0C", .startOffsetCompensation),
            ("0D 03 00", .maskMeasurementContent(3)), ("0E", .requestSamplingRate),
            ("0F", .requestFactoryCalibrationDate), ("10", .startEnhancedOffsetCompensation),
            ("55 01", .other(opCode: 0x55, parameter: [1])),
        ]
        for (hex, value) in requests {
            #expect(try CyclingPowerControlPointRequest(exactly: fitnessHex(hex)) == value, "\(hex)")
            #expect(value.bytes == fitnessHex(hex))
        }
        #expect(CyclingPowerControlPointRequest.setCrankLengthHalfMillimetres(345).summary == "set crank length 172.5 mm")
        let response = try CyclingPowerControlPointResponse(exactly: fitnessHex("20 05 01 59 01"))
        #expect(response.requestOpCode == 0x05)
        #expect(response.result == .success)
        #expect(response.parameterUInt16 == 345)
        #expect(response.bytes == fitnessHex("20 05 01 59 01"))
        let locations = try CyclingPowerControlPointResponse(exactly: fitnessHex("20 03 01 05 06"))
        #expect(locations.supportedSensorLocations == [.leftCrank, .rightCrank])
        let short = try CyclingPowerControlPointResponse(exactly: fitnessHex("20 02"))
        #expect(short.requestOpCode == nil)
        #expect(short.result == .opCodeNotSupported)
        #expect(try CyclingPowerControlPointMessage(bytes: fitnessHex("20 0D 03")) == .response(.init(requestOpCode: 0x0D, result: .invalidParameter)))
        fitnessExpectTruncations(CyclingPowerControlPointRequest.self, fitnessHex("04 59 01"), fields: [
            (0, "Cycling Power Control Point.op code"), (1, "Cycling Power Control Point.crank length"),
            (2, "Cycling Power Control Point.crank length"),
        ])
    }
}

@Suite struct CyclingPowerCalculatorTests {
    @Test func wheelTimeIn2048thsGivesTheSameSpeedAsCSC() throws {
        var calc = CyclingPowerCalculator(wheelCircumferenceMetres: 2.105)
        _ = calc.update(try CyclingPowerMeasurement(bytes: CyclingPowerMeasurementTests.first), at: 0)
        let m = calc.update(try CyclingPowerMeasurement(bytes: CyclingPowerMeasurementTests.second), at: 1.1)
        #expect(m.wheelStatus == .measured)
        // dTick 2260 / 2048 = 1.1035 s: exactly the CSC interval (1130 / 1024).
        #expect(abs((m.speedMetresPerSecond ?? 0) - 2 * 2.105 / (2260.0 / 2048)) < 1e-12)
        #expect(FitnessFormat.fixed(m.speedKilometresPerHour ?? 0, 2) == "13.73")
        #expect(abs(m.distanceMetres - 4.21) < 1e-12)
        #expect(m.crankStatus == .heldStale)
    }

    @Test func crankCadenceWithRollover() {
        var calc = CyclingPowerCalculator()
        let a = CyclingPowerMeasurement(instantaneousPowerWatts: 200, crank: .init(cumulativeRevolutions: 65534, lastEventTimeTicks: 64512))
        let b = CyclingPowerMeasurement(instantaneousPowerWatts: 200, crank: .init(cumulativeRevolutions: 1, lastEventTimeTicks: 1024))
        _ = calc.update(a, at: 0)
        #expect(calc.update(b, at: 2).cadenceRPM == 90)
    }
}
