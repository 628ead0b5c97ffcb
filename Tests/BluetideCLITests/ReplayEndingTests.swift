import BluetideTestSupport
import Foundation
import Testing

/// `bluetide replay` ends as its help says and reports a log it cannot play as a failure.
@Suite(.timeLimit(.minutes(3))) struct ReplayEndingTests {
    static func write(_ text: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("replay-end-\(UUID().uuidString).jsonl")
        try Data(text.utf8).write(to: url)
        return url
    }

    static let header = #"{"format":"bluetide-values","version":1}"#

    /// `--as-peripheral` ends once every value was played (it waited for a signal that never came).
    @Test func replayAsPeripheralEndsAfterItsLastValue() async throws {
        let log = try Self.write(JSONOutputSchemaTests.replayLog)
        defer { try? FileManager.default.removeItem(at: log) }
        let controllers = try BluetideExecutable.launch(["controllers", "tcp-server:127.0.0.1:0", "tcp-server:127.0.0.1:0"])
        var replay: BumbleProcess?
        do {
            let ready = try #require(try await controllers.nextLine(timeout: BluetideExecutable.runTimeout))
            let ports = ready.split(separator: " ").dropFirst().compactMap { Int($0) }
            try #require(ports.count == 2, "\(ready)")
            let device = try BluetideExecutable.launch([
                "replay", log.path, "--as-peripheral", "--as-fast-as-possible", "--name", "Replay End",
                "--transport", "tcp-client:127.0.0.1:\(ports[0])",
            ])
            replay = device
            let started = try await device.nextLine(timeout: BluetideExecutable.runTimeout)
            #expect(started?.hasPrefix("replay: advertising as") == true, "\(String(describing: started))")
            // A central subscribes: playback starts, plays the three values and ends.
            let central = try BluetideExecutable.launch([
                "subscribe", "Replay End", "2A5B", "--duration", "20", "--transport", "tcp-client:127.0.0.1:\(ports[1])",
            ])
            let status = await device.waitForExit(timeout: .seconds(40))
            await central.stop()
            let output = await device.output(.either)
            #expect(status == 0, "replay still running after its last value: \(output)")
            let sent = await device.output(.stdout).filter { $0.hasPrefix("sent ") }
            #expect(sent.count == 3, "\(output)")
        } catch {
            await replay?.stop()
            await controllers.stop()
            throw error
        }
        await replay?.stop()
        await controllers.stop()
    }

    /// A body of garbage: a few warnings and one count (it was a warning per line, 103 MB for a
    /// big file), and exit 1 since nothing could be played (it was 0).
    @Test func aGarbageBodyWarnsBrieflyAndFails() async throws {
        let garbage = (0..<20_000).map { "not a record \($0) \u{7F}\u{01}" }
        let log = try Self.write(([Self.header] + garbage).joined(separator: "\n") + "\n")
        defer { try? FileManager.default.removeItem(at: log) }
        let run = try await BluetideExecutable.run(["replay", log.path, "--as-fast-as-possible"])
        #expect(run.status == 1, "\(run.stderr.suffix(3))")
        #expect(run.stderr.count <= 8, "\(run.stderr.count) lines on stderr: \(run.stderr.prefix(10))")
        #expect(run.stderr.contains { $0.contains("20000 damaged lines in all") }, "\(run.stderr)")
        #expect(run.stderr.last?.contains("nothing to play") == true, "\(run.stderr)")
        #expect(run.stdout.isEmpty)
    }

    /// A 20 MB line without a line feed is named by its number (it said "line -1").
    @Test func anOverlongLineIsNamedByItsNumber() async throws {
        let good = #"{"t":0.5,"device":"C6:C5:C4:C3:C2:C1","characteristic":"2A19","operation":"notify","value":"5f"}"#
        let log = try Self.write(Self.header + "\n" + good + "\n" + String(repeating: "x", count: 20 << 20))
        defer { try? FileManager.default.removeItem(at: log) }
        let run = try await BluetideExecutable.run(["replay", log.path, "--as-fast-as-possible"])
        #expect(run.status == 0, "the good record plays: \(run.stderr)")
        #expect(run.stdout.count == 1, "\(run.stdout)")
        let text = run.stderr.joined(separator: "\n")
        #expect(text.contains("line 3") && text.contains("without a line feed"), "\(text)")
        #expect(!text.contains("line -1"), "\(text)")
        let strict = try await BluetideExecutable.run(["replay", log.path, "--as-fast-as-possible", "--strict"])
        #expect(strict.status == 1 && strict.stderr.joined().contains("line 3"), "\(strict.stderr)")
    }
}
