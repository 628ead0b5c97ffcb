import BluetideBase
import BluetideProfiles
import BluetideRecording
import BluetideTestSupport
import Foundation
import Synchronization
import Testing
@testable import BluetideCommands

/// `ride --replay`, `ride export` and `replay --as-peripheral` read their value log as a stream:
/// output before the rest of the file is read, damaged lines named, `--strict` stopping.
@Suite struct StreamedReplayCommandTests {
    static let header = ValueLogFormat.line(for: ValueLogHeader(startedAt: WallClockTime(Date(timeIntervalSince1970: 1_795_000_000))))

    /// A heart-rate notification `step` half-seconds into the ride.
    static func heartRate(_ step: Int) -> String {
        let record = ValueRecord(
            timestamp: Double(step) * 0.5, device: DeviceIdentity(address: "C0:00:00:00:00:02", name: "HRM"),
            characteristic: .heartRateMeasurement, operation: .notify,
            value: HeartRateMeasurement(beatsPerMinute: UInt16(100 + step % 60)).bytes)
        return (try? ValueLogFormat.line(for: record)) ?? ""
    }

    /// The `type` of a `--json` line.
    static func type(of line: String) -> String? {
        ((try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any])?["type"] as? String
    }

    static func file(_ lines: [String]) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("streamed-cli-\(UUID().uuidString.prefix(8)).jsonl").path
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// `ride --replay` on a 50,000-line recording fed through a FIFO: its device line and first
    /// sample are printed while the writer still holds back all but the first seconds, then the
    /// ride plays to its end.
    @Test func rideReplayPrintsBeforeTheFileIsRead() async throws {
        let total = 50_000
        let feeder = try FIFOFeeder(head: [Self.header] + (0..<10).map(Self.heartRate)) { write in
            for step in 10..<total { write(Self.heartRate(step)) }
        }
        defer { feeder.remove() }
        let writtenAtFirstSample = Mutex<Int?>(nil)
        let samples = Mutex(0)
        let lastSampleTime = Mutex<Double?>(nil)
        let lines = Mutex<[String]>([])
        let output = CommandOutput(emit: { line in
            if lines.withLock({ $0.count < 4 }) { lines.withLock { $0.append(line) } }
            guard Self.type(of: line) == "sample" else { return }
            let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
            lastSampleTime.withLock { $0 = (object?["time"] as? [String: Any])?["monotonic"] as? Double }
            if samples.withLock({ $0 += 1; return $0 == 1 }) {
                writtenAtFirstSample.withLock { $0 = feeder.linesWritten }
                feeder.release()
            }
        })
        let ride = try #require(try RideCommand.parseAsRoot(["--replay", feeder.path, "--pace", "fast", "--json"]) as? RideRunCommand)
        try await withGuard(300) { try await ride.execute(output) }
        #expect(writtenAtFirstSample.withLock { $0 } == 11, "the first sample came with only the header and 10 records written")
        #expect(lines.withLock { $0.first.map(Self.type(of:)) } == "device", "\(lines.withLock { $0 })")
        // Readings every half second up to 99,999.5 s: the last tick is at 99,999 s. (The session keeps
        // the newest 1,024 samples when the printer lags, so a replay as fast as possible may skip some.)
        #expect(samples.withLock { $0 } > 1)
        #expect(lastSampleTime.withLock { $0 } == Double((total - 1) / 2), "played to the end")
        #expect(feeder.finished, "\(feeder.error ?? "")")
    }

    /// A damaged line: `ride --replay` plays past it, `--strict` stops with one line naming it
    /// (exit 1); `ride export --strict` likewise. A recording without ride values says so.
    @Test func damagedLinesAndEmptyRecordings() async throws {
        let damaged = try Self.file([Self.header] + (0..<6).map(Self.heartRate) + ["{broken"] + (6..<12).map(Self.heartRate))
        defer { try? FileManager.default.removeItem(atPath: damaged) }
        let lenient = LineCollector()
        let ride = try #require(try RideCommand.parseAsRoot(["--replay", damaged, "--pace", "fast"]) as? RideRunCommand)
        try await withGuard(60) { try await ride.execute(lenient.output) }
        #expect(lenient.lines.filter { !$0.hasPrefix("#") }.count == 5, "every second of the ride: \(lenient.lines)")

        let strict = try #require(try RideCommand.parseAsRoot(["--replay", damaged, "--pace", "fast", "--strict"]) as? RideRunCommand)
        let message = try await failureMessage { try await withGuard(60) { try await strict.execute(LineCollector().output) } }
        #expect(message?.hasPrefix(damaged) == true && message?.contains("line 8") == true && message?.contains("--strict") == true,
                "\(message ?? "")")

        let export = try #require(try RideCommand.parseAsRoot(["export", damaged, "--format", "csv", "--strict"]) as? RideExportCommand)
        let exportMessage = try await failureMessage { try await export.execute(LineCollector().output) }
        #expect(exportMessage?.hasPrefix(damaged) == true && exportMessage?.contains("line 8") == true, "\(exportMessage ?? "")")
        let csv = LineCollector()
        let lenientExport = try #require(try RideCommand.parseAsRoot(["export", damaged, "--format", "csv"]) as? RideExportCommand)
        try await lenientExport.execute(csv.output)
        #expect(csv.lines.joined(separator: "\n").split(separator: "\n").count == 6, "a header and five seconds: \(csv.lines)")

        let empty = try Self.file([Self.header])
        defer { try? FileManager.default.removeItem(atPath: empty) }
        let nothing = try #require(try RideCommand.parseAsRoot(["--replay", empty, "--pace", "fast"]) as? RideRunCommand)
        #expect(try await failureMessage { try await withGuard(60) { try await nothing.execute(LineCollector().output) } }
            == "--replay \(empty): no trainer, power, speed/cadence or heart-rate values in it")
    }

    /// `replay --as-peripheral` refuses a pipe (it reads the file twice) and a damaged file with
    /// `--strict`, before it opens a transport.
    @Test func replayAsPeripheralRefusesPipesAndStrictDamage() async throws {
        let fifo = FileManager.default.temporaryDirectory.appendingPathComponent("streamed-cli-fifo-\(UUID().uuidString.prefix(8))").path
        #expect(mkfifo(fifo, 0o600) == 0)
        defer { unlink(fifo) }
        let pipe = try ReplayCommand.parse([fifo, "--as-peripheral"])
        let pipeMessage = try await failureMessage { try await pipe.run() }
        #expect(pipeMessage?.contains("not a regular file") == true, "\(pipeMessage ?? "")")

        let damaged = try Self.file([Self.header, Self.heartRate(0), "{broken", Self.heartRate(1)])
        defer { try? FileManager.default.removeItem(atPath: damaged) }
        let strict = try ReplayCommand.parse([damaged, "--as-peripheral", "--strict"])
        let strictMessage = try await failureMessage { try await strict.run() }
        #expect(strictMessage?.contains("line 3") == true && strictMessage?.contains("--strict") == true, "\(strictMessage ?? "")")
    }
}
