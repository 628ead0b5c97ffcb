import Foundation
import Testing
@testable import BluetideCommands

@Suite(.serialized) struct RideCommandTests {
    static func temporary(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("ride-cli-\(UUID().uuidString.prefix(8))-\(name)").path
    }

    static func json(_ line: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
    }

    @Test func ergOnAnEmulatedTacxSettlesAndRecordsExportsAndReplays() async throws {
        let log = Self.temporary("ride.jsonl"), tcx = Self.temporary("ride.tcx")
        defer {
            try? FileManager.default.removeItem(atPath: log)
            try? FileManager.default.removeItem(atPath: tcx)
        }
        let collector = LineCollector()
        let ride = try RideCommand.parseAsRoot([
            "--emulate", "tacx-fec,heart-rate", "--transport", privateLink(), "--erg", "150", "--duration", "12", "--scan", "2",
            "--json", "--record", log,
        ])
        let run = try #require(ride as? RideRunCommand)
        try await withGuard(90) { try await run.execute(collector.output) }
        let objects = collector.lines.compactMap(Self.json)
        #expect(objects.contains { $0["event"] as? String == "device" && $0["role"] as? String == "fec-trainer" })
        #expect(objects.contains { $0["event"] as? String == "device" && $0["role"] as? String == "heart-rate" })
        let samples = objects.filter { $0["trigger"] as? String == "tick" }
        #expect(samples.count >= 3, "\(collector.lines)")
        // The emulated rider pushes 200 W; ERG holds the trainer at 150 W.
        let powers = samples.compactMap { $0["power_w"] as? Int }
        #expect(powers.suffix(2).allSatisfy { abs($0 - 150) <= 3 }, "\(powers)")
        #expect(samples.last?["heart_rate_bpm"] as? Int != nil)

        let export = try RideCommand.parseAsRoot(["export", log, "--format", "tcx", "--output", tcx])
        let exporter = try #require(export as? RideExportCommand)
        let exportLines = LineCollector()
        try await withGuard { try await exporter.execute(exportLines.output) }
        #expect(exportLines.lines == ["wrote \(tcx)"])
        let document = try String(contentsOfFile: tcx, encoding: .utf8)
        #expect(document.contains("<Activity Sport=\"Biking\">"))
        #expect(document.components(separatedBy: "<Trackpoint>").count - 1 >= 3)
        #expect(document.contains("<ns3:Watts>15"))

        let csv = LineCollector()
        let csvExport = try #require(try RideCommand.parseAsRoot(["export", log, "--format", "csv"]) as? RideExportCommand)
        try await withGuard { try await csvExport.execute(csv.output) }
        #expect(csv.lines.first?.hasPrefix("time_s,timestamp,speed_kmh,cadence_rpm,power_w,heart_rate_bpm,distance_m,target") == true)

        let replayed = LineCollector()
        let replay = try #require(try RideCommand.parseAsRoot(["--replay", log, "--pace", "fast"]) as? RideRunCommand)
        try await withGuard { try await replay.execute(replayed.output) }
        #expect(replayed.lines.contains { $0.contains(" W ") || $0.contains(" W") }, "\(replayed.lines)")
        #expect(replayed.lines.filter { $0.contains("km/h") }.count >= samples.count - 2)
    }

    @Test func badOptionsSayWhatToTry() async throws {
        let both = try #require(try RideCommand.parseAsRoot(["--erg", "200", "--grade", "3"]) as? RideRunCommand)
        #expect(try await failureMessage { try await both.execute(LineCollector().output) }
            == "choose one of --erg, --grade, --resistance and --workout")
        let erg = try #require(try RideCommand.parseAsRoot(["--erg", "9000"]) as? RideRunCommand)
        #expect(try await failureMessage { try await erg.execute(LineCollector().output) } == "--erg 9000: expected 0…4000 watts")
        let missing = try #require(try RideCommand.parseAsRoot(["export", "/nonexistent/ride.jsonl"]) as? RideExportCommand)
        let message = try await failureMessage { try await missing.execute(LineCollector().output) }
        #expect(message?.hasPrefix("/nonexistent/ride.jsonl: ") == true)
        let format = try #require(try RideCommand.parseAsRoot(["export", "x.jsonl", "--format", "gpx"]) as? RideExportCommand)
        #expect(try await failureMessage { try await format.execute(LineCollector().output) } == "--format gpx: expected tcx or csv")
        let workout = try #require(try RideCommand.parseAsRoot(["--workout", "/nonexistent/plan.zwo"]) as? RideRunCommand)
        #expect(try await failureMessage { try await workout.execute(LineCollector().output) } == "--workout /nonexistent/plan.zwo: cannot read the file")
        let nobody = try #require(try RideCommand.parseAsRoot(["--transport", privateLink(), "--scan", "1"]) as? RideRunCommand)
        let none = try await failureMessage { try await nobody.execute(LineCollector().output) }
        #expect(none?.hasPrefix("not found within 1 s: no trainer or sensor (seen: no device at all)") == true, "\(none ?? "")")
    }
}
