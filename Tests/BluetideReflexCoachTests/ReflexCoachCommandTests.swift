import BluetideProfiles
import BluetideReflex
import BluetideSupport
import Foundation
import Testing
@testable import BluetideCommands

/// The coach CLI in process against a temporary database.
@Suite struct ReflexCoachCommandTests {
    static func temporaryPath(_ ext: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("coach-\(UUID().uuidString).\(ext)").path
    }

    static func failure(_ body: () throws -> Any) -> String? {
        do {
            _ = try body()
            return nil
        } catch let failure as CommandFailure {
            return failure.message
        } catch {
            return "not a CommandFailure: \(error)"
        }
    }

    @Test func athletesSequencesHistoryAndExportWorkOnATemporaryDatabase() throws {
        let db = Self.temporaryPath("sqlite")
        let csv = Self.temporaryPath("csv")
        let svg = Self.temporaryPath("svg")
        defer { for p in [db, csv, svg] { try? FileManager.default.removeItem(atPath: p) } }

        #expect(try ReflexCoachAthletes.Add.parse(["Ana Ruiz", "--birth-date", "2004-05-17", "--sex", "female", "--db", db]).lines().first?.contains("Ana Ruiz") == true)
        #expect(try ReflexCoachAthletes.Weight.parse(["ana ruiz", "63.5", "--date", "2026-11-01", "--db", db]).lines() == ["Ana Ruiz: 63.5 kg on 2026-11-01"])
        let show = try ReflexCoachAthletes.Show.parse(["Ana Ruiz", "--db", db]).lines()
        #expect(show.contains("birth date: 2004-05-17"))
        #expect(show.contains { $0.contains("2026-11-01") && $0.contains("63.5 kg") })
        #expect(try ReflexCoachAthletes.List.parse(["--db", db]).lines().first?.contains("Ana Ruiz\t0 sessions") == true)
        #expect(Self.failure { try ReflexCoachAthletes.Add.parse(["ana ruiz", "--db", db]).lines() }?.contains("exists") == true)

        #expect(try ReflexCoachSequences.Save.parse(["Jab", "--targets", "0,3,5,1", "--times", "900", "--db", db]).lines() == ["saved sequence \"Jab\": 4 steps"])
        let random = try ReflexCoachSequences.Random.parse(["Rnd", "--steps", "12", "--seed", "5", "--db", db]).lines()
        #expect(random.first?.contains("Rnd") == true)
        let list = try ReflexCoachSequences.List.parse(["--db", db]).lines()
        #expect(list.count == 2 && list[0].hasPrefix("Jab\t4 steps\ttargets 0,3,5,1") && list[1].hasPrefix("Rnd\t12 steps"))

        // A session as the coach would store it: steps 0-2 arrived, 3 never did.
        let store = try CoachStore(path: db)
        let athleteID = try #require(try store.athletes().first?.id)
        let session = try store.startSession(athleteID: athleteID, sequenceNamed: "Jab", started: Date(timeIntervalSince1970: 1_790_000_000))
        try store.appendStep(sessionID: session, response: PunchResponse(reactionTimeMilliseconds: 412, target: 0, hit: true, step: 0))
        try store.appendStep(sessionID: session, response: PunchResponse(reactionTimeMilliseconds: 900, target: 3, hit: false, step: 1))
        try store.appendStep(sessionID: session, response: PunchResponse(reactionTimeMilliseconds: 300, target: 5, hit: true, step: 2))
        try store.finishSession(id: session, ended: Date(timeIntervalSince1970: 1_790_000_010), complete: false)

        let history = try ReflexCoachHistory.parse(["--athlete", "Ana Ruiz", "--db", db]).lines()
        #expect(history.first == "Ana Ruiz: 1 session")
        #expect(history.contains { $0.hasPrefix("session \(session) ") && $0.contains("incomplete") && $0.contains("2/3 hit") && $0.contains("mean 356 ms") && $0.contains("best 300 ms") })
        #expect(history.contains { $0.contains("target 3") && $0.contains("0/1 hit") })
        #expect(history.last == "trend: needs two sessions")

        #expect(try ReflexCoachExport.parse(["--athlete", "Ana Ruiz", "--out", csv, "--db", db]).lines() == ["wrote 3 rows to \(csv)"])
        let text = try String(contentsOfFile: csv, encoding: .utf8)
        #expect(text.split(whereSeparator: \.isNewline).count == 4)
        #expect(text.contains("412"))

        #expect(try ReflexCoachChart.parse(["--athlete", "Ana Ruiz", "--session", "\(session)", "--out", svg, "--db", db]).lines() == ["wrote \(svg)"])
        #expect(try String(contentsOfFile: svg, encoding: .utf8).contains("<svg"))
        #expect(Self.failure { try ReflexCoachChart.parse(["--athlete", "Ana Ruiz", "--session", "999", "--out", svg, "--db", db]).lines() }?.contains("no session 999") == true)
    }

