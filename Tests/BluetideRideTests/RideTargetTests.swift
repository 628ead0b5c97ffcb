import Bluetide
import BluetideProfiles
import BluetideRecording
import Foundation
import Testing
@testable import BluetideRide

/// Issue 21 item 8: targets change during a ride, are recorded, and come back in a replay and an
/// export; a ride's summary; typed commands.
@Suite struct RideTargetLogTests {
    @Test(arguments: [RideDeviceRole.ftmsTrainer, .fecTrainer])
    func everyTargetIsRecordedAsTheTrainersWriteAndReadBack(role: RideDeviceRole) throws {
        let range = SupportedResistanceLevelRange(minimumRaw: 0, maximumRaw: 200, incrementRaw: 1)
        let targets: [RideTarget?] = [.power(watts: 215), .grade(percent: 3.5), .grade(percent: -2), .resistance(percent: 30), nil]
        var reader = RideTargetLog.Reader()
        var back: [RideTarget??] = []
        for target in targets {
            let entries = RideTargetLog.entries(for: target, role: role, resistanceRange: range)
            #expect(!entries.isEmpty)
            var got: RideTarget?? = nil
            for entry in entries {
                if let t = reader.target(characteristic: entry.characteristic, bytes: entry.bytes, isWrite: !entry.isRead) { got = t }
            }
            back.append(got)
        }
        let expected: [RideTarget??] = role == .ftmsTrainer
            ? [.power(watts: 215), .grade(percent: 3.5), .grade(percent: -2), .resistance(percent: 30), .some(nil)]
            // FE-C has no reset: free riding is a flat road.
            : [.power(watts: 215), .grade(percent: 3.5), .grade(percent: -2), .resistance(percent: 30), .grade(percent: 0)]
        #expect(back == expected)
        // The bytes are the trainer's own protocol.
        let erg = try #require(RideTargetLog.entries(for: .power(watts: 200), role: role).last)
        if role == .ftmsTrainer {
            #expect(erg.characteristic == .fitnessMachineControlPoint && erg.bytes == [0x05, 0xC8, 0x00])
        } else {
            #expect(erg.characteristic == .tacxFECWrite)
            #expect(try FECFrame(bytes: erg.bytes).page == .targetPower(FECTargetPower(watts: 200)))
        }
    }

    @Test func otherValuesSetNoTarget() {
        var reader = RideTargetLog.Reader()
        #expect(reader.target(characteristic: .fitnessMachineControlPoint, bytes: [0x00], isWrite: true) == nil, "request control")
        #expect(reader.target(characteristic: .fitnessMachineControlPoint, bytes: [0x80, 0x05, 0x01], isWrite: false) == nil)
        #expect(reader.target(characteristic: .tacxFECWrite, bytes: [0xA4, 0x01], isWrite: true) == nil)
        #expect(reader.target(characteristic: .heartRateMeasurement, bytes: [0, 60], isWrite: false) == nil)
        #expect(RideTargetLog.entries(for: .power(watts: 100), role: .heartRate).isEmpty)
    }
}

/// A sample carries the target in force at its own time: a value stamped before a target change
/// but handled after it (late on a busy machine) keeps the target it was ridden at, as the
/// replay of the log, which orders by time, gives it.
@Suite struct RideTargetTimeTests {
    @Test func aLateValueKeepsTheTargetOfItsOwnTime() async throws {
        let strap = DeviceIdentity(address: "C0:00:00:00:00:02", name: "HRM")
        let trainer = DeviceIdentity(address: "C0:00:00:00:00:01", name: "Trainer")
        func heartRate(_ time: Double) -> ValueRecord {
            ValueRecord(timestamp: time, device: strap, characteristic: .heartRateMeasurement, operation: .notify,
                        value: HeartRateMeasurement(beatsPerMinute: 120).bytes)
        }
        let erg = try #require(RideTargetLog.entries(for: .power(watts: 150), role: .ftmsTrainer).last)
        let write = ValueRecord(timestamp: 5, device: trainer, characteristic: erg.characteristic, operation: .write, value: erg.bytes)
        let session = RideSession(source: RecordedRideSource(records: [heartRate(1), write, heartRate(4.5), heartRate(6)], pace: .asFastAsPossible))
        let samples = try await guarded("the replay's samples") {
            var samples: [RideSample] = []
            for await sample in try await session.start() { samples.append(sample) }
            return samples
        }
        let targets = samples.filter { $0.trigger != .tick }.map { "\($0.time): \($0.target.map { "\($0)" } ?? "free")" }
        #expect(targets == ["1.0: free", "4.5: free", "6.0: \(RideTarget.power(watts: 150))"])
    }
}

