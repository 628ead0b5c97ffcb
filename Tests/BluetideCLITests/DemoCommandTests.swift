import BluetideDemo
import BluetideSupport
import BluetideTestSupport
import Foundation
import Synchronization
import Testing
@testable import BluetideCommands

@Suite struct DemoCommandTests {
    /// Collects events from any task.
    final class Recorder: Sendable {
        private let events = Mutex<[DemoEvent]>([])
        func add(_ event: DemoEvent) { events.withLock { $0.append(event) } }
        var all: [DemoEvent] { events.withLock { $0 } }
    }

    @Test func demoShowsDecodedDataFromEveryDevice() async throws {
        let recorder = Recorder()
        let command = try DemoCommand.parse(["--duration", "3", "--seed", "3"])
        try await command.perform { recorder.add($0) }
        let events = recorder.all
        let found = events.filter { $0.kind == "found" }
        #expect(Set(found.compactMap { $0.fields["model"] }) == Set(DemoWorld.deviceNames))
        for row in found {
            #expect(row.summary.contains("dBm"), "scan row without RSSI: \(row.summary)")
        }
        func values(_ device: String) -> [DemoEvent] { events.filter { $0.device == device && $0.kind == "value" } }
        let heartRate = values("heart-rate")
        #expect(!heartRate.isEmpty)
        #expect(heartRate.allSatisfy { $0.summary.contains("bpm") })
        #expect(heartRate.contains { $0.summary.contains("RR") })
        let trainer = values("ftms-bike")
        #expect(trainer.contains { $0.summary.contains("km/h") && $0.summary.contains("rpm") && $0.summary.contains("ERG target 250 W") })
        #expect(trainer.contains { $0.summary.contains("control point →") })
        let ring = values("colmi-r02")
        #expect(ring.contains { $0.fields["batteryPercent"] != nil && $0.summary.contains("battery") })
        #expect(ring.contains { $0.summary.contains("real-time heart rate") })
        let punch = values("punch")
        #expect(punch.filter { $0.fields["reactionMs"] != nil }.count == 5)
        #expect(punch.contains { $0.summary.contains("control →") })
        let serial = values("hm10")
        #expect(serial.contains { $0.fields["echo"] == "hello" })
        #expect(events.last?.kind == "done")
    }

    @Test func demoJSONLinesAreObjectsAndTextHasSections() {
        let event = DemoEvent(device: "hm10", kind: "value", summary: "data → \"hello\"", fields: ["echo": "hello"])
        // One schema (docs/json-output.md): the kind is the record's type, the demo's part its source.
        let object = try? JSONSerialization.jsonObject(with: Data(event.jsonLine.utf8)) as? [String: Any]
        #expect(object?["source"] as? String == "hm10")
        #expect(object?["type"] as? String == "value")
        #expect(object?["echo"] as? String == "hello")
        #expect(DemoEvent(device: "scan", kind: "section", summary: "Scan").text.contains("== Scan =="))
    }

    @Test func demoRefusesABadDuration() async throws {
        let command = try DemoCommand.parse(["--duration", "0"])
        await #expect(throws: CommandFailure.self) { try await command.perform { _ in } }
    }

    @Test func aDeviceThatDoesNotAnswerFailsWithOneLine() async throws {
        // On a manual clock: the limit passes when the clock reaches it, not in real time.
        let manual = ManualClock()
        let clock = BluetideClock(manual)
        do {
            try await manual.advancing {
                try await DemoSession.limited(0.05, "hm10: no decoded data within 0 s", clock: clock) {
                    // A device that never answers: waits far past the limit.
                    try await clock.sleep(for: .seconds(30))
                }
            }
            Issue.record("a session that never ends was not stopped")
        } catch let failure as DemoFailure {
            #expect(failure.message == "hm10: no decoded data within 0 s")
            #expect(manual.now.offset < .seconds(30), "stopped at the limit, not when the body woke")
        }
        try await DemoSession.limited(20, "unused", clock: clock) {}
    }

    @Test func executableExitsNonZeroWithOneLineForABadDuration() async throws {
        let (status, output) = try await Self.runProcess(["demo", "--duration", "0"])
        #expect(status != 0)
        let lines = output.split(separator: "\n")
        #expect(lines.count == 1 && output.contains("--duration"), "output: \(output)")
    }

    @Test func executableRunsTheDemoAndExitsZero() async throws {
        let (status, output) = try await Self.runProcess(["demo", "--duration", "2", "--json"])
        #expect(status == 0, "output: \(output.suffix(2000))")
        let objects = output.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        for device in DemoWorld.deviceNames {
            #expect(objects.contains { $0["source"] as? String == device && $0["type"] as? String == "value" }, "no value from \(device)")
        }
    }

    /// Runs `bluetide <arguments>` through the shared harness (output read on dedicated threads,
    /// never blocking the cooperative pool); returns its exit status and its standard output and
    /// error lines, in arrival order. Fails the test if it does not finish within 120 s.
    static func runProcess(_ arguments: [String]) async throws -> (Int32, String) {
        let run = try await BluetideExecutable.run(arguments, timeout: .seconds(120))
        let output = run.combined.map { $0 + "\n" }.joined()
        let status = try #require(run.status, "bluetide \(arguments) did not finish within 120 s; output: \(output.suffix(2000))")
        return (status, output)
    }
}
