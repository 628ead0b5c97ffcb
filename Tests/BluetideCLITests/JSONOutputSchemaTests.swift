import BluetideTestSupport
import BluetideTransport
import Foundation
import Testing

/// Every command's `--json` output, errors included, validated against the one documented schema
/// (`docs/json-output.schema.json`) by the `jsonschema` package, through
/// `Interop/json/check_json_output.py`.
@Suite(.timeLimit(.minutes(5))) struct JSONOutputSchemaTests {
    /// The commands run and which of their streams holds JSON: records on stdout, errors on stderr.
    static let runs: [(label: String, arguments: [String], stream: BumbleProcess.Output, stdin: String?)] = [
        ("decode", ["decode", "heart-rate", "--json", "164E1C03F402", "0048"], .stdout, nil),
        ("decode list", ["decode", "--list", "--json"], .stdout, nil),
        ("decode csc", ["decode", "csc", "--json", "03A25E01006D0E4B63967F@0", "03A45E0100D7124B63967F@1.1"], .stdout, nil),
        ("decode fec", ["decode", "fec", "--json", "A4094E05192A5A1027FA403032"], .stdout, nil),
        ("scan", ["scan", "--emulate", "heart-rate,csc,colmi-r02,tacx-fec", "--scan-time", "30", "--json"], .stdout, nil),
        ("gatt", ["gatt", "Bluetide HRM", "--emulate", "heart-rate", "--json"], .stdout, nil),
        ("read", ["read", "Bluetide HRM", "battery-level", "--emulate", "heart-rate", "--json"], .stdout, nil),
        ("write", ["write", "Bluetide FTMS", "2AD9", "request-control", "--emulate", "ftms-bike", "--json"], .stdout, nil),
        ("subscribe", ["subscribe", "Bluetide HRM", "heart-rate", "--emulate", "heart-rate", "--count", "2", "--json"], .stdout, nil),
        ("emulate", ["emulate", "heart-rate", "punch", "--duration", "0.5", "--seed", "7", "--json"], .stdout, nil),
        ("demo", ["demo", "--duration", "2", "--json"], .stdout, nil),
        ("shell", ["shell", "Bluetide HRM", "--emulate", "heart-rate", "--json"], .stdout,
         "services\nread battery-level\nwrite 2A39 01\nwrite 2A39 reset\nforms 2A39\nforms 2A37\nsubscribe heart-rate\nwait 2\nmtu\nrssi\ninfo\nhelp\n"),
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
            // In virtual time (BLUETIDE_VIRTUAL_TIME) where the command supports it (scan, gatt, read, write,
            // subscribe, record, shell with --emulate): their emulated devices and limits run the same
            // way however busy the machine is (a 1.5 s scan once heard nothing in a full run with two hogs).
            let process = try BluetideExecutable.launch(run.arguments, environment: ["BLUETIDE_VIRTUAL_TIME": "1"])
            if let stdin = run.stdin { try await process.writeToStdin(stdin) }
            await process.closeStdin()
            let status = await process.waitForCompletion(timeout: .seconds(90))
            await process.stop()
            let output = await process.output(run.stream)
            let errors = run.stream == .stdout ? await process.output(.stderr) : []
            #expect(!output.isEmpty, "\(run.label) printed no JSON on \(run.stream) (exit status \(status.map(String.init) ?? "none")); stderr: \(errors)")
            lines += output.map { "\(run.label)\t\($0)" }
        }
        try await Self.expectValid(lines)
    }

    /// `controllers --json`: ready (the ports), one record per controller, a host connecting, a
    /// second host refused, the first leaving, and stopping; every line valid against the schema.
    @Test(.needsPythonModule("jsonschema", install: "pip install -r Interop/requirements.txt"))
    func controllersJSONSaysWhatTheTextSaysAndValidates() async throws {
        let process = try BluetideExecutable.launch(["controllers", "tcp-server:127.0.0.1:0", "--json", "--exit-on-stdin-eof"])
        let timeout = BluetideExecutable.runTimeout
        do {
            let ready = try await process.firstJSON("type", "ready", timeout: timeout)
            let port = try #require(ready["ports"]?[0]?.int, "\(ready)")
            #expect(ready["ports"]?.array?.count == 1 && port > 0)
            let controller = try await process.firstJSON("type", "controller", timeout: timeout)
            #expect(controller["controller"]?.int == 1)
            #expect(controller["listen"]?["host"]?.string == "127.0.0.1")
            #expect(controller["listen"]?["port"]?.int == port)
            #expect(controller["listen"]?["localOnly"]?.bool == true)
            #expect(controller["device"]?["address"]?.string == "00:00:00:00:00:01")
            #expect(controller["device"]?["addressType"]?.string == "public")
            let first = try await Transport.open("tcp-client:127.0.0.1:\(port)")
            let connected = try await process.firstJSON("type", "host-connected", timeout: timeout)
            #expect(connected["controller"]?.int == 1)
            #expect(connected["from"]?.string?.hasPrefix("127.0.0.1:") == true, "\(connected)")
            let second = try await Transport.open("tcp-client:127.0.0.1:\(port)")
            let refused = try await process.firstJSON("type", "host-refused", timeout: timeout)
            #expect(refused["reason"]?.string == "another host is connected")
            await second.close()
            await first.close()
            let left = try await process.firstJSON("type", "host-disconnected", timeout: timeout)
            #expect(left["from"] == connected["from"])
            #expect(left["reason"]?.string?.isEmpty == false)
            await process.closeStdin()
            #expect(await process.waitForCompletion(timeout: timeout) == 0)
        } catch {
            await process.stop()
            throw error
        }
        await process.stop()
        let lines = await process.output(.stdout)
        let stopping = try #require(lines.last.flatMap { JSONValue(line: $0) }, "\(lines)")
        #expect(stopping["type"]?.string == "stopping" && stopping["reason"]?.string == "end of standard input")
        #expect(lines.allSatisfy { $0.hasPrefix("{") }, "every line is a record: \(lines)")
        try await Self.expectValid(lines.map { "controllers\t\($0)" })
    }

    /// The `--json` of the commands this suite's main test does not cover yet. Each one's lines
    /// are checked; those listed in ``knownNonConforming`` do not follow the schema yet (their
    /// own records: no `type`, snake_case, bare `address`/`name`/`rssi`, a bare `t`), so their
    /// failures are known issues, and the test fails when one starts to conform: then take it
    /// out of the list.
    static let knownNonConforming: Set<String> = []

    @Test(.needsPythonModule("jsonschema", install: "pip install -r Interop/requirements.txt"))
    func theOtherCommandsJSONAgainstTheSchema() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("schema-data-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: data) }
        let ring = ["--emulate", "colmi-r02", "--json"]
        let runs: [(label: String, arguments: [String], stdin: String?)] = [
            ("bench codec", ["bench", "codec", "--count", "1000", "--json"], nil),
            ("bench gatt", ["bench", "gatt", "--packet-count", "20", "--json"], nil),
            ("bench loopback", ["bench", "loopback", "--packet-count", "20", "--json"], nil),
            ("ride run", ["ride", "run", "--emulate", "ftms-bike", "--duration", "1.5", "--json"], nil),
            ("ring pair", ["ring", "pair", "--first"] + ring, nil),
            ("ring battery", ["ring", "battery"] + ring, nil),
            ("ring info", ["ring", "info"] + ring, nil),
            ("ring hr-log", ["ring", "hr-log"] + ring, nil),
            ("ring settings", ["ring", "settings", "--set", "steps-goal=9000"] + ring, nil),
            ("ring raw", ["ring", "raw", "--seconds", "1.5", "--out", data.appendingPathComponent("raw.csv").path] + ring, nil),
            ("ring sync", ["ring", "sync", "--days", "1"] + ring, nil),
            ("ring sync --every", ["ring", "sync", "--every", "1s", "--rounds", "2", "--days", "1"] + ring, nil),
            ("ring watch", ["ring", "watch", "--duration", "1.5"] + ring, nil),
            ("ring export", ["ring", "export", "--out", data.appendingPathComponent("export").path, "--json"], nil),
            ("uart", ["uart", "Bluetide UART", "--emulate", "nus", "--json"], "hi\n"),
            ("emulate list", ["emulate", "--list", "--json"], nil),
        ]
        let binary = try #require(DecodeCommandTests.bluetideBinary(), "bluetide executable not built next to the tests")
        var lines: [String] = []
        for run in runs {
            // Ring commands remember the paired ring under XDG_DATA_HOME: a private one.
            let process = try BumbleProcess.launch(
                name: run.label, executable: binary, arguments: run.arguments, environment: ["XDG_DATA_HOME": data.path])
            if let stdin = run.stdin { try await process.writeToStdin(stdin) }
            await process.closeStdin()
            _ = await process.waitForCompletion(timeout: .seconds(90))
            await process.stop()
            let output = await process.output(.stdout)
            let errors = await process.output(.stderr)
            #expect(!output.isEmpty, "\(run.label) printed no JSON; stderr: \(errors)")
            lines += output.map { "\(run.label)\t\($0)" }
        }
        let report = try await Self.check(lines)
        for run in runs {
            let invalid = report.filter { $0.hasPrefix(run.label + ": ") }
            if Self.knownNonConforming.contains(run.label) {
                withKnownIssue("\(run.label) --json does not follow docs/json-output.md yet") {
                    #expect(invalid.isEmpty, "\(invalid.first ?? "")")
                }
            } else {
                #expect(invalid.isEmpty, "\(run.label): \(invalid)")
            }
        }
    }

    /// Runs `Interop/json/check_json_output.py` on `lines` ("LABEL<TAB>JSON") and expects every
    /// one valid.
    static func expectValid(_ lines: [String]) async throws {
        let report = try await check(lines)
        #expect(report.last == "checked \(lines.count) lines, 0 invalid", "schema check failed:\n\(report.joined(separator: "\n"))")
    }

    /// The checker's report on `lines`: one line per invalid record ("LABEL: what is wrong"), then
    /// "checked N lines, M invalid".
    static func check(_ lines: [String]) async throws -> [String] {
        let python = try #require(OptionalTool.executable("python3"), "python3 not found")
        let script = BumbleEnvironment.repositoryRoot.appendingPathComponent("Interop/json/check_json_output.py")
        let checker = try BumbleProcess.launch(name: "check_json_output", executable: python, arguments: [script.path])
        try await checker.writeToStdin(lines.joined(separator: "\n") + "\n")
        await checker.closeStdin()
        let status = await checker.waitForCompletion(timeout: .seconds(60))
        await checker.stop()
        let report = await checker.output(.stdout)
        let problems = await checker.stderrTail()
        #expect(status == 0 || status == 1, "the checker failed: \(problems)")
        #expect(report.last?.hasPrefix("checked \(lines.count) lines, ") == true, "\(report)\n\(problems)")
        return report
    }

    static let replayLog = """
        {"format":"bluetide-values","version":1,"started_at":"2026-11-21T12:26:23.000Z","tool":"bluetide","tool_version":"0.1.0"}
        {"t":0.412,"wall_time":"2026-11-21T12:26:23.412Z","device":"C6:C5:C4:C3:C2:C1","device_name":"KICKR CORE 1234","service":"1816","characteristic":"2A5B","operation":"notify","value":"03a25e01006d0e4b63967f","profile":"csc"}
        {"t":1.515,"wall_time":"2026-11-21T12:26:24.515Z","device":"C6:C5:C4:C3:C2:C1","device_name":"KICKR CORE 1234","service":"1816","characteristic":"2A5B","operation":"notify","value":"03a45e0100d7124b63967f","profile":"csc"}
        {"t":2.0,"device":"C6:C5:C4:C3:C2:C1","service":"180F","characteristic":"2A19","operation":"read","value":"5f","profile":"battery"}

        """
}
