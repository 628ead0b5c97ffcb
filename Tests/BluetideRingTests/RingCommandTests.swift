import Bluetide
import BluetideSupport
import BluetideTestSupport
import Foundation
import Synchronization
import Testing
@testable import BluetideCommands
@testable import BluetideRing

/// Collects a command's output lines.
final class RingLines: Sendable {
    private let storage = Observed<[String]>([])
    var lines: [String] { storage.value }
    var output: CommandOutput { CommandOutput(emit: { line in self.storage.append(line) }) }

    /// Waits (on the lines as they are printed) until `condition` holds for all of them, for at
    /// most `seconds` of run time; false when it did not.
    @discardableResult
    func wait(_ seconds: Double, until condition: @escaping @Sendable ([String]) -> Bool) async -> Bool {
        let storage = storage
        return (try? await withRunTimeLimit(seconds, onTimeout: { RingTestTimeout(what: "lines") }) {
            try await storage.wait(until: condition)
        }) != nil
    }
}

extension RingPairCommand {
    /// Runs `ring pair` with its emulated world and its scan in virtual time: the `--scan-time`
    /// passes in next to no wall time and every emulated ring advertising in it is heard,
    /// however busy the machine.
    func executeInVirtualTime(_ output: CommandOutput, input: @escaping @Sendable () -> String?) async throws {
        let clock = ManualClock()
        let command = self
        try await clock.advancing { try await command.execute(output, input: input, clock: BluetideClock(clock)) }
    }
}