    @Test func malformedSequenceInputIsRefusedWithAClearMessage() throws {
        let db = Self.temporaryPath("sqlite")
        defer { try? FileManager.default.removeItem(atPath: db) }
        func save(_ targets: String, _ times: String) -> String? {
            Self.failure { try ReflexCoachSequences.Save.parse(["Bad", "--targets", targets, "--times", times, "--db", db]).lines() }
        }
        #expect(save("0,7,2", "900") == "--targets: step 2: \"7\" is not a target 0...5")
        #expect(save("0,x", "900")?.contains("step 2: \"x\"") == true)
        #expect(save("0,1,2", "900,0,900") == "--times: step 2: \"0\" is not a time in 1...60000 ms")
        #expect(save("0,1,2", "900,900")?.contains("2 values but --targets has 3 steps") == true)
        #expect(save("", "900") == "--targets: empty list")
        #expect(save(Array(repeating: "1", count: 257).joined(separator: ","), "900")?.contains("at most 256") == true)
        // More random steps than a trainer holds: refused as bad input (exit 2), nothing saved.
        do {
            _ = try ReflexCoachSequences.Random.parse(["Long", "--steps", "300", "--db", db]).lines()
            Issue.record("--steps 300 was accepted")
        } catch let failure as CommandFailure {
            #expect(failure.status == .usage && failure.field == "--steps")
            #expect(failure.message == "--steps 300: expected 1 to 256 (a trainer holds at most 256 steps); try --steps 256")
        }
        #expect(try CoachStore(path: db).sequences().isEmpty)
        #expect(Self.failure { try ReflexCoachHistory.parse(["--athlete", "Nobody", "--db", db]).lines() }?.contains("no athlete named \"Nobody\"") == true)
        // Reached from the group's root (BluetideMain turns a CommandFailure into exit 2).
        let parsed = try ReflexCoachCommand.parseAsRoot(["sequences", "save", "Bad", "--targets", "9", "--times", "900", "--db", db])
        let command = try #require(parsed as? ReflexCoachSequences.Save)
        #expect(Self.failure { try command.lines() } == "--targets: step 1: \"9\" is not a target 0...5")
    }

    /// `run --emulate`: a whole session against an emulated trainer on a private virtual link,
    /// the world and the coach on a manual clock (virtual time: no ATT or scan limit can expire
    /// because the machine is busy).
    @Test(.timeLimit(.minutes(1))) func runWithEmulateStoresACompleteSession() async throws {
        let db = Self.temporaryPath("sqlite")
        defer { try? FileManager.default.removeItem(atPath: db) }
        _ = try ReflexCoachAthletes.Add.parse(["Ana", "--db", db]).lines()
        _ = try ReflexCoachSequences.Save.parse(["Short", "--targets", "2,4,1", "--times", "400", "--db", db]).lines()
        let command = try ReflexCoachRun.parse(["--athlete", "Ana", "--sequence", "Short", "--emulate", "--db", db])
        let manual = ManualClock()
        let ending = try await within(50, "run --emulate") {
            try await manual.advancing { try await command.session(clock: BluetideClock(manual)) { _ in } }
        }
        #expect(manual.now.offset > .zero, "the session ran in the manual clock's time")
        let outcome = try #require(ending?.session)
        #expect(outcome.complete && outcome.stepsStored == 3, "\(outcome.reason)")
        #expect(try CoachStore(path: db).steps(sessionID: outcome.sessionID).map(\.target) == [2, 4, 1])
        do {
            _ = try await ReflexCoachRun.parse(["--athlete", "Ana", "--sequence", "Nope", "--db", db]).session { _ in }
            Issue.record("an unknown sequence was accepted")
        } catch let failure as CommandFailure {
            #expect(failure.message == "no saved sequence named \"Nope\" (saved: Short)")
        }
    }
}
