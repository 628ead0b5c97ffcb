import BluetideProfiles
import BluetideReflex
import BluetideSupport
import Foundation
import Synchronization
import Testing
@testable import BluetideCommands

/// What a command reported (shared with its emit closure).
final class Collected: Sendable {
    private let all = Mutex<[CoachOutput]>([])
    func add(_ output: CoachOutput) { all.withLock { $0.append(output) } }
    var outputs: [CoachOutput] { all.withLock { $0 } }
}

/// `reflex coach session` and `board` in process, on emulated trainers and a temporary database.
@Suite(.timeLimit(.minutes(2))) struct ReflexCoachGameCommandTests {
    static func database(athletes: [String]) throws -> String {
        let db = ReflexCoachCommandTests.temporaryPath("sqlite")
        for name in athletes { _ = try ReflexCoachAthletes.Add.parse([name, "--db", db]).lines() }
        _ = try ReflexCoachSequences.Save.parse(["Jab", "--targets", "0,3,5,1,2,4", "--times", "700", "--db", db]).lines()
        return db
    }

    /// Plays `reflex coach session ARGUMENTS` in process, its emulated world and coach on a
    /// manual clock (virtual time: no scan, ATT or strap limit expires because the machine is busy).
    static func records(_ arguments: [String]) async throws -> (lines: [String], records: [[String: Any]]) {
        let collected = Collected()
        let command = try ReflexCoachSession.parse(arguments)
        let manual = ManualClock()
        _ = try await within(90, "game") {
            try await manual.advancing { try await command.play(clock: BluetideClock(manual)) { output in collected.add(output) } }
        }
        let outputs = collected.outputs
        let records = outputs.flatMap(\.records).map { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
        }
        return (outputs.flatMap(\.lines), records)
    }

    @Test func aHeadToHeadOnEmulatedTrainersIsStoredAndOnTheBoard() async throws {
        let db = try Self.database(athletes: ["Ana", "Ben"])
        defer { try? FileManager.default.removeItem(atPath: db) }
        let (lines, records) = try await Self.records(["--mode", "head-to-head", "--athletes", "Ana,Ben", "--sequence", "Jab", "--emulate", "--db", db])
        #expect(lines.filter { $0.hasPrefix("emulated trainer") }.count == 2, "one emulated trainer per lane")
        #expect(lines.contains { $0.hasPrefix("lane 1 Ana: step 1 target 0 (red)") })
        #expect(lines.contains { $0.hasPrefix("lane 2 Ben: step 6 target 4 (white)") })
        let finished = try #require(records.first { $0["type"] as? String == "game-finished" })
        #expect(finished["mode"] as? String == "head-to-head")
        let runs = try #require(finished["runs"] as? [[String: Any]])
        #expect(runs.count == 2 && runs.allSatisfy { $0["complete"] as? Bool == true })
        #expect(records.filter { $0["type"] as? String == "standing" }.count == 2)
        #expect(records.filter { $0["type"] as? String == "step" }.allSatisfy { $0["lane"] is Int && $0["athleteName"] is String })
        #expect(lines.contains { $0.hasPrefix("decided: ") && ($0.contains("Ana wins") || $0.contains("Ben wins") || $0.contains("draw")) })

        let board = try ReflexCoachBoard.parse(["--db", db, "--sequence", "Jab"]).lines()
        #expect(board.first == "Jab (all time):")
        #expect(board.count == 3 && board[1].hasPrefix("  1. ") && board[2].hasPrefix("  2. "))
        #expect(try ReflexCoachBoard.parse(["--db", db, "--sequence", "Jab", "--weight-class", "63.5"]).lines() == ["Jab (all time, up to 63.5 kg): no complete sessions"],
                "nobody weighed in")

        // Each athlete wore an emulated strap: heart rates are stored, and the progress command
        // draws them against reaction time.
        let svg = ReflexCoachCommandTests.temporaryPath("svg")
        let heart = ReflexCoachCommandTests.temporaryPath("svg")
        defer { for path in [svg, heart] { try? FileManager.default.removeItem(atPath: path) } }
        #expect(lines.filter { $0.hasPrefix("emulated heart-rate strap") }.count == 2)
        #expect(lines.filter { $0.contains("heart-rate strap Strap-") && $0.hasSuffix(" connected") }.count == 2)
        let progress = try ReflexCoachProgress.parse(["--athlete", "Ana", "--db", db, "--chart", svg, "--heart-rate-chart", heart]).lines()
        #expect(progress.first == "Ana: 1 session")
        #expect(progress.contains { $0.hasPrefix("  mean ") && $0.hasSuffix("(needs two sessions)") })
        #expect(progress.filter { $0.hasPrefix("  target ") }.count == 6)
        let heartSVG = try String(contentsOfFile: heart, encoding: .utf8)
        #expect(heartSVG.contains("hits with a heart rate from"), "the strap's heart rates were stored beside the punches")
        #expect(try String(contentsOfFile: svg, encoding: .utf8).contains("<circle"), "one point for the one session")
    }

    @Test func badGameSetUpsAreUsageErrorsNamingTheOption() async throws {
        let db = try Self.database(athletes: ["Ana", "Ben", "Cleo"])
        defer { try? FileManager.default.removeItem(atPath: db) }
        func failure(_ arguments: [String]) async -> CommandFailure? {
            do { _ = try await Self.records(arguments + ["--sequence", "Jab", "--emulate", "--db", db]); return nil } catch { return error as? CommandFailure }
        }
        let mode = await failure(["--mode", "tag", "--athletes", "Ana,Ben"])
        #expect(mode?.message == "--mode \"tag\": expected head-to-head, relay or chase")
        #expect(mode?.status == .usage)
        let teams = await failure(["--mode", "relay", "--athletes", "Ana,Ben,Cleo", "--teams", "2"])
        #expect(teams?.message.contains("3 athletes do not split into 2 teams") == true, "\(String(describing: teams?.message))")
        #expect(teams?.status == .usage)
        let adaptive = await failure(["--mode", "relay", "--athletes", "Ana,Ben", "--adaptive-rounds", "3"])
        #expect(adaptive?.message.hasPrefix("--adaptive-rounds: only a head-to-head") == true && adaptive?.status == .usage)
        let rounds = await failure(["--mode", "head-to-head", "--athletes", "Ana,Ben", "--adaptive-rounds", "1"])
        #expect(rounds?.message == "--adaptive-rounds 1: expected 2 to 20 rounds")
        let unknown = await failure(["--mode", "head-to-head", "--athletes", "Ana,Zed"])
        #expect(unknown?.message.contains("no athlete named \"Zed\"") == true)
        let board = ReflexCoachCommandTests.failure { try ReflexCoachBoard.parse(["--db", db, "--period", "month"]).lines() }
        #expect(board == "--period \"month\": expected day, week or all")
    }
}