/// A temporary folder for one test.
struct Scratch {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("ring-cli-\(UUID().uuidString.prefix(8))")
    var pairing: String { url.appendingPathComponent("ring.json").path }
    var db: String { url.appendingPathComponent("ring.sqlite").path }
    var out: String { url.appendingPathComponent("export").path }
    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// The `bluetide ring` commands, run in this process against the emulated ring.
@Suite(.timeLimit(.minutes(3))) struct RingCommandTests {
    @Test func pairBatterySyncExportWorkInThatOrderAgainstTheEmulatedRing() async throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        try await guarded(150, "pair, battery, sync, export") {
            let pairLines = RingLines()
            try await RingPairCommand.parse(["--first", "--emulate", "colmi-r02", "--pairing-file", scratch.pairing, "--scan-time", "30"])
                .executeInVirtualTime(pairLines.output, input: { nil })
            #expect(pairLines.lines.last?.hasPrefix("paired R02_") == true, "\(pairLines.lines)")
            let pairing = try #require(try RingPairingFile(url: URL(fileURLWithPath: scratch.pairing)).load())
            #expect(pairing.emulate == "colmi-r02")
            #expect(pairing.transport == "virtual")

            // No --emulate or --transport from here on: the remembered ring is used.
            let battery = RingLines()
            try await RingBatteryCommand.parse(["--pairing-file", scratch.pairing, "--json"]).execute(battery.output)
            let json = try #require(battery.lines.first)
            #expect(json.contains("\"levelPercent\":"))

            let sync = RingLines()
            try await RingSyncCommand.parse(["--pairing-file", scratch.pairing, "--db", scratch.db, "--json"]).execute(sync.output)
            let report = try JSONDecoder().decode(RingSyncReport.self, from: Data(try #require(sync.lines.first).utf8))
            #expect(report.added > 0)
            #expect(report.days.count == 7)

            let again = RingLines()
            try await RingSyncCommand.parse(["--pairing-file", scratch.pairing, "--db", scratch.db]).execute(again.output)
            #expect(again.lines.first?.contains(": 0 new samples") == true, "\(again.lines)")

            let export = RingLines()
            try await RingExportCommand.parse(["--db", scratch.db, "--out", scratch.out]).execute(export.output)
            let csv = try String(contentsOfFile: scratch.out + "/samples.csv", encoding: .utf8)
            let rows = csv.split(separator: "\n")
            #expect(rows.first == "time,kind,value,unit")
            #expect(rows.count == report.added + 1)
            #expect(export.lines.first == "wrote \(report.added) samples to \(scratch.out)/samples.csv")
        }
    }

    @Test func pairListsRingsStrongestFirstAndTakesTheNumberTyped() async throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        try await guarded(90, "pair with a choice") {
            let lines = RingLines()
            try await RingPairCommand.parse([
                "--emulate", "colmi-r02@-75,colmi-r02@-45,heart-rate@-30", "--pairing-file", scratch.pairing, "--scan-time", "30",
            ]).executeInVirtualTime(lines.output, input: { "2" })
            let rows = lines.lines.filter { $0.hasPrefix("1  ") || $0.hasPrefix("2  ") || $0.hasPrefix("3  ") }
            #expect(rows.count == 2, "\(lines.lines)")  // the heart-rate strap is not a ring
            #expect(rows.first?.contains("-45 dBm") == true && rows.first?.contains("▂▄▆█") == true, "\(rows)")
            #expect(rows.last?.contains("-75 dBm") == true && rows.last?.contains("▂···") == true, "\(rows)")
            #expect(lines.lines.contains("which ring? [1-2, Enter = 1]"))
            let picked = try #require(try RingPairingFile(url: URL(fileURLWithPath: scratch.pairing)).load())
            #expect(rows.last?.contains("\(picked.address)") == true)
        }
    }

    @Test func badInputAndMissingPairingAreOneLineErrorsThatSayWhatToTry() async throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        func message(_ body: @escaping @Sendable () async throws -> Void) async throws -> String? {
            do {
                try await guarded(60, "a failing command") { try await body() }
                return nil
            } catch let failure as CommandFailure {
                return failure.message
            }
        }
        let cases: [(String, @Sendable () async throws -> Void)] = [
            ("ring pair", { try await RingBatteryCommand.parse(["--pairing-file", scratch.pairing]).execute(RingLines().output) }),
            ("--days 9", { try await RingSyncCommand.parse(["--pairing-file", scratch.pairing, "--days", "9"]).execute(RingLines().output) }),
            ("csv or jsonl", { try await RingExportCommand.parse(["--db", scratch.db, "--out", scratch.out, "--format", "xlsx"]).execute(RingLines().output) }),
            ("YYYY-MM-DD", { try await RingExportCommand.parse(["--db", scratch.db, "--out", scratch.out, "--from", "2026-13-01"]).execute(RingLines().output) }),
            ("ring sync", { try await RingExportCommand.parse(["--db", scratch.db, "--out", scratch.out]).execute(RingLines().output) }),
            ("--yes", { try await RingResetCommand.parse(["--pairing-file", scratch.pairing]).execute(RingLines().output) }),
            ("--yes", { try await RingPowerOffCommand.parse(["--pairing-file", scratch.pairing]).execute(RingLines().output) }),
            ("--set age=300: expected years 1 to 120 for age", {
                try await RingSettingsCommand.parse(["--pairing-file", scratch.pairing, "--set", "age=300"]).execute(RingLines().output)
            }),
            ("steps of 5", { try await RingHeartRateSettingsCommand.parse(["--pairing-file", scratch.pairing, "--interval", "7"]).execute(RingLines().output) }),
            ("no ring found", {
                try await RingPairCommand.parse(["--first", "--emulate", "heart-rate", "--pairing-file", scratch.pairing, "--scan-time", "30"])
                    .executeInVirtualTime(RingLines().output, input: { nil })
            }),
        ]
        for (expected, body) in cases {
            let text = try #require(try await message(body), "no failure for \(expected)")
            #expect(text.contains(expected), "\(text)")
            #expect(!text.contains("\n"), "\(text)")
        }
    }
}

