import BluetideBase
import BluetideProfiles
import BluetideRecording
import Testing
@testable import BluetideRide

/// Readings built from the profile codecs, as devices send them.
enum Readings {
    static let trainer = RideDevice(role: .fecTrainer, address: "C0:00:00:00:00:01", name: "Tacx Neo 1")
    static let strap = RideDevice(role: .heartRate, address: "C0:00:00:00:00:02", name: "HRM")
    static let meter = RideDevice(role: .power, address: "C0:00:00:00:00:03", name: "Pedals")
    static let csc = RideDevice(role: .speedCadence, address: "C0:00:00:00:00:04", name: "Speed")

    static func fecGeneral(at time: Double, speedMetersPerSecond: Double) -> RideEvent {
        let page = FECPage.generalData(FECGeneralData(
            elapsedTimeQuarterSeconds: UInt8(truncatingIfNeeded: Int(time * 4)), distanceTraveledMeters: 0,
            speedMillimetersPerSecond: UInt16(speedMetersPerSecond * 1000), state: .inUse))
        return .reading(RideReading(time: time, device: trainer, characteristic: .tacxFECNotify, bytes: FECFrame(page: page).bytes))
    }

    static func fecPower(at time: Double, watts: UInt16, cadence: UInt8, event: UInt8) -> RideEvent {
        let page = FECPage.trainerData(FECTrainerData(
            eventCount: event, cadenceRpm: cadence, accumulatedPowerWatts: UInt16(event) &* watts, instantaneousPowerWatts: watts,
            trainerStatus: [], state: .inUse))
        return .reading(RideReading(time: time, device: trainer, characteristic: .tacxFECNotify, bytes: FECFrame(page: page).bytes))
    }

    static func heartRate(at time: Double, bpm: UInt16) -> RideEvent {
        .reading(RideReading(
            time: time, device: strap, characteristic: .heartRateMeasurement,
            bytes: HeartRateMeasurement(beatsPerMinute: bpm).bytes))
    }

    static func power(at time: Double, watts: Int16) -> RideEvent {
        .reading(RideReading(
            time: time, device: meter, characteristic: .cyclingPowerMeasurement,
            bytes: CyclingPowerMeasurement(instantaneousPowerWatts: watts).bytes))
    }
}

@Suite struct RideMergerTests {
    @Test func trainerAndStrapMergeIntoOneSample() throws {
        var merger = RideMerger()
        _ = merger.receive(Readings.fecGeneral(at: 0.25, speedMetersPerSecond: 10))
        _ = merger.receive(Readings.fecPower(at: 0.5, watts: 201, cadence: 90, event: 1))
        let sampleMade = merger.receive(Readings.heartRate(at: 0.75, bpm: 128))
        let sample = try #require(sampleMade)
        #expect(sample.trigger == .update)
        #expect(sample.speedKmh == 36)
        #expect(sample.powerWatts == 201)
        #expect(sample.cadenceRpm == 90)
        #expect(sample.heartRateBpm == 128)
        #expect(sample.sources == [.speed: "Tacx Neo 1", .power: "Tacx Neo 1", .cadence: "Tacx Neo 1", .heartRate: "HRM"])
        let tickMade = merger.receive(.tick(time: 1))
        let tick = try #require(tickMade)
        #expect(tick.trigger == .tick)
        #expect(tick.powerWatts == 201)
    }

    @Test func aPowerMeterWinsOverTheTrainerWhileFresh() throws {
        var merger = RideMerger()
        _ = merger.receive(Readings.fecPower(at: 0, watts: 180, cadence: 85, event: 1))
        let bothSample = merger.receive(Readings.power(at: 0.1, watts: 190))
        let both = try #require(bothSample)
        #expect(both.powerWatts == 190)
        #expect(both.sources[.power] == "Pedals")
        // The meter falls silent: after 3 s its value is stale and the trainer's counts again.
        _ = merger.receive(Readings.fecPower(at: 3.5, watts: 182, cadence: 85, event: 2))
        let laterMade = merger.receive(.tick(time: 4))
        let later = try #require(laterMade)
        #expect(later.powerWatts == 182)
        #expect(later.sources[.power] == "Tacx Neo 1")
    }

    @Test func aGapIsMissingNeverZeroAndAddsNoDistance() throws {
        var merger = RideMerger()
        _ = merger.receive(Readings.fecGeneral(at: 0, speedMetersPerSecond: 10))
        _ = merger.receive(Readings.heartRate(at: 0, bpm: 120))
        let oneMade = merger.receive(.tick(time: 1))
        let one = try #require(oneMade)
        #expect(abs(one.distanceMeters - 10) < 1e-9)
        // The strap drops out: its value disappears at once.
        let droppedMade = merger.receive(.link(device: Readings.strap, connected: false, time: 1.5))
        let dropped = try #require(droppedMade)
        #expect(dropped.heartRateBpm == nil)
        #expect(dropped.sources[.heartRate] == nil)
        // The trainer goes silent: after the freshness window its speed is missing, not 0.
        let silentMade = merger.receive(.tick(time: 5))
        let silent = try #require(silentMade)
        #expect(silent.speedKmh == nil)
        #expect(silent.powerWatts == nil)
        let distanceAfterGap = silent.distanceMeters
        // Distance counted at most the 3 s the last speed was fresh, nothing for the rest of the gap.
        #expect(abs(distanceAfterGap - 30) < 1e-9)
        let stillMade = merger.receive(.tick(time: 10))
        let still = try #require(stillMade)
        #expect(still.distanceMeters == distanceAfterGap)
        // Both come back.
        _ = merger.receive(.link(device: Readings.strap, connected: true, time: 10.2))
        let backMade = merger.receive(Readings.heartRate(at: 10.5, bpm: 131))
        let back = try #require(backMade)
        #expect(back.heartRateBpm == 131)
    }

