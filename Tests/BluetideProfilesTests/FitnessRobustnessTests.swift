import BluetideBase
import Testing
@testable import BluetideProfiles

@Suite struct FitnessRobustnessTests {
    static let decoders: [(String, @Sendable ([UInt8]) throws(DecodingError) -> Void)] = [
        ("HeartRateMeasurement", { b throws(DecodingError) in _ = try HeartRateMeasurement(bytes: b).summary }),
        ("BodySensorLocation", { b throws(DecodingError) in _ = try BodySensorLocation(bytes: b).description }),
        ("HeartRateControlPoint", { b throws(DecodingError) in _ = try HeartRateControlPoint(bytes: b).summary }),
        ("BatteryLevel", { b throws(DecodingError) in _ = try BatteryLevel(bytes: b).summary }),
        ("DeviceInformationString", { b throws(DecodingError) in _ = try DeviceInformationString(bytes: b).summary }),
        ("SystemID", { b throws(DecodingError) in _ = try SystemID(bytes: b).summary }),
        ("PnPID", { b throws(DecodingError) in _ = try PnPID(bytes: b).summary }),
        ("CSCMeasurement", { b throws(DecodingError) in _ = try CSCMeasurement(bytes: b).summary }),
        ("CSCFeature", { b throws(DecodingError) in _ = try CSCFeature(bytes: b).summary }),
        ("SensorLocation", { b throws(DecodingError) in _ = try SensorLocation(bytes: b).description }),
        ("SCControlPointMessage", { b throws(DecodingError) in _ = try SCControlPointMessage(bytes: b).summary }),
        ("SCControlPointResponse", { b throws(DecodingError) in _ = try SCControlPointResponse(bytes: b).summary }),
        ("CyclingPowerMeasurement", { b throws(DecodingError) in _ = try CyclingPowerMeasurement(bytes: b).summary }),
        ("CyclingPowerFeature", { b throws(DecodingError) in _ = try CyclingPowerFeature(bytes: b).summary }),
        ("CyclingPowerVector", { b throws(DecodingError) in _ = try CyclingPowerVector(bytes: b).summary }),
        ("CyclingPowerControlPointMessage", { b throws(DecodingError) in _ = try CyclingPowerControlPointMessage(bytes: b).summary }),
    ]

    /// Random bytes, biased towards plausible flags, truncated anywhere: values or DecodingError only,
    /// and every decoded value re-encodes and decodes to itself.
    @Test func randomInputsNeverTrapAndRoundTrip() {
        var rng = FitnessRandom(state: 0xF17_2E55)
        var values = 0, errors = 0
        for _ in 0..<4000 {
            let length = Int.random(in: 0...40, using: &rng)
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            for (name, decode) in Self.decoders {
                do throws(DecodingError) {
                    try decode(bytes)
                    values += 1
                } catch {
                    #expect(!error.field.isEmpty, "\(name)")
                    errors += 1
                }
            }
            roundTrip(HeartRateMeasurement.self, bytes)
            roundTrip(CSCMeasurement.self, bytes)
            roundTrip(CyclingPowerMeasurement.self, bytes)
            roundTrip(CyclingPowerVector.self, bytes)
            roundTrip(SCControlPointMessage.self, bytes)
            roundTrip(CyclingPowerControlPointMessage.self, bytes)
            roundTrip(PnPID.self, bytes)
            roundTrip(SystemID.self, bytes)
        }
        #expect(values > 10000)
        #expect(errors > 1000)
    }

    func roundTrip<T: GATTCodable & Equatable>(_ type: T.Type, _ bytes: [UInt8]) {
        guard let value = try? T(bytes: bytes) else { return }
        let again = try? T(bytes: value.bytes)
        #expect(again == value, "\(T.self) \(bytes.spacedHex)")
    }

    /// Every catalog entry (stateful ones with a running clock, including jumps back and long gaps).
    @Test func catalogEntriesNeverTrap() {
        var rng = FitnessRandom(state: 7)
        for profile in ProfileCatalog.fitnessProfiles {
            for circumference in [2.105, 0, -1, .nan] {
                var decoder = profile.makeDecoder(ProfileOptions(wheelCircumference: circumference))
                var time = 0.0
                for _ in 0..<400 {
                    let length = Int.random(in: 0...20, using: &rng)
                    let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
                    time += [0, 0.5, 1, 1, 1, 3.5, 70, -2, .nan].randomElement(using: &rng) ?? 1
                    if let packet = try? decoder.decode(bytes, at: time) {
                        #expect(!packet.summary.isEmpty, "\(profile.name)")
                    }
                }
            }
        }
    }

    /// A realistic stream with random counter increments and repeats: the calculator's outputs stay
    /// finite and within the plausibility limits, and distance never decreases.
    @Test func calculatorOutputsStayPlausible() {
        var rng = FitnessRandom(state: 99)
        var calc = CSCCalculator(wheelCircumferenceMetres: 2.105)
        var wheel: UInt32 = .random(in: 0...UInt32.max, using: &rng)
        var crank: UInt16 = .random(in: 0...UInt16.max, using: &rng)
        var wheelTime: UInt16 = 0, crankTime: UInt16 = 0
        var time = 0.0, lastDistance = 0.0
        for _ in 0..<20000 {
            time += Double.random(in: 0.2...2.5, using: &rng)
            switch Int.random(in: 0..<10, using: &rng) {
            case 0: break  // stale repeat
            case 1: wheel = .random(in: 0...UInt32.max, using: &rng)  // reset / garbage
            default:
                let revs = UInt32.random(in: 0...3, using: &rng)
                wheel &+= revs
                wheelTime &+= UInt16.random(in: 300...2000, using: &rng)
                crank &+= UInt16.random(in: 0...3, using: &rng)
                crankTime &+= UInt16.random(in: 300...2000, using: &rng)
            }
            let m = CSCMeasurement(
                wheel: .init(cumulativeRevolutions: wheel, lastEventTimeTicks: wheelTime),
                crank: .init(cumulativeRevolutions: crank, lastEventTimeTicks: crankTime))
            let out = calc.update(m, at: time)
            if let speed = out.speedKilometresPerHour { #expect(speed >= 0 && speed <= 120) }
            if let cadence = out.cadenceRPM { #expect(cadence >= 0 && cadence <= 250) }
            #expect(out.distanceMetres >= lastDistance)
            #expect(out.distanceMetres.isFinite)
            lastDistance = out.distanceMetres
        }
    }
}

/// SplitMix64, seeded, so a failing random case can be reproduced.
fileprivate struct FitnessRandom: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