/// `bluetide ring settings` against the emulated ring.
@Suite(.timeLimit(.minutes(2))) struct RingSettingsCommandTests {
    @Test func settingsAreListedAsKeysTheSetOptionTakesAndChangedWithAReadBack() async throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        try await guarded(90, "ring settings") {
            try await RingPairCommand.parse(["--first", "--emulate", "colmi-r02", "--pairing-file", scratch.pairing, "--scan-time", "30"])
                .executeInVirtualTime(RingLines().output, input: { nil })
            // The emulated ring lives in this process: one --emulate per command, like the CLI.
            let read = RingLines()
            try await RingSettingsCommand.parse(["--pairing-file", scratch.pairing]).execute(read.output)
            #expect(read.lines.first?.hasSuffix(": settings") == true, "\(read.lines)")
            #expect(read.lines.contains("  hr-interval      30 min"), "\(read.lines)")
            #expect(read.lines.contains("  steps-goal       8000 steps"), "\(read.lines)")
            #expect(read.lines.contains("  time-format      24h"), "\(read.lines)")
            #expect(!read.lines.contains { $0.contains("brightness") }, "no screen, no display keys: \(read.lines)")

            let change = RingLines()
            try await RingSettingsCommand.parse([
                "--pairing-file", scratch.pairing, "--set", "steps-goal=12000", "--set", "units=imperial", "--set", "stress=off", "--json",
            ]).execute(change.output)
            let record = try #require(change.lines.first.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
            #expect(record["type"] as? String == "ring-settings")
            #expect(record["stepsGoal"] as? Int == 12000 && record["units"] as? String == "imperial")
            #expect(record["stressMonitoring"] as? Bool == false && record["spo2Monitoring"] as? Bool == true)
            #expect(record["changed"] as? [String] == ["steps-goal", "stress", "units"])
            #expect(record["device"] != nil)
        }
    }
}

/// `bluetide ring watch` against the emulated ring.
@Suite(.timeLimit(.minutes(2))) struct RingWatchCommandTests {
    @Test func watchContinuousUsesThe1EStreamAndStopsItOnTheRing() async throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        try await guarded(90, "watch --continuous") {
            try await RingPairCommand.parse(["--first", "--emulate", "colmi-r02", "--pairing-file", scratch.pairing, "--scan-time", "30"])
                .executeInVirtualTime(RingLines().output, input: { nil })
            let lines = RingLines()
            try await RingWatchCommand.parse(["--pairing-file", scratch.pairing, "--continuous"]).execute(lines.output) {
                await lines.wait(60) { $0.filter { $0.hasPrefix("heart rate ") }.count >= 3 }
                return "end of test"
            }
            #expect(lines.lines.first?.contains("watching heart rate (continuous stream)") == true, "\(lines.lines)")
            let values = lines.lines.filter { $0.hasPrefix("heart rate ") }.compactMap { Int($0.split(separator: " ")[2]) }
            // The 1E stream has no "measuring" phase: every line is a value.
            #expect(values.count >= 3 && values.allSatisfy { (40...200).contains($0) }, "\(lines.lines)")
            #expect(lines.lines.last == "stopped (end of test); measurement ended on the ring")
        }
    }

    @Test func stepTotalsAreLinesAndReadingRecords() throws {
        let totals = COLMILiveActivity(steps: 4321, caloriesRaw: 1800, distanceMeters: 3105)
        #expect(RingWatchCommand.line(.activity(totals), json: nil) == "today 4321 steps, 3105 m")
        let record = try #require(RingWatchCommand.line(.activity(totals), json: RingWatchClock(device: .string("ring"))))
        #expect(record.contains("\"kind\":\"steps\"") && record.contains("\"steps\":4321") && record.contains("\"distanceMetres\":3105"))
        #expect(record.contains("\"type\":\"reading\"") && record.contains("\"caloriesRaw\":1800"))
    }

    @Test func spo2AndContinuousTogetherAreRefused() async throws {
        do {
            try await RingWatchCommand.parse(["--spo2", "--continuous"]).execute(RingLines().output) { "never" }
            Issue.record("accepted")
        } catch let failure as CommandFailure {
            #expect(failure.status == .usage && failure.message.contains("--spo2 or --continuous"))
        }
    }

    @Test func watchPrintsHeartRateReadingsAsJSONUntilTheDurationEnds() async throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        try await guarded(90, "watch") {
            try await RingPairCommand.parse(["--first", "--emulate", "colmi-r02", "--pairing-file", scratch.pairing, "--scan-time", "30"])
                .executeInVirtualTime(RingLines().output, input: { nil })
            let lines = RingLines()
            // A timer, not --duration: that installs signal handlers, and children of the test process
            // would inherit SIGTERM as ignored.
            // Ends once a measurement has run to its end (three readings, one of them the last),
            // or after 60 s; a fixed 5 s window gave 2 readings on a busy machine.
            try await RingWatchCommand.parse(["--pairing-file", scratch.pairing, "--json"]).execute(lines.output) {
                await lines.wait(60) { lines in
                    let readings = lines.filter { $0.contains("\"kind\":\"heart-rate\"") }
                    return readings.count >= 3 && readings.contains { $0.contains("\"measuring\":false") }
                }
                return "end of test"
            }
            let readings = lines.lines.filter { $0.contains("\"kind\":\"heart-rate\"") }
            #expect(readings.count >= 3, "\(lines.lines)")
            #expect(readings.first?.contains("\"measuring\":true") == true)
            #expect(readings.contains { $0.contains("\"measuring\":false") })
            #expect(lines.lines.contains { $0.contains("\"type\":\"battery\"") })
        }
    }
}

