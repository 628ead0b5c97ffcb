import Bluetide
import Testing
@testable import BluetideRide

/// The bridge's FTMS rules and the values it serves, without a radio: bytes in, bytes out.
struct BridgeCoreTests {
    let app: UInt16 = 0x40, other: UInt16 = 0x41

    /// The indication bytes of an immediate answer (nil for a forward).
    func answer(_ decision: FTMSBridgeCore.Decision) -> [UInt8]? {
        guard case let .answer(response, _) = decision else { return nil }
        return response.bytes
    }

    @Test func controlIsRequestedFirstAndHeldByOneApp() {
        var core = FTMSBridgeCore()
        #expect(answer(core.receive([0x05, 0xB4, 0x00], from: app)) == [0x80, 0x05, 0x05], "ERG before Request Control")
        #expect(answer(core.receive([0x00], from: app)) == [0x80, 0x00, 0x01])
        #expect(core.controller == app)
        #expect(answer(core.receive([0x00], from: other)) == [0x80, 0x00, 0x05], "a second app is refused")
        #expect(answer(core.receive([0x05, 0xB4, 0x00], from: other)) == [0x80, 0x05, 0x05])
        core.disconnected(app)
        #expect(core.controller == nil)
        #expect(answer(core.receive([0x00], from: other)) == [0x80, 0x00, 0x01], "released when its app leaves")
    }

    @Test func ergIsForwardedAndAnsweredWithTheTrainersOutcome() {
        var core = FTMSBridgeCore()
        _ = core.receive([0x00], from: app)
        let decision = core.receive([0x05, 0xB4, 0x00], from: app)
        #expect(decision == .forward(.targetPower(watts: 180), request: .setTargetPower(watts: 180)))
        let confirmed = core.completed(.setTargetPower(watts: 180), failure: nil)
        guard case let .answer(response, statuses) = confirmed else { Issue.record("expected an answer"); return }
        #expect(response.bytes == [0x80, 0x05, 0x01])
        #expect(statuses.map(\.bytes) == [[0x08, 0xB4, 0x00]], "target power changed to 180 W")
        #expect(core.trainingStatus.bytes == [0x00, 0x0C], "watt control")
        #expect(answer(core.completed(.setTargetPower(watts: 180), failure: "no page 71")) == [0x80, 0x05, 0x04], "operation failed")
    }

    @Test func malformedUnsupportedAndOutOfRangeRequests() {
        var core = FTMSBridgeCore()
        _ = core.receive([0x00], from: app)
        #expect(answer(core.receive([], from: app)) == [0x80, 0x00, 0x03])
        #expect(answer(core.receive([0x05, 0xB4], from: app)) == [0x80, 0x05, 0x03], "truncated parameter")
        #expect(answer(core.receive([0x05, 0xB8, 0x0B], from: app)) == [0x80, 0x05, 0x03], "3000 W is above the 2000 W range")
        #expect(answer(core.receive([0x05, 0xFF, 0xFF], from: app)) == [0x80, 0x05, 0x03], "−1 W")
        #expect(answer(core.receive([0x13, 0x01], from: app)) == [0x80, 0x13, 0x02], "spin-down is not supported")
        #expect(answer(core.receive([0x80, 0x00, 0x01], from: app)) == [0x80, 0x80, 0x02], "the response opcode is no request")
        #expect(answer(core.receive([0x04, 0xC9], from: app)) == [0x80, 0x04, 0x03], "resistance 20.1 is above 20.0")
        #expect(answer(core.receive([0x03, 0xF4, 0x01], from: app)) == [0x80, 0x03, 0x03], "inclination 50 %")
    }

