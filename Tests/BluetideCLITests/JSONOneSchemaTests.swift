import BluetideTestSupport
import Foundation
import Testing
@testable import BluetideCommands

#if canImport(Glibc)
import Glibc
#endif

/// One schema in fact, not only on paper: the places where commands said one thing two ways
/// (docs/json-output.md, "One word, one spelling, one meaning").
@Suite(.timeLimit(.minutes(4))) struct JSONOneSchemaTests {
    static func object(_ line: String?) -> [String: Any]? {
        line.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Field names of decoded values get the unit's spelling, and words keep theirs: the FTMS
    /// status `indoorBikeSimulationParametersChanged` is not turned into `…Parametres…`.
    @Test func unitsAreRespelledAndWordsAreNot() {
        #expect(JSONOutputValue.fieldName("indoorBikeSimulationParametersChanged") == "indoorBikeSimulationParametersChanged")
        #expect(JSONOutputValue.fieldName("parameters") == "parameters")
        #expect(JSONOutputValue.fieldName("wheelDiameterMeters") == "wheelDiameterMetres")
        #expect(JSONOutputValue.fieldName("total_distance_meters") == "totalDistanceMetres")
        #expect(JSONOutputValue.fieldName("meters") == "metres")
        #expect(JSONOutputValue.fieldName("speedKilometersPerHour") == "speedKilometresPerHour")
        #expect(JSONOutputValue.fieldName("kilometers") == "kilometres")
    }

    /// Unknown values are left out at every depth, never printed as null.
    @Test func unknownValuesAreLeftOut() {
        let line = JSONOutput.line("x", ["a": .null, "b": ["c": .null, "d": 1], "e": [.integer(1)]])
        #expect(line == #"{"b":{"d":1},"e":[1],"type":"x"}"#)
    }

    /// `read` and `notification` records name the device as `written` does; `scan` says `colour`.
    @Test func readAndSubscribeNameTheDeviceAndScanSaysColour() async throws {
        let read = try await BluetideExecutable.run(["read", "Bluetide HRM", "battery-level", "--emulate", "heart-rate", "--json"])
        let record = try #require(Self.object(read.stdout.first), "\(read.stdout) \(read.stderr)")
        let device = try #require(record["device"] as? [String: Any], "\(record)")
        #expect(device["name"] as? String == "Bluetide HRM" && device["addressType"] as? String == "random")
        #expect(record["time"] is [String: Any])
        let subscribe = try await BluetideExecutable.run(["subscribe", "Bluetide HRM", "heart-rate", "--emulate", "heart-rate", "--count", "1", "--json"])
        let notification = try #require(Self.object(subscribe.stdout.first), "\(subscribe.stdout) \(subscribe.stderr)")
        #expect((notification["device"] as? [String: Any])?["name"] as? String == "Bluetide HRM", "\(notification)")
        // In virtual time (BLUETIDE_VIRTUAL_TIME): a long scan costs no wall time, and leaves room
        // for the virtual time a starved machine lets pass while the device's first advertising
        // report crosses tasks (a 1 s scan heard nothing once in a full run with two CPU hogs).
        let scan = try await BluetideExecutable.run(
            ["scan", "--emulate", "heart-rate", "--scan-time", "30", "--json"], environment: ["BLUETIDE_VIRTUAL_TIME": "1"])
        let advertisement = try #require(Self.object(scan.stdout.first), "\(scan.stdout) \(scan.stderr)")
        #expect((advertisement["colour"] as? String)?.hasPrefix("#") == true && advertisement["color"] == nil, "\(advertisement)")
    }

    /// A log recorded from a random address replays as a random address.
    @Test func aRecordedRandomAddressReplaysAsRandom() async throws {
        let log = NSTemporaryDirectory() + "one-schema-\(UUID().uuidString).jsonl"
        defer { try? FileManager.default.removeItem(atPath: log) }
        let record = try await BluetideExecutable.run(["record", "Bluetide HRM", "--emulate", "heart-rate", "--out", log, "--count", "2"])
        try #require(record.status == 0, "\(record.stderr)")
        let replay = try await BluetideExecutable.run(["replay", log, "--pace", "fast", "--json"])
        #expect(replay.status == 0, "\(replay.stderr)")
        let records = replay.stdout.compactMap { Self.object($0) }
        try #require(!records.isEmpty, "\(replay.stdout)")
        for record in records {
            let device = try #require(record["device"] as? [String: Any], "\(record)")
            #expect(device["addressType"] as? String == "random" && (device["address"] as? String)?.hasSuffix("/R") == true, "\(device)")
        }
    }

    /// Ctrl-C on a command that stops cleanly: exit 130 and, with --json, the promised
    /// `{"error":{"code":"interrupted",…}}` line on standard error.
    @Test func ctrlCPrintsTheInterruptedLine() async throws {
        let process = try BluetideExecutable.launch(["subscribe", "Bluetide HRM", "heart-rate", "--emulate", "heart-rate", "--json"])
        do {
            _ = try await process.firstJSON("type", "notification", timeout: BluetideExecutable.runTimeout)
        } catch {
            await process.stop()
            throw error
        }
        kill(process.pid, SIGINT)
        let status = await process.waitForCompletion(timeout: BluetideExecutable.runTimeout)
        await process.stop()
        #expect(status == 130)
        let errors = await process.output(.stderr)
        let last = try #require(Self.object(errors.last)?["error"] as? [String: Any], "\(errors)")
        #expect(last["code"] as? String == "interrupted", "\(errors)")
    }

    /// The checker refuses two spellings of one word among the keys it is given (here one the
    /// schema's field-name pattern does not know), naming both.
    @Test(.needsPythonModule("jsonschema", install: "pip install -r Interop/requirements.txt"))
    func theCheckerRefusesTwoSpellingsOfOneWord() async throws {
        let report = try await JSONOutputSchemaTests.check([
            #"a\#t{"type":"x","centreLine":1}"#,
            #"b\#t{"type":"y","centerLine":2}"#,
            #"c\#t{"type":"z","centreLine":3}"#,
        ])
        #expect(report.last == "checked 3 lines, 1 invalid", "\(report)")
        #expect(report.first?.hasPrefix("b: spelling: key 'centerLine' spells 'center', but a spelled it 'centre'") == true, "\(report)")
    }
}