/// `bluetide ring sync --every`: two emulated rings on one radio, in turns, round after round.
@Suite(.timeLimit(.minutes(2))) struct RingScheduledSyncTests {
    @Test func twoRingsTakeTurnsAndOneSwitchedOffForARoundCatchesUpAfter() async throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        try FileManager.default.createDirectory(at: scratch.url, withIntermediateDirectories: true)
        try await guarded(100, "scheduled sync") {
            let session = try await DeviceSession.open(try DeviceSessionOptions.parse(["--emulate", "colmi-r02,colmi-r10"]), conversation: nil)
            let rings = session.emulated.map { ("\($0.address)", $0.advertisedName) }
            #expect(rings.count == 2)
            let store = try RingStore(path: scratch.db)
            let scheduled = RingScheduledSync(session: session, rings: rings, store: store, timeout: 3, options: Ring.Options(), days: 2)
            let outcomes = RingLinesOf<RingScheduledSync.Outcome>()
            let off = session.emulated[1]
            // Between rounds: the R10 goes quiet after round 1 and is back after round 2. The
            // pause itself is not waited for (no wall-clock sleeps).
            await scheduled.run(rounds: 3, every: .seconds(60), wait: { pause in
                #expect(pause <= .seconds(60))
                let finished = outcomes.items.count
                if finished == 2 { try? await off.bluetooth.peripheral.stopAdvertising() }
                if finished == 4 {
                    try? await off.bluetooth.peripheral.startAdvertising(off.advertising.advertisingData, scanResponse: off.advertising.scanResponse)
                }
                return true
            }, report: { outcomes.append($0) })
            await session.close()
            let all = outcomes.items
            #expect(all.map(\.round) == [1, 1, 2, 2, 3, 3])
            #expect(all.map(\.ring) == [rings[0].1, rings[1].1, rings[0].1, rings[1].1, rings[0].1, rings[1].1])
            #expect(all[0].report.map { $0.added > 0 } == true && all[1].report.map { $0.added > 0 } == true, "\(all)")
            // Round 2: the R02 is synced (nothing new but today's latest), the R10 is reported, not fatal.
            #expect(all[2].report != nil && all[3].report == nil && all[3].failure?.isEmpty == false, "\(all)")
            #expect(all[4].report != nil && all[5].report != nil, "\(all)")
            // One database holds both rings' history.
            for peripheral in session.emulated {
                #expect(try store.lastSync(ring: "\(peripheral.address)") != nil, "\(peripheral.address)")
            }
            #expect(try store.sampleCount() == all.compactMap(\.report).reduce(0) { $0 + $1.added })
            let line = RingSyncCommand.line(all[3], database: scratch.db, json: false)
            #expect(line.contains("round 2: \(rings[1].1): not synced (") && line.hasSuffix("; trying again next round"), "\(line)")
        }
    }

    @Test func everyTakesSecondsMinutesAndHoursAndRefusesTheRest() throws {
        #expect(try RingSyncCommand.interval("90") == .seconds(90))
        #expect(try RingSyncCommand.interval("10m") == .seconds(600))
        #expect(try RingSyncCommand.interval("1h") == .seconds(3600))
        #expect(try RingSyncCommand.interval("1.5s") == .milliseconds(1500))
        for bad in ["0", "soon", "-5m", "9d", "0.5s"] {
            #expect(throws: CommandFailure.self) { try RingSyncCommand.interval(bad) }
        }
    }
}

/// A thread-safe list filled from callbacks.
final class RingLinesOf<T: Sendable>: Sendable {
    private let storage = Mutex<[T]>([])
    var items: [T] { storage.withLock { $0 } }
    func append(_ item: T) { storage.withLock { $0.append(item) } }
}
