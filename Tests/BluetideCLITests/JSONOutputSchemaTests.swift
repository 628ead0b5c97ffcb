import BluetideTestSupport
import Foundation
import Testing

/// Every command's `--json` output, errors included, validated against the one documented schema
/// (`docs/json-output.schema.json`) by the `jsonschema` package, through
/// `Interop/json/check_json_output.py`.
@Suite(.timeLimit(.minutes(5))) struct JSONOutputSchemaTests {
    /// The commands run and which of their streams holds JSON: records on stdout, errors on stderr.
    static let runs: [(label: String, arguments: [String], stream: BumbleProcess.Output, stdin: String?)] = [
        ("decode", ["decode", "heart-rate", "--json", "164E1C03F402", "0048"], .stdout, nil),
        ("decode csc", ["decode", "csc", "--json", "03A25E01006D0E4B63967F@0", "03A45E0100D7124B63967F@1.1"], .stdout, nil),
        ("decode fec", ["decode", "fec", "--json", "A4094E05192A5A1027FA403032"], .stdout, nil),
        ("scan", ["scan", "--emulate", "heart-rate,csc,colmi-r02,tacx-fec", "--timeout", "1.5", "--json"], .stdout, nil),
        ("gatt", ["gatt", "Bluetide HRM", "--emulate", "heart-rate", "--json"], .stdout, nil),
        ("read", ["read", "Bluetide HRM", "battery-level", "--emulate", "heart-rate", "--json"], .stdout, nil),
        ("subscribe", ["subscribe", "Bluetide HRM", "heart-rate", "--emulate", "heart-rate", "--count", "2", "--json"], .stdout, nil),
        ("emulate", ["emulate", "heart-rate", "punch", "--duration", "0.5", "--seed", "7", "--json"], .stdout, nil),
        ("demo", ["demo", "--duration", "2", "--json"], .stdout, nil),
        ("shell", ["shell", "Bluetide HRM", "--emulate", "heart-rate", "--json"], .stdout,
         "services\nread battery-level\nwrite 2A39 01\nsubscribe heart-rate\nwait 2\nmtu\nrssi\ninfo\nhelp\n"),
        ("error: runtime", ["read", "Nobody", "2A19", "--timeout", "0.5", "--emulate", "heart-rate", "--json"], .stderr, nil),
        ("error: usage", ["subscribe", "X", "2A37", "--count", "0", "--json"], .stderr, nil),
        ("error: parser", ["scan", "--no-such-option", "--json"], .stderr, nil),
    ]

    @Test(.needsPythonModule("jsonschema", install: "pip install -r Interop/requirements.txt"))
    func everyCommandsJSONValidatesAgainstTheSchema() async throws {
        var lines: [String] = []
        let temporary = FileManager.default.temporaryDirectory
        let log = temporary.appendingPathComponent("schema-replay-\(UUID().uuidString).jsonl")
        try Data(Self.replayLog.utf8).write(to: log)
        let recording = temporary.appendingPathComponent("schema-record-\(UUID().uuidString).jsonl")
        defer {
            try? FileManager.default.removeItem(at: log)
            try? FileManager.default.removeItem(at: recording)
        }
        let extra: [(label: String, arguments: [String], stream: BumbleProcess.Output, stdin: String?)] = [
            ("replay", ["replay", log.path, "--as-fast-as-possible", "--json"], .stdout, nil),
            ("record", ["record", "Bluetide HRM", "--emulate", "heart-rate", "--out", recording.path, "--count", "3", "--json"], .stdout, nil),
        ]
        for run in Self.runs + extra {
            let process = try BluetideExecutable.launch(run.arguments)
            if let stdin = run.stdin { try await process.writeToStdin(stdin) }
            await process.closeStdin()
            _ = await process.waitForCompletion(timeout: .seconds(90))
            await process.stop()
            let output = await process.output(run.stream)
            #expect(!output.isEmpty, "\(run.label) printed no JSON on \(run.stream)")
            lines += output.map { "\(run.label)\t\($0)" }
        }
        let python = try #require(OptionalTool.executable("python3"), "python3 not found")
        let script = BumbleEnvironment.repositoryRoot.appendingPathComponent("Interop/json/check_json_output.py")
        let checker = try BumbleProcess.launch(name: "check_json_output", executable: python, arguments: [script.path])
        try await checker.writeToStdin(lines.joined(separator: "\n") + "\n")
        await checker.closeStdin()
        let status = await checker.waitForCompletion(timeout: .seconds(60))
        await checker.stop()
        let report = await checker.output(.stdout)
        let problems = await checker.stderrTail()
        #expect(status == 0, "schema check failed:\n\(report.joined(separator: "\n"))\n\(problems)")
        #expect(report.last == "checked \(lines.count) lines, 0 invalid", "\(report)")
    }

    static let replayLog = """
        {"format":"bluetide-values","version":1,"started_at":"2026-11-21T12:26:23.000Z","tool":"bluetide","tool_version":"0.1.0"}
        {"t":0.412,"wall_time":"2026-11-21T12:26:23.412Z","device":"C6:C5:C4:C3:C2:C1","device_name":"KICKR CORE 1234","service":"1816","characteristic":"2A5B","operation":"notify","value":"03a25e01006d0e4b63967f","profile":"csc"}
        {"t":1.515,"wall_time":"2026-11-21T12:26:24.515Z","device":"C6:C5:C4:C3:C2:C1","device_name":"KICKR CORE 1234","service":"1816","characteristic":"2A5B","operation":"notify","value":"03a45e0100d7124b63967f","profile":"csc"}
        {"t":2.0,"device":"C6:C5:C4:C3:C2:C1","service":"180F","characteristic":"2A19","operation":"read","value":"5f","profile":"battery"}

        """
}