    @Test func simulationInclinationResistanceAndReset() {
        var core = FTMSBridgeCore()
        _ = core.receive([0x00], from: app)
        // Wind 1.5 m/s (0x05DC), grade 2.00 % (0x00C8), Crr 0.0040 (0x28), Cw 0.51 (0x33).
        let simulation = core.receive([0x11, 0xDC, 0x05, 0xC8, 0x00, 0x28, 0x33], from: app)
        #expect(simulation == .forward(.simulation(SimulationParameters(
            gradePercent: 2, windSpeedMetersPerSecond: 1.5, rollingResistance: 0.004, windResistanceKgPerMeter: 0.51)),
            request: .setIndoorBikeSimulation(parameters: .init(
                windSpeedMillimetersPerSecond: 1500, gradeHundredthPercent: 200, rollingResistanceTenThousandths: 40,
                windResistanceHundredthKgPerMeter: 51))))
        #expect(core.receive([0x03, 0xE7, 0xFF], from: app) == .forward(
            .simulation(SimulationParameters(gradePercent: -2.5)), request: .setTargetInclination(tenthPercent: -25)))
        #expect(core.receive([0x04, 0x64], from: app) == .forward(.resistance(percent: 50), request: .setTargetResistanceLevel(tenths: 100)))
        #expect(core.receive([0x01], from: app) == .forward(.reset, request: .reset))
        guard case let .answer(response, statuses) = core.completed(.reset, failure: nil) else { Issue.record("expected an answer"); return }
        #expect(response.bytes == [0x80, 0x01, 0x01])
        #expect(statuses.map(\.bytes) == [[0x01]])
        #expect(core.controller == nil, "reset releases control")
        #expect(answer(core.receive([0x05, 0xB4, 0x00], from: app)) == [0x80, 0x05, 0x05])
    }

    @Test func startAndStopAreAnsweredByTheBridge() {
        var core = FTMSBridgeCore()
        _ = core.receive([0x00], from: app)
        guard case let .answer(started, startStatus) = core.receive([0x07], from: app) else { Issue.record("expected an answer"); return }
        #expect(started.bytes == [0x80, 0x07, 0x01])
        #expect(startStatus.map(\.bytes) == [[0x04]])
        #expect(answer(core.receive([0x08, 0x03], from: app)) == [0x80, 0x08, 0x03], "stop or pause takes 1 or 2")
        guard case let .answer(_, stopStatus) = core.receive([0x08, 0x02], from: app) else { Issue.record("expected an answer"); return }
        #expect(stopStatus.map(\.bytes) == [[0x02, 0x02]])
    }

    @Test func indoorBikeDataCyclingPowerAndHeartRateBytes() {
        var measurements = BridgeMeasurements()
        let first = measurements.values(for: RideSample(
            time: 1, trigger: .tick, speedKmh: 30, cadenceRpm: 90, powerWatts: 200, heartRateBpm: 140, distanceMeters: 100.7))
        // Flags 0x0A54: speed (More Data clear), cadence, total distance, power, heart rate, elapsed time.
        #expect(first.indoorBikeData.bytes == [0x54, 0x0A, 0xB8, 0x0B, 0xB4, 0x00, 0x64, 0x00, 0x00, 0xC8, 0x00, 0x8C, 0x01, 0x00])
        #expect(first.heartRate?.bytes == [0x00, 0x8C])
        // One second at 90 rpm: 1.5 revolutions; the last whole one 1/3 s before the sample (1707/1024 s).
        let second = measurements.values(for: RideSample(time: 2, trigger: .tick, cadenceRpm: 90, powerWatts: 210, distanceMeters: 108))
        #expect(second.cyclingPower?.bytes == [0x20, 0x00, 0xD2, 0x00, 0x01, 0x00, 0xAB, 0x06])
        // No speed: More Data set and no speed field; no heart rate: no measurement at all.
        #expect(second.indoorBikeData.bytes == [0x55, 0x08, 0xB4, 0x00, 0x6C, 0x00, 0x00, 0xD2, 0x00, 0x02, 0x00])
        #expect(second.heartRate == nil)
        let silent = measurements.values(for: RideSample(time: 3, trigger: .tick, distanceMeters: 108))
        #expect(silent.cyclingPower == nil, "no power: no Cycling Power Measurement, never a zero")
        #expect(silent.indoorBikeData.bytes == [0x11, 0x08, 0x6C, 0x00, 0x00, 0x03, 0x00])
    }
}
