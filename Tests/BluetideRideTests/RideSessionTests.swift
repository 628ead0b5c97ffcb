import Bluetide
import BluetideProfiles
import BluetideRecording
import Foundation
import Testing
@testable import BluetideRide

/// Samples until `done` says so (the stream ending first is a failure).
func samples(
    _ stream: AsyncStream<RideSample>, until done: @escaping @Sendable ([RideSample]) -> Bool
) async throws -> [RideSample] {
    var seen: [RideSample] = []
    for await sample in stream {
        seen.append(sample)
        if done(seen) { return seen }
    }
    throw TimedOut(what: "the samples ended after \(seen.count)")
}

/// Whether the last `count` tick samples have power within `tolerance` W of `watts`.
func settled(_ seen: [RideSample], at watts: Int, tolerance: Int = 3, count: Int = 3) -> Bool {
    let ticks = seen.filter { $0.trigger == .tick }.suffix(count)
    return ticks.count == count && ticks.allSatisfy { $0.powerWatts.map { abs($0 - watts) <= tolerance } ?? false }
}

/// Runs `body`, then stops the session and closes the rig whether it threw or not.
func riding(_ session: RideSession, _ rig: EmulatedRig, _ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch {
        await session.stop()
        await rig.close()
        throw error
    }
    await session.stop()
    await rig.close()
}

@Suite(.serialized) struct RideSessionTests {
    @Test func tacxFECAndStrapFoundByServiceAndERGSettles() async throws {
        try await EmulatedRig.with(["tacx-fec", "heart-rate"], "FE-C trainer and strap") { rig in
            let source = LiveRideSource(
                central: rig.bluetooth.central, requests: RideDeviceRequest.Kind.allCases.map { .init($0, optional: true) },
                configuration: .onRig(scanSeconds: 10))
            let session = RideSession(source: source)
            try await riding(session, rig) {
                let stream = try await session.start()
                #expect(Set(await source.devices.map(\.role)) == [.fecTrainer, .heartRate])
                // The emulated rider pushes 200 W; ERG 150 W must bring the trainer down to it.
                try await session.setTarget(.power(watts: 150))
                let seen = try await guarded("ERG 150 W on the FE-C trainer") { try await samples(stream) { settled($0, at: 150) } }
                let last = try #require(seen.last)
                #expect(last.target == .power(watts: 150))
                #expect(last.heartRateBpm != nil)
                #expect(last.sources[.heartRate] == "Bluetide HRM")
                #expect(last.sources[.power]?.hasPrefix("Tacx Neo") == true)
                #expect((last.speedKmh ?? 0) > 10)
                #expect(last.distanceMeters > 0)
                // Grade and resistance are confirmed by page 71 too.
                try await session.setTarget(.grade(percent: 5))
                try await session.setTarget(.resistance(percent: 20))
            }
        }
    }

