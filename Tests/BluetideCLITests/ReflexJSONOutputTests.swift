import BluetideTestSupport
import Foundation
import Synchronization
import Testing
@testable import BluetideCommands

/// `--json` of every `reflex` subcommand, validated against the one schema
/// (docs/json-output.schema.json) by `Interop/json/check_json_output.py`; and the warning for a
/// coach on a virtual link with no trainer.
@Suite(.serialized) struct ReflexJSONOutputTests {
    static func temporary(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("reflex-json-\(UUID().uuidString)-\(name)").path
    }

    /// Runs `bluetide reflex coach …` on `db` and returns its standard output, requiring exit 0.
    static func coach(_ arguments: [String], db: String, stdin: String? = nil) async throws -> [String] {
        let run = try await BluetideExecutable.run(["reflex", "coach"] + arguments + ["--db", db, "--json"], timeout: .seconds(90), stdin: stdin)
        #expect(run.status == 0, "\(arguments): \(run.stderr.suffix(3))")
        return run.stdout
    }

    @Test func everyReflexCommandPrintsRecordsOfTheOneSchema() async throws {
        let db = Self.temporary("coach.sqlite")
        var lines: [String] = []
        func add(_ label: String, _ output: [String]) {
            #expect(!output.isEmpty, "\(label) printed nothing")
            lines += output.map { "\(label)\t\($0)" }
        }
        add("athletes add", try await Self.coach(["athletes", "add", "Ana Ruiz", "--birth-date", "2004-05-17", "--sex", "female"], db: db))
        let bo = try await Self.coach(["athletes", "add", "Bo"], db: db)
        add("athletes add (no birth date)", bo)
        #expect(bo.count == 1 && !bo[0].contains("birthDate") && !bo[0].contains("null"), "a missing birth date is left out: \(bo)")
        add("athletes weight", try await Self.coach(["athletes", "weight", "Ana Ruiz", "63,5", "--date", "2026-11-01"], db: db))
        add("athletes list", try await Self.coach(["athletes", "list"], db: db))
        add("athletes show", try await Self.coach(["athletes", "show", "Ana Ruiz"], db: db))
        add("sequences save", try await Self.coach(["sequences", "save", "Jab", "--targets", "0,3,5", "--times", "900"], db: db))
        add("sequences random", try await Self.coach(["sequences", "random", "R", "--steps", "4", "--seed", "7"], db: db))
        add("sequences list", try await Self.coach(["sequences", "list"], db: db))
        let run = try await Self.coach(["run", "--athlete", "Ana Ruiz", "--sequence", "Jab", "--emulate"], db: db)
        add("run", run)
        let records = run.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(records.count == run.count, "every line of run --json is one JSON object")
        let steps = records.filter { $0["type"] as? String == "step" }
        // Steps are numbered as the trainer and the dashboard's /api/run number them: from 0;
        // the flag has the dashboard's name, wrongTarget.
        #expect(steps.map { $0["step"] as? Int } == [0, 1, 2], "steps count from 0")
        #expect(steps.allSatisfy { $0["wrongTarget"] is Bool && $0["wrongTargetFirst"] == nil }, "\(steps)")
        #expect(!run.contains { $0.contains(":null") }, "unknown values are left out, never null: \(run)")
        let ended = try #require(records.first { $0["type"] as? String == "ended" })
        let session = try #require(ended["sessionId"] as? Int)
        #expect(records.last?["type"] as? String == "summary")
        add("history", try await Self.coach(["history", "--athlete", "Ana Ruiz"], db: db))
        let export = try await Self.coach(["export", "--athlete", "Ana Ruiz", "--out", Self.temporary("out.csv")], db: db)
        add("export", export)
        #expect(export.first?.contains("\"file\":") == true && export.first?.contains("\"path\"") == false, "the written file is `file`, as ring export says: \(export)")
        add("chart", try await Self.coach(["chart", "--athlete", "Ana Ruiz", "--session", "\(session)", "--out", Self.temporary("c.svg")], db: db))
        add("password", try await Self.coach(["password"], db: db, stdin: "correct horse battery staple\n"))
        let device = try await BluetideExecutable.run(["reflex", "device", "--gpio", "sim", "--duration", "1", "--json"])
        #expect(device.status == 0)
        add("device", device.stdout)
        let refused = try await BluetideExecutable.run(["reflex", "coach", "athletes", "weight", "Ana Ruiz", "0x10", "--db", db, "--json"])
        #expect(refused.status == 2)
        add("weight error", refused.stderr)
        #expect(refused.stderr.first?.contains("\"field\":\"KILOGRAMS\"") == true, "\(refused.stderr)")

        // serve, in process: its start-up records.
        let served = Mutex<[String]>([])
        let serve = try ReflexCoachServe.parse(["--port", "0", "--db", db, "--emulate"])
        let serving = try await serve.startServing(emit: { output in served.withLock { $0 += output.records } })
        await serving.stop()
        add("serve", served.withLock { $0 })
        #expect(served.withLock { $0 }.contains { $0.contains("\"type\":\"open\"") && $0.contains("\"url\":\"http://127.0.0.1:") })

        let python = try #require(OptionalTool.executable("python3"), "python3 not found")
        let script = BumbleEnvironment.repositoryRoot.appendingPathComponent("Interop/json/check_json_output.py")
        let checker = try BumbleProcess.launch(name: "check_json_output", executable: python, arguments: [script.path])
        try await checker.writeToStdin(lines.joined(separator: "\n") + "\n")
        await checker.closeStdin()
        let status = await checker.waitForCompletion(timeout: .seconds(60))
        await checker.stop()
        let report = await checker.output(.stdout)
        #expect(status == 0, "schema check failed:\n\(report.joined(separator: "\n"))")
        #expect(report.last == "checked \(lines.count) lines, 0 invalid", "\(report)")
    }

    @Test func aCoachOnAVirtualLinkWithNoTrainerSaysSoInOneWarning() async throws {
        let db = Self.temporary("warn.sqlite")
        _ = try await Self.coach(["athletes", "add", "Bo"], db: db)
        _ = try await Self.coach(["sequences", "save", "One", "--targets", "0", "--times", "900"], db: db)
        let run = try await BluetideExecutable.run(["reflex", "coach", "run", "--athlete", "Bo", "--sequence", "One", "--timeout", "1",
                                                    "--db", db])
        let warnings = run.stderr.filter { $0.contains("warning: --transport virtual is a private virtual link with no trainer on it") }
        #expect(warnings.count == 1, "\(run.stderr)")
        #expect(warnings.first?.contains("add --emulate") == true)
        #expect(run.status == 1, "no trainer found: a runtime failure")
        let emulated = try await BluetideExecutable.run(["reflex", "coach", "run", "--athlete", "Bo", "--sequence", "One", "--emulate",
                                                         "--db", db])
        #expect(emulated.status == 0)
        #expect(!emulated.stderr.contains { $0.contains("no trainer on it") }, "no warning with --emulate")
    }
}