@Suite struct RideControlCommandTests {
    @Test func parsesTheCommandsAndSaysWhatIsWrong() throws {
        #expect(try RideControlCommand.parse("erg 220") == .target(.power(watts: 220)))
        #expect(try RideControlCommand.parse("  ERG   180 ") == .target(.power(watts: 180)))
        #expect(try RideControlCommand.parse("grade 3.5") == .target(.grade(percent: 3.5)))
        #expect(try RideControlCommand.parse("grade -2") == .target(.grade(percent: -2)))
        #expect(try RideControlCommand.parse("slope −1.5") == .target(.grade(percent: -1.5)))
        #expect(try RideControlCommand.parse("resistance 30") == .target(.resistance(percent: 30)))
        #expect(try RideControlCommand.parse("free") == .free)
        #expect(try RideControlCommand.parse("help") == .help)
        #expect(try RideControlCommand.parse("pause") == .pause)
        #expect(try RideControlCommand.parse("Start") == .resume)
        #expect(try RideControlCommand.parse("resume") == .resume)
        #expect(try RideControlCommand.parse("lap") == .lap)
        #expect(try RideControlCommand.parse("workout") == .startWorkout)
        #expect(throws: RideError("lap takes no value; \(RideControlCommand.usage)")) { try RideControlCommand.parse("lap 2") }
        #expect(throws: RideError("erg: expected watts in 0…4000, found \"lots\"")) { try RideControlCommand.parse("erg lots") }
        #expect(throws: RideError("grade: expected percent in -40…40, found \"45\"")) { try RideControlCommand.parse("grade 45") }
        #expect(throws: RideError.self) { try RideControlCommand.parse("erg") }
        #expect(throws: RideError("unknown command \"faster\"; \(RideControlCommand.usage)")) { try RideControlCommand.parse("faster") }
    }
}

@Suite struct RideSummaryTests {
    @Test func averagesTheTicksAndLeavesOutWhatWasNeverThere() {
        var summary = RideSummary()
        #expect(summary.averagePowerWatts == nil)
        for second in 0...4 {
            summary.add(RideSample(
                time: Double(second), trigger: .tick, speedKmh: 30, powerWatts: second == 2 ? nil : 200 + second * 10,
                heartRateBpm: nil, distanceMeters: Double(second) * 8.5))
            summary.add(RideSample(time: Double(second) + 0.5, trigger: .update, powerWatts: 2000))
        }
        #expect(summary.durationSeconds == 4)
        #expect(summary.distanceMeters == 34)
        #expect(summary.averagePowerWatts == 220, "200, 210, 230, 240: the missing one counts for nothing")
        #expect(summary.maximumPowerWatts == 240)
        #expect(summary.averageHeartRateBpm == nil)
        #expect(summary.text == "0:04, 0.03 km, 220 W average (max 240 W), 30.0 km/h")
    }
}

/// The live part: a ride on an emulated trainer whose targets change mid-ride, recorded, then
/// replayed and exported with its targets.
@Suite(.serialized) struct RideTargetRecordingTests {
    @Test(arguments: ["ftms-bike", "tacx-fec"])
    func targetsChangedMidRideAreRecordedReplayedAndExported(model: String) async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ride-targets-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let live = try await EmulatedRig.with([model], "targets changed mid-ride on \(model)") { rig -> [RideSample] in
            let source = LiveRideSource(central: rig.bluetooth.central, requests: [.init(.trainer, device: EmulatedRig.address(0).description)], configuration: .onRig())
            let session = RideSession(source: source, configuration: .init(recordPath: path))
            var live: [RideSample] = []
            try await riding(session, rig) {
                let stream = try await session.start()
                try await session.setTarget(.power(watts: 150))
                // Each phase lasts until two ticks carry its target: ticks already on their way when
                // the target changed (a busy machine delivers them late) still carry the old one.
                live += try await guarded("two seconds at 150 W") { try await samples(stream) { $0.filter { $0.trigger == .tick && $0.target == .power(watts: 150) }.count >= 2 } }
                #expect(try await session.perform(RideControlCommand.parse("grade 2.5")) == "target 2.5 %")
                #expect(await session.currentTarget == .grade(percent: 2.5))
                live += try await guarded("two seconds at 2.5 %") { try await samples(stream) { $0.filter { $0.trigger == .tick && $0.target == .grade(percent: 2.5) }.count >= 2 } }
                #expect(try await session.perform(.free) == "free riding")
                live += try await guarded("two seconds free") { try await samples(stream) { $0.filter { $0.trigger == .tick && $0.target == nil }.count >= 2 } }
            }
            return live
        }
        let liveTicks = live.filter { $0.trigger == .tick }
        #expect(liveTicks.contains { $0.target == .power(watts: 150) })
        #expect(liveTicks.contains { $0.target == .grade(percent: 2.5) })
        // The log keeps the targets as the trainer's writes.
        let log = try ValueLogReader.read(path: path)
        let writes = log.records.filter { $0.operation == .write }
        #expect(writes.count == 3, "\(writes)")
        // Replayed: the same targets at the same ticks.
        let replayed = try await RideExport.samples(of: log)
        // (Free riding included: FTMS Reset, or on FE-C a flat road. The replay's last sample
        // may come before the Reset's write when no data followed it in the log, so the free
        // phase is compared tick by tick like the others.)
        // FE-C has no "free" page: free riding is recorded as a flat road, so it replays as 0 %.
        let freeReplayed: RideTarget? = model == "tacx-fec" ? .grade(percent: 0) : nil
        for tick in liveTicks {
            guard let again = replayed.first(where: { $0.time == tick.time }) else { continue }
            #expect(again.target == (tick.target ?? freeReplayed), "t=\(tick.time)")
        }
        #expect(liveTicks.last?.target == nil)
        #expect(replayed.contains { $0.target == .power(watts: 150) })
        #expect(replayed.contains { $0.target == .grade(percent: 2.5) })
        // Exported: the CSV's target column is filled.
        let csv = try await RideExport.document(ofLogAt: path, format: .csv)
        #expect(csv.contains("\"150 W\""))
        #expect(csv.contains("\"2.5 %\""))
    }
}
