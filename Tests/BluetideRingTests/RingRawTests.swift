import Bluetide
import BluetideTestSupport
import Foundation
import Testing
@testable import BluetideCommands
@testable import BluetideRing

/// Raw sample rows (`ring raw`): the columns of each kind, from the spec notes' vectors.
@Suite struct RingRawFormatTests {
    @Test func rowsCarryTimeSecondsKindAndTheKindsColumns() throws {
        let start = Date(timeIntervalSince1970: 1_764_000_000)  // 2025-11-24T16:00:00Z
        // tahnok firehose docstring (docs/specs/colmi-r02.md §8): a1 03 1d 09 07 08 fa 00 → 473, 120, -96.
        let accelPacket = try COLMIPacket(bytes: try Hex.parse("a1 03 1d 09 07 08 fa 00 00 00 00 00 00 00 00 d3"))
        let accel = RingRawSample(seconds: 1.25, sample: try COLMIRawSensorSample(payload: accelPacket.payload), packet: accelPacket.bytes)
        let ppg = RingRawSample(seconds: 0.5, sample: .ppg(raw: 12345, max: 12900, min: 11960, diff: 940), packet: [])
        let spo2 = RingRawSample(seconds: 2, sample: .spo2(raw: 9100, max: 120, min: 80, diff: 40), packet: [])
        #expect(RingRawFormat.csv.header == "time,seconds,kind,raw,max,min,diff,x,y,z")
        #expect(RingRawFormat.csv.line(accel, start: start) == "2025-11-24T16:00:01.250Z,1.250,accelerometer,,,,,473,120,-96")
        #expect(RingRawFormat.csv.line(ppg, start: start) == "2025-11-24T16:00:00.500Z,0.500,ppg,12345,12900,11960,940,,,")
        #expect(RingRawFormat.jsonl.line(spo2, start: start)
            == "{\"time\":\"2025-11-24T16:00:02.000Z\",\"seconds\":2.000,\"kind\":\"spo2\",\"raw\":9100,\"max\":120,\"min\":80,\"diff\":40}")
        #expect(RingRawFormat.jsonl.header == nil)
        var statistics = RingRawStatistics()
        for s in [ppg, accel, spo2, ppg] { statistics.add(s) }
        #expect(statistics.total == 4 && statistics.counts["ppg"] == 2 && statistics.samplesPerSecond(over: 2) == 2)
    }
}

/// `bluetide ring raw` against the emulated ring, end to end into CSV and a value log.
@Suite(.timeLimit(.minutes(2))) struct RingRawCommandTests {
    @Test func rawSamplesGoToCSVWithTimestampsAndTheSummaryCountsThem() async throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        try FileManager.default.createDirectory(at: scratch.url, withIntermediateDirectories: true)
        let csv = scratch.url.appendingPathComponent("raw.csv").path
        let values = scratch.url.appendingPathComponent("raw.values.jsonl").path
        try await guarded(90, "ring raw") {
            try await RingPairCommand.parse(["--first", "--emulate", "colmi-r02", "--pairing-file", scratch.pairing, "--scan-time", "30"])
                .executeInVirtualTime(RingLines().output, input: { nil })
            let lines = RingLines()
            // Ends once more than 20 rows are written (or after 60 s): no fixed window.
            let written = Observed(0)
            try await RingRawCommand.parse(["--pairing-file", scratch.pairing, "--out", csv, "--values", values, "--json"])
                .execute(lines.output, errors: RingLines().output, written: { count in written.update { $0 = count } }) {
                    _ = try? await withRunTimeLimit(60, onTimeout: { RingTestTimeout(what: "20 rows") }) {
                        try await written.wait { $0 > 20 }
                    }
                    return "end of test"
                }
            let rows = try String(contentsOfFile: csv, encoding: .utf8).split(separator: "\n").map(String.init)
            #expect(rows.first == "time,seconds,kind,raw,max,min,diff,x,y,z")
            let data = rows.dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
            #expect(data.count > 20 && data.allSatisfy { $0.count == 10 })
            let summary = try #require(lines.lines.last.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
            #expect(summary["type"] as? String == "raw-stream")
            #expect(summary["samples"] as? Int == data.count)
            #expect(summary["ppgSamples"] as? Int == data.filter { $0[2] == "ppg" }.count)
            #expect(summary["accelerometerSamples"] as? Int == data.filter { $0[2] == "accelerometer" }.count)
            #expect(summary["spo2Samples"] as? Int == data.filter { $0[2] == "spo2" }.count)
            #expect(summary["dropped"] as? Int == 0)
            #expect((summary["samplesPerSecond"] as? Double ?? 0) > 0)
            #expect(data.filter { $0[2] == "ppg" }.count > 5 && data.filter { $0[2] == "accelerometer" }.count > 5)
            // Timestamps: UTC with milliseconds, seconds never going back.
            #expect(data.allSatisfy { $0[0].hasSuffix("Z") && $0[0].count == 24 })
            let seconds = data.compactMap { Double($0[1]) }
            #expect(seconds.count == data.count && zip(seconds, seconds.dropFirst()).allSatisfy { $0 <= $1 })
            // The value log holds the same packets, as notifications of the ring's UART characteristic.
            let log = try String(contentsOfFile: values, encoding: .utf8).split(separator: "\n")
            #expect(log.count == data.count + 1)
            #expect(log.dropFirst().allSatisfy { $0.contains("\"operation\":\"notify\"") && $0.contains("\"value\":\"a1") })
            #expect(log.dropFirst().allSatisfy { $0.contains("/R\",\"device_name\":\"R02_") }, "\(log.dropFirst().first ?? "")")
        }
    }

    @Test func badOptionsAreOneLineUsageErrors() async throws {
        let cases: [([String], String)] = [
            (["--seconds", "0"], "--seconds 0"), (["--format", "xlsx"], "expected csv or jsonl"),
            (["--json"], "--json needs --out"), (["--mode", "300"], "--mode 300"),
        ]
        for (arguments, expected) in cases {
            do {
                try await RingRawCommand.parse(arguments).execute(RingLines().output, errors: RingLines().output) { "never" }
                Issue.record("\(arguments) accepted")
            } catch let failure as CommandFailure {
                #expect(failure.status == .usage && failure.message.contains(expected), "\(failure.message)")
            }
        }
    }
}