    @Test func anUndecodableValueMakesNoSample() {
        var merger = RideMerger()
        let bad = RideEvent.reading(RideReading(time: 0, device: Readings.strap, characteristic: .heartRateMeasurement, bytes: [0x01]))
        #expect(merger.receive(bad) == nil)
        #expect(merger.undecodableValues == 1)
    }

    @Test func cscSpeedUsesTheWheelCircumference() throws {
        var small = RideMerger(configuration: .init(wheelCircumferenceMeters: 2.0))
        var large = RideMerger(configuration: .init(wheelCircumferenceMeters: 2.2))
        // 5 wheel revolutions per second: 10 m/s on a 2.0 m wheel, 11 m/s on 2.2 m.
        for (index, time) in [0.0, 1.0, 2.0].enumerated() {
            let measurement = CSCMeasurement(wheel: WheelRevolutionData(cumulativeRevolutions: UInt32(index * 5), lastEventTimeTicks: UInt16(index * 1024)))
            let event = RideEvent.reading(RideReading(time: time, device: Readings.csc, characteristic: .cscMeasurement, bytes: measurement.bytes))
            _ = small.receive(event)
            _ = large.receive(event)
        }
        let smallTick = small.receive(.tick(time: 2)), largeTick = large.receive(.tick(time: 2))
        let a = try #require(smallTick?.speedKmh)
        let b = try #require(largeTick?.speedKmh)
        #expect(abs(a - 36) < 0.01)
        #expect(abs(b - 39.6) < 0.01)
    }

    @Test func aRecordingReplaysIntoTheSameSamples() async throws {
        var events: [RideEvent] = []
        var event: UInt8 = 0
        for step in 0..<40 {
            let time = Double(step) * 0.25
            // The live source's once-a-second tick, where a replay puts it too.
            if step > 0, step % 4 == 0 { events.append(.tick(time: time)) }
            if step % 2 == 0 {
                events.append(Readings.fecGeneral(at: time, speedMetersPerSecond: 8 + Double(step) / 10))
            } else {
                event &+= 1
                events.append(Readings.fecPower(at: time, watts: 150 + UInt16(step), cadence: 88, event: event))
            }
            if step % 4 == 0 { events.append(Readings.heartRate(at: time, bpm: 110 + UInt16(step))) }
        }
        var live = RideMerger()
        let liveSamples = events.compactMap { live.receive($0) }
        let records = events.compactMap { event -> ValueRecord? in
            guard case let .reading(reading) = event else { return nil }
            return ValueRecord(
                timestamp: reading.time, device: DeviceIdentity(address: reading.device.address, name: reading.device.name),
                characteristic: reading.characteristic, operation: .notify, value: reading.bytes)
        }
        let source = RecordedRideSource(records: records, pace: .asFastAsPossible)
        var replayed = RideMerger()
        var replaySamples: [RideSample] = []
        for await event in try await source.start() {
            if let sample = replayed.receive(event) { replaySamples.append(sample) }
        }
        #expect(replaySamples.count == liveSamples.count)
        #expect(replaySamples == liveSamples)
        #expect(liveSamples.filter { $0.trigger == .tick }.count == 9)
        #expect(source.devices.map(\.role) == [.fecTrainer, .heartRate])
    }

    @Test func aLoopedReplayGoesOnInTime() async throws {
        let records = (0..<4).map { step in
            ValueRecord(
                timestamp: Double(step) * 0.5, device: DeviceIdentity(address: "A", name: "HRM"), characteristic: .heartRateMeasurement,
                operation: .notify, value: HeartRateMeasurement(beatsPerMinute: UInt16(100 + step)).bytes)
        }
        let source = RecordedRideSource(records: records, pace: .asFastAsPossible, loop: true)
        var times: [Double] = []
        var ticks: [Double] = []
        for await event in try await source.start() {
            switch event {
            case let .reading(reading): times.append(reading.time)
            case let .tick(time): ticks.append(time)
            case .link, .target: break
            }
            if times.count == 10 { break }
        }
        await source.stop()
        // One pass lasts 1.5 s (+1 s between passes): the second pass starts at 2.5 s.
        #expect(times == [0, 0.5, 1, 1.5, 2.5, 3, 3.5, 4, 5, 5.5])
        #expect(ticks == [1, 2, 3, 4, 5])
    }
}