    @Test func ftmsControlStatusAndRefusals() async throws {
        try await EmulatedRig.with(["ftms-bike"], "FTMS control") { rig in
            // (A client that skips Request Control is refused: BluetideEmulationTests pin that.)
            let source = LiveRideSource(
                central: rig.bluetooth.central, requests: [.init(.trainer, device: EmulatedRig.address(0).description)], configuration: .onRig())
            let session = RideSession(source: source)
            let stream = try await session.start()
            let trainer = try #require(await session.trainer)
            #expect(trainer.device.role == .ftmsTrainer)
            try await session.setTarget(.power(watts: 250))
            _ = try await guarded("ERG 250 W on the FTMS trainer") { try await samples(stream) { settled($0, at: 250) } }
            // The trainer's Fitness Machine Status reaches the session's notices.
            let notices = session.notices
            let seen = try await guarded("the status notice") { () -> [String] in
                var texts: [String] = []
                for await notice in notices {
                    texts.append(notice)
                    if notice.hasSuffix("target power changed to 250 W") { break }
                }
                return texts
            }
            #expect(seen.last == "\(EmulatedRig.address(0).string): target power changed to 250 W")
            // Out of the supported range (0–2000 W): the trainer's answer is surfaced, naming the request.
            await #expect(throws: TrainerControlError(
                request: "set target power 3000 W",
                reason: "the trainer answered \"invalid parameter\" (0x03): the value is outside the trainer's supported range")) {
                try await trainer.setTargetPower(watts: 3000)
            }
            await session.stop()
        }
    }

    @Test func aStrapKilledAndRestartedMidRideLeavesAGapNotAnEnd() async throws {
        try await EmulatedRig.with(["tacx-fec", "heart-rate"], "a strap killed and restarted") { rig in
            let source = LiveRideSource(
                central: rig.bluetooth.central,
                requests: [.init(.trainer, device: EmulatedRig.address(0).description), .init(.heartRate, device: EmulatedRig.address(1).description)],
                configuration: .onRig(retryDelay: .milliseconds(300)))
            let session = RideSession(source: source)
            try await riding(session, rig) {
                let stream = try await session.start()
                _ = try await guarded("heart rate at first") { try await samples(stream) { $0.last?.heartRateBpm != nil } }
                await rig.kill("heart-rate")
                let gap = try await guarded("the gap") {
                    try await samples(stream) { $0.last.map { $0.heartRateBpm == nil && $0.powerWatts != nil } ?? false }
                }
                // Missing, never zero.
                #expect(!gap.contains { $0.heartRateBpm == 0 })
                try await rig.restart("heart-rate", index: 1)
                let back = try await guarded("heart rate again", seconds: 90) {
                    try await samples(stream) { $0.last?.heartRateBpm != nil }
                }
                #expect(back.last?.powerWatts != nil)
                #expect(!back.contains { $0.heartRateBpm == 0 })
            }
        }
    }

    @Test func aRecordedRideReplaysIntoTheSameSamples() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ride-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let live = try await EmulatedRig.with(["tacx-fec", "heart-rate"], "a recorded ride") { rig in
            let source = LiveRideSource(
                central: rig.bluetooth.central,
                requests: [.init(.trainer, device: EmulatedRig.address(0).description), .init(.heartRate, device: EmulatedRig.address(1).description)], configuration: .onRig())
            let session = RideSession(source: source, configuration: .init(recordPath: path))
            let live: [RideSample]
            do {
                let stream = try await session.start()
                live = try await guarded("four seconds of riding") { try await samples(stream) { $0.filter { $0.trigger == .tick }.count >= 4 } }
            } catch {
                await session.stop()
                throw error
            }
            await session.stop()
            return live
        }
        let log = try ValueLogReader.read(path: path)
        #expect(log.header.startedAt != nil)
        #expect(Set(log.records.map(\.characteristic)) == [.tacxFECNotify, .heartRateMeasurement])
        var merger = RideMerger()
        var replayed: [RideSample] = []
        for await event in try await RecordedRideSource(records: log.records, pace: .asFastAsPossible).start() {
            if let sample = merger.receive(event), sample.trigger == .update { replayed.append(sample) }
        }
        let liveUpdates = live.filter { $0.trigger == .update && $0.time > 0 }
        // Every live update was recorded (the last ones may still be in flight when the ride stops).
        #expect(replayed.count >= liveUpdates.count)
        for (a, b) in zip(liveUpdates, replayed) {
            #expect(a.time == b.time)
            #expect(a.speedKmh == b.speedKmh)
            #expect(a.cadenceRpm == b.cadenceRpm)
            #expect(a.powerWatts == b.powerWatts)
            #expect(a.heartRateBpm == b.heartRateBpm)
            #expect(a.sources == b.sources)
            #expect(abs(a.distanceMeters - b.distanceMeters) < 0.01)
        }
    }

    @Test func aWorkoutStepsTheTrainerTarget() async throws {
        try await EmulatedRig.with(["ftms-bike"], "aWorkoutStepsTheTrainerTarget") { rig in
            let source = LiveRideSource(central: rig.bluetooth.central, requests: [.init(.trainer, device: EmulatedRig.address(0).description)], configuration: .onRig())
            let session = RideSession(source: source, configuration: .init(ftpWatts: 200))
            try await riding(session, rig) {
                let stream = try await session.start()
                let workout = Workout(name: "two steps", steps: [
                    WorkoutStep(kind: "steady", durationSeconds: 2, startPower: .ftpFraction(0.6)),
                    WorkoutStep(kind: "steady", durationSeconds: 30, startPower: .watts(260)),
                ])
                try await session.ride(workout)
                let seen = try await guarded("the second step's 260 W") { try await samples(stream) { settled($0, at: 260) } }
                #expect(seen.contains { $0.target == .power(watts: 120) && $0.workout?.stepIndex == 0 })
                let last = try #require(seen.last)
                #expect(last.target == .power(watts: 260))
                #expect(last.workout?.stepIndex == 1)
                #expect(last.workout?.stepCount == 2)
            }
        }
    }

    /// Issue 29 item 3: the page's commands. A pause frees the trainer and stops the workout's
    /// clock; start goes on where it stopped; lap answers with the lap's summary; workout starts
    /// the ride's workout again from its first step.
    @Test func pauseStartLapAndWorkoutFromTheCommands() async throws {
        try await EmulatedRig.with(["ftms-bike"], "pauseStartLapAndWorkoutFromTheCommands") { rig in
            let source = LiveRideSource(central: rig.bluetooth.central, requests: [.init(.trainer, device: EmulatedRig.address(0).description)], configuration: .onRig())
            let session = RideSession(source: source, configuration: .init(ftpWatts: 200))
            try await riding(session, rig) {
                let stream = try await session.start()
                await #expect(throws: RideError("no workout in this ride: start it with --workout FILE")) {
                    _ = try await session.perform(.startWorkout)
                }
                await #expect(throws: RideError("not paused; `pause` first")) { _ = try await session.perform(.resume) }
                let workout = Workout(name: "long", steps: [WorkoutStep(kind: "steady", durationSeconds: 600, startPower: .watts(150))])
                try await session.ride(workout)
                _ = try await guarded("two workout ticks") { try await samples(stream) { $0.filter { $0.trigger == .tick }.count >= 2 } }
                #expect(await session.currentTarget == .power(watts: 150))

                #expect(try await session.perform(.pause) == "paused")
                #expect(await session.isPaused)
                #expect(await session.currentTarget == nil)
                await #expect(throws: RideError("already paused; `start` goes on")) { _ = try await session.perform(.pause) }
                // (A tick made before the pause may still be waiting in the stream: the paused ones have no target.)
                let paused = try await guarded("three paused ticks") {
                    try await samples(stream) { $0.filter { $0.trigger == .tick && $0.target == nil }.count >= 3 }
                }
                let positions = paused.filter { $0.trigger == .tick && $0.target == nil }.compactMap { $0.workout?.elapsedSeconds }
                #expect(positions.count == 3 && Set(positions).count == 1, "the workout's clock stands still: \(positions)")

                #expect(try await session.perform(.resume) == "riding on (workout)")
                let after = try await guarded("two ticks after the pause") { try await samples(stream) { $0.filter { $0.trigger == .tick }.count >= 2 } }
                #expect(after.last?.target == .power(watts: 150))
                let elapsed = try #require(after.last?.workout?.elapsedSeconds)
                #expect(elapsed > positions[0] && elapsed < (after.last?.time ?? 0) - 1.5, "the pause is not counted: \(elapsed)")

                let lap = try await session.perform(.lap)
                #expect(lap.hasPrefix("lap 1: "), "\(lap)")
                #expect(lap.contains(" W average"), "\(lap)")
                #expect(try await session.perform(.lap).hasPrefix("lap 2: "))
                #expect(try await session.perform(.startWorkout) == "workout long started")
                let again = try await guarded("a tick of the restarted workout") {
                    try await samples(stream) { $0.contains { $0.trigger == .tick && ($0.workout?.elapsedSeconds ?? 99) < 2 } }
                }
                #expect(again.last?.workout?.stepIndex == 0)
            }
        }
    }
}
