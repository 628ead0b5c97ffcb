import ArgumentParser
import Bluetide
import BluetideReflex
import BluetideReflexCoach
import BluetideEmulation
import BluetideReflexEmulation
import BluetideSupport
import BluetideTransport
import Foundation

/// `session`: a game for several athletes at once on several trainers (or one, for a chase).
struct ReflexCoachSession: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "session",
        abstract: "Run a game for several athletes at once: head-to-head, relay or colour chase (Ctrl-C stops every lane, keeping what arrived).",
        discussion: """
            head-to-head: every athlete on a trainer of their own, the same sequence at once; the
              best mean reaction time wins, or with --first-to N the first to N hits (the other
              lanes are then stopped).
            relay: the athletes split in order into --teams equal teams (A,B,C,D in 2 teams:
              A,B against C,D), one trainer per team, members one after another; the lower total
              time wins (a miss costs its whole window).
            chase: 1-4 athletes on one trainer, each owning a colour (1 red, 2 blue, 3 green,
              4 yellow); the sequence's times with the players' targets in a random order; most
              hits wins. Each player's steps are stored as a session of their own.
            --adaptive-rounds N (head-to-head): N rounds per athlete, each a session stored as
              `NAME adaptive`, with one window for all steps that follows the athlete's results.
            Every run is stored as `run` stores it (a lost trainer is reconnected and its
            session marked the same way). With --emulate one emulated trainer per lane starts,
            each with a simulated athlete of a different skill.

            Examples:
              bluetide reflex coach athletes add Ben
              bluetide reflex coach session --mode head-to-head \\
                  --athletes "Ana Ruiz,Ben" --sequence Jab --first-to 3 --emulate
              bluetide reflex coach athletes add Cleo && \\
                  bluetide reflex coach athletes add Dan
              bluetide reflex coach session --mode relay --teams 2 \\
                  --athletes "Ana Ruiz,Ben,Cleo,Dan" --sequence Jab --emulate
              bluetide reflex coach session --mode chase --athletes Ben,Cleo,Dan \\
                  --sequence Jab --emulate --json
            """)
    @OptionGroup var database: CoachDatabaseOptions
    @Option(name: .long, help: "head-to-head, relay or chase.") var mode: String
    @Option(name: .long, help: "Athlete names, comma separated, in lane (or team, or colour) order.") var athletes: String
    @Option(name: .long, help: "Saved sequence name.") var sequence: String
    @Option(name: .long, help: "head-to-head: the first to this many hits wins (default: best mean).") var firstTo: Int?
    @Option(name: .long, help: "head-to-head: rounds per athlete with adaptive difficulty, 2-20 (the window shortens 10 % after 3 hits in a row, lengthens 20 % after a miss).")
    var adaptiveRounds: Int?
    @Option(name: .long, help: "relay: number of teams (default 2).") var teams: Int = 2
    @Option(name: .long, help: "chase: seed of the colour order (default random).") var seed: UInt64?
    @Option(name: .long, help: "Controller transport: \(TransportSpec.syntaxSummary)") var transport: String = "virtual"
    @Flag(name: .long, help: "Start one emulated punch trainer per lane on the same virtual link (hardware-free).") var emulate = false
    @Option(name: .long, help: "Seconds to look for the trainers.") var timeout: Double = 30
    @OptionGroup var output: CoachOutputOptions

    func run() async throws {
        let printer = output
        let ending: Ending
        // BLUETIDE_VIRTUAL_TIME=1 with --emulate: the whole game in virtual time (VirtualTimeOption).
        if let manual = VirtualTimeOption.clock(emulated: emulate && VirtualLinkSpec.namesVirtualRadio(transport)) {
            let command = self
            ending = try await manual.advancing { try await command.play(clock: BluetideClock(manual), emit: { printer.emit([$0]) }) }
        } else {
            ending = try await play(emit: { printer.emit([$0]) })
        }
        if let interruption = ending.interruption, let number = StopSignal.signals.first(where: { $0.name == interruption })?.number {
            throw ExitCode(128 + number)
        }
        if let failed = ending.outcome?.runs.first(where: { !$0.complete && !$0.reason.hasPrefix("stopped") }) {
            throw CommandFailure("a run ended incomplete: \(failed.reason) (session \(failed.sessionID.map(String.init) ?? "none"))")
        }
    }

    /// The game's mode from the options, or a usage failure naming the option.
    func gameMode() throws -> GymMode {
        switch mode {
        case "head-to-head":
            if let firstTo {
                guard firstTo >= 1 else { throw CommandFailure.usage("--first-to \(firstTo): expected 1 or more hits", field: "--first-to") }
                return .headToHead(.firstTo(hits: firstTo))
            }
            return .headToHead(.bestMean)
        case "relay":
            guard teams >= 1 else { throw CommandFailure.usage("--teams \(teams): expected 1 or more", field: "--teams") }
            return .relay(teams: teams)
        case "chase": return .chase(seed: seed ?? UInt64.random(in: 0...UInt64.max))
        default:
            throw CommandFailure.usage("--mode \"\(mode)\": expected head-to-head, relay or chase", field: "--mode")
        }
    }

    /// How a game ended, for the exit status.
    struct Ending: Sendable {
        var outcome: GymOutcome?
        var interruption: String?
    }

    /// Plays the game, handing each report to `emit`. With `--emulate`, the emulated world and
    /// the coach's waits run on `clock` (a test's manual clock plays the game in virtual time).
    func play(clock: BluetideClock = .continuous, emit: @escaping @Sendable (CoachOutput) -> Void) async throws -> Ending {
        guard timeout > 0, timeout <= 300 else { throw CommandFailure.usage("--timeout \(timeout): expected 0 < s ≤ 300", field: "--timeout") }
        let gameMode = try gameMode()
        if let adaptiveRounds {
            guard case .headToHead = gameMode else {
                throw CommandFailure.usage("--adaptive-rounds: only a head-to-head adapts its windows; drop it or use --mode head-to-head",
                                           field: "--adaptive-rounds")
            }
            guard (2...20).contains(adaptiveRounds) else {
                throw CommandFailure.usage("--adaptive-rounds \(adaptiveRounds): expected 2 to 20 rounds", field: "--adaptive-rounds")
            }
        }
        let names = try CoachCLI.input { try AthleteLookup.names(athletes) }
        let store = try database.open()
        var game = CoachGame(mode: gameMode, athleteNames: names, sequenceName: sequence)
        game.adaptiveRounds = adaptiveRounds ?? 1
        game.transport = transport
        game.emulate = emulate
        game.scanTimeout = .milliseconds(Int64(timeout * 1000))
        let lineup: CoachGame.Lineup
        do { lineup = try game.lineUp(in: store) } catch let error as CoachError {
            if case .sequence = error { throw CommandFailure.usage("--sequence: \(error)", field: "--sequence") }
            throw CommandFailure.usage("--athletes: \(error)", field: "--athletes")
        } catch {
            throw CoachCLI.failure(error)
        }
        let byID = Dictionary(lineup.athletes.map { ($0.id ?? -1, $0) }, uniquingKeysWith: { a, _ in a })
        if let warning = CoachTransportWarning.line(transport: transport, emulate: emulate) { appLogger.warning("\(warning)") }
        let signals = StopSignal.install()
        let sides = GameJSON.sideNames(gameMode, ids: lineup.ids, athletes: byID)
        let played: (outcome: GymOutcome?, stopReason: String?)
        do {
            played = try await game.play(
                lineup, store: store, clock: clock, stopWhen: { await signals.wait() },
                message: { emit(CoachJSON.message($0)) },
                report: { emit(GameJSON.event($0, athletes: byID, sides: sides)) })
        } catch {
            throw CoachCLI.failure(error)
        }
        let outcome = played.outcome
        if let reason = played.stopReason {
            emit(CoachOutput("interrupted (\(reason)): every run stored as incomplete", type: "interrupted", ["signal": .string(reason)]))
        }
        return Ending(outcome: outcome, interruption: played.stopReason)
    }
}

/// The records of a game (`reflex coach session`): each lane's coach events with `lane` (from 1)
/// and `athleteName`, then `decided` and one `standing` per side, and `game-finished`.
enum GameJSON {
    static func name(_ id: Int64, _ athletes: [Int64: Athlete]) -> String { athletes[id]?.name ?? "athlete \(id)" }

    static func sideText(_ standing: GymStanding, mode: GymMode, _ athletes: [Int64: Athlete]) -> String {
        let who = standing.athleteIDs.map { name($0, athletes) }.joined(separator: ", ")
        switch mode {
        case .relay: return "team \(standing.side + 1) (\(who))"
        case .chase: return "\(who) (\(TargetPalette.colour(of: UInt8(standing.side))?.name ?? "?"))"
        case .headToHead: return "lane \(standing.side + 1) (\(who))"
        }
    }

    static func decisionText(_ decision: GameDecision, mode: GymMode, standings: [GymStanding], _ athletes: [Int64: Athlete]) -> String {
        func side(_ index: Int) -> String {
            standings.first { $0.side == index }.map { sideText($0, mode: mode, athletes) } ?? "side \(index + 1)"
        }
        switch decision {
        case let .winner(index, why): return "winner: \(side(index)): \(why)"
        case let .draw(indices, why): return "draw: \(indices.map(side).joined(separator: " and ")): \(why)"
        case let .noResult(why): return "no result: \(why)"
        }
    }

    static func decisionJSON(_ decision: GameDecision) -> [String: JSONOutputValue] {
        switch decision {
        case let .winner(side, why): return ["result": "winner", "sides": .array([.integer(Int64(side + 1))]), "reason": .string(why)]
        case let .draw(sides, why): return ["result": "draw", "sides": .array(sides.map { .integer(Int64($0 + 1)) }), "reason": .string(why)]
        case let .noResult(why): return ["result": "none", "sides": .array([]), "reason": .string(why)]
        }
    }

    static func tally(_ t: GameTally) -> JSONOutputValue {
        ["steps": .integer(Int64(t.steps)), "hits": .integer(Int64(t.hits)), "misses": .integer(Int64(t.misses)),
         "meanMilliseconds": CoachJSON.optional(t.meanMilliseconds), "bestMilliseconds": t.bestMilliseconds.map { .integer(Int64($0)) } ?? .null,
         "totalMilliseconds": .integer(Int64(t.totalMilliseconds))]
    }

    /// Each side's name in words, by side index: `Ana`, `team 1 (Ana, Ben)`, `Ana (red)`.
    static func sideNames(_ mode: GymMode, ids: [Int64], athletes: [Int64: Athlete]) -> [String] {
        switch mode {
        case .headToHead: return ids.map { name($0, athletes) }
        case let .relay(teams):
            let split = (try? Relay.teams(of: ids, count: teams)) ?? []
            return split.enumerated().map { "team \($0.offset + 1) (\($0.element.map { name($0, athletes) }.joined(separator: ", ")))" }
        case .chase:
            return ids.enumerated().map { "\(name($0.element, athletes)) (\(TargetPalette.colour(of: UInt8($0.offset))?.name ?? "?"))" }
        }
    }

    static func words(_ decision: GameDecision, sides: [String]) -> String {
        func side(_ index: Int) -> String { sides.indices.contains(index) ? sides[index] : "side \(index + 1)" }
        switch decision {
        case let .winner(index, why): return "\(side(index)) wins (\(why))"
        case let .draw(indices, why): return "draw between \(indices.map(side).joined(separator: " and ")) (\(why))"
        case let .noResult(why): return "no result (\(why))"
        }
    }

    static func event(_ event: GymEvent, athletes: [Int64: Athlete], sides: [String] = []) -> CoachOutput {
        switch event {
        case let .scanning(count, seconds):
            return CoachOutput("scanning up to \(Int(seconds)) s for \(count) Punch trainer\(count == 1 ? "" : "s")", type: "scanning",
                               ["scanSeconds": .number(seconds), "trainers": .integer(Int64(count))])
        case let .trainers(found):
            let text = found.enumerated().map { "lane \($0.offset + 1): \($0.element.name ?? "?") at \($0.element.address.string)" }
            return CoachOutput(text, type: "trainers", ["devices": .array(found.map { JSONOutput.device(text: $0.address.string, name: $0.name) })])
        case let .runStarting(lane, athleteID, member):
            return CoachOutput("lane \(lane + 1): \(name(athleteID, athletes)) starts" + (member > 0 ? " (leg \(member + 1))" : ""),
                               type: "run-starting", ["lane": .integer(Int64(lane + 1)), "athleteName": .string(name(athleteID, athletes)),
                                                      "leg": .integer(Int64(member + 1))])
        case let .lane(lane, athleteID, coachEvent):
            var output = CoachJSON.event(coachEvent)
            output.lines = output.lines.map { "lane \(lane + 1) \(name(athleteID, athletes)): \($0)" }
            output.fields["lane"] = .integer(Int64(lane + 1))
            output.fields["athleteName"] = .string(name(athleteID, athletes))
            return output
        case let .laneFailed(lane, athleteID, error):
            return CoachOutput("lane \(lane + 1) \(name(athleteID, athletes)): failed: \(error)", type: "run-failed",
                               ["lane": .integer(Int64(lane + 1)), "athleteName": .string(name(athleteID, athletes)), "message": .string(error)])
        case let .decided(decision):
            var fields = decisionJSON(decision)
            fields["message"] = .string(words(decision, sides: sides))
            return CoachOutput("decided: \(words(decision, sides: sides))", type: "decided", fields)
        case let .finished(outcome):
            var lines = [decisionText(outcome.decision, mode: outcome.mode, standings: outcome.standings, athletes)]
            var records: [String] = []
            for standing in outcome.standings {
                let t = standing.tally
                lines.append("  \(standing.place). \(sideText(standing, mode: outcome.mode, athletes)): \(t.hits)/\(t.steps) hit, mean "
                    + CoachCLI.milliseconds(t.meanMilliseconds) + ", total \(t.totalMilliseconds) ms")
                records.append(JSONOutput.line("standing", [
                    "place": .integer(Int64(standing.place)), "side": .integer(Int64(standing.side + 1)),
                    "athletes": .array(standing.athleteIDs.map { .string(name($0, athletes)) }), "tally": tally(t),
                ]))
            }
            for run in outcome.runs {
                lines.append("  session \(run.sessionID.map(String.init) ?? "-") \(name(run.athleteID, athletes)): "
                    + "\(run.complete ? "complete" : "incomplete") (\(run.reason))")
            }
            var fields = decisionJSON(outcome.decision)
            fields["mode"] = .string(modeName(outcome.mode))
            fields["runs"] = .array(outcome.runs.map {
                ["lane": .integer(Int64($0.lane + 1)), "athleteName": .string(name($0.athleteID, athletes)),
                 "sessionId": $0.sessionID.map { .integer($0) } ?? .null, "complete": .bool($0.complete), "reason": .string($0.reason)]
            })
            records.append(JSONOutput.line("game-finished", fields))
            return CoachOutput(lines: lines, records: records)
        }
    }

    static func modeName(_ mode: GymMode) -> String {
        switch mode {
        case .headToHead: return "head-to-head"
        case .relay: return "relay"
        case .chase: return "chase"
        }
    }
}

/// `board`: leaderboards per sequence, weight class and time window.
struct ReflexCoachBoard: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "board",
        abstract: "Leaderboards: each athlete's best complete session per sequence, by day, week or all time, per weight class.",
        discussion: """
            The score is the mean time per step with a miss costing its whole window, so speed and
            accuracy both count (lower is better). A weight class is taken from the athlete's last
            weigh-in on or before the session's day. Without --sequence every sequence with a
            counting session gets a board.

            Examples:
              bluetide reflex coach board --sequence Jab
              bluetide reflex coach board --period week --weight-class 63.5 --json
            """)
    @OptionGroup var database: CoachDatabaseOptions
    @Option(name: .long, help: "Saved sequence (or stored session) name; default: every one.") var sequence: String?
    @Option(name: .long, help: "day (today, UTC), week (the last 7 days) or all.") var period: String = "all"
    @Option(name: .long, help: "Weight class by its upper limit in kg (\(WeightClass.all.map(\.argument).joined(separator: ", "))).")
    var weightClass: String?
    @Option(name: .long, help: "Entries per board, 1-1000.") var limit: Int = 10
    @OptionGroup var output: CoachOutputOptions

    func outputs(now: Date = Date()) throws -> [CoachOutput] {
        guard let window = Leaderboard.Period(rawValue: period) else {
            throw CommandFailure.usage("--period \"\(period)\": expected day, week or all", field: "--period")
        }
        let cls = try weightClass.map { text in
            guard let parsed = WeightClass(parsing: text) else {
                throw CommandFailure.usage(
                    "--weight-class \"\(text)\": expected one of \(WeightClass.all.map(\.argument).joined(separator: ", "))", field: "--weight-class")
            }
            return parsed
        }
        guard (1...1000).contains(limit) else { throw CommandFailure.usage("--limit \(limit): expected 1 to 1000", field: "--limit") }
        let store = try database.open()
        let boards = try CoachCLI.failing {
            try CoachCLI.input { try Leaderboards.boards(sequence: sequence, period: window, weightClass: cls, limit: limit, now: now, in: store) }
        }
        let scope = "\(window == .all ? "all time" : window == .day ? "today" : "last 7 days")" + (cls.map { ", \($0)" } ?? "")
        var outputs: [CoachOutput] = []
        if boards.isEmpty { return [CoachOutput("no complete sessions yet", type: nil)] }
        for found in boards {
            let (name, board) = (found.sequence, found.entries)
            outputs.append(CoachOutput("\(name) (\(scope)):\(board.isEmpty ? " no complete sessions" : "")", type: "board", [
                "sequence": .string(name), "period": .string(window.rawValue), "weightClass": CoachJSON.optional(cls?.argument),
                "entries": .integer(Int64(board.count)),
            ]))
            for entry in board {
                outputs.append(CoachOutput(
                    "  \(entry.rank). \(entry.athlete.name)  \(CoachCLI.fixed(entry.scoreMilliseconds, digits: 0)) ms/step  "
                        + "\(entry.summary.hits)/\(entry.summary.count) hit, mean \(CoachCLI.milliseconds(entry.summary.meanMilliseconds))  "
                        + "\(entry.weightClass?.description ?? "no weigh-in")  session \(entry.session.id ?? -1) \(CoachCLI.dateText(entry.session.started))",
                    type: "board-entry", [
                        "sequence": .string(name), "rank": .integer(Int64(entry.rank)), "athlete": CoachJSON.athlete(entry.athlete),
                        "sessionId": .integer(entry.session.id ?? -1), "started": .string(CoachCLI.dateText(entry.session.started)),
                        "scoreMilliseconds": .number(entry.scoreMilliseconds), "summary": CoachJSON.summary(entry.summary),
                        "weightClass": CoachJSON.optional(entry.weightClass?.argument),
                    ]))
            }
        }
        return outputs
    }
    func lines(now: Date = Date()) throws -> [String] { try outputs(now: now).flatMap(\.lines) }
    func run() async throws { output.emit(try outputs()) }
}

/// `progress`: an athlete's trends over sessions, overall and per target.
struct ReflexCoachProgress: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "progress",
        abstract: "An athlete's progress over sessions: trends of mean and best reaction time and of the miss rate, overall and per target.",
        discussion: """
            Slopes are least-squares lines over the sessions in order (per session; negative is
            faster, or fewer misses). --chart draws mean, best and each target's mean per session;
            --heart-rate-chart each hit's reaction time against the heart rate (with a strap).

            Examples:
              bluetide reflex coach progress --athlete "Ana Ruiz" --chart ana-progress.svg
              bluetide reflex coach progress --athlete "Ana Ruiz" --json
            """)
    @OptionGroup var database: CoachDatabaseOptions
    @Option(name: .long, help: "Athlete name.") var athlete: String
    @Option(name: .long, help: "Write the progress chart (SVG) here.") var chart: String?
    @Option(name: .long, help: "Write reaction time against heart rate (SVG) here.") var heartRateChart: String?
    @OptionGroup var output: CoachOutputOptions

    static func trendText(_ trend: ProgressTrend, unit: String, percent: Bool = false) -> String {
        func value(_ v: Double?) -> String {
            guard let v else { return "-" }
            return percent ? CoachCLI.fixed(v * 100, digits: 0) + " %" : CoachCLI.fixed(v, digits: 0) + " ms"
        }
        let slope = trend.perSession.map { s in
            (percent ? CoachCLI.fixed(s * 100, digits: 1) + " points" : CoachCLI.fixed(s, digits: 1) + " ms") + " per session"
        } ?? "needs two sessions"
        return "\(value(trend.first)) → \(value(trend.last)) (\(slope))"
    }

    static func trendJSON(_ trend: ProgressTrend) -> JSONOutputValue {
        ["perSession": CoachJSON.optional(trend.perSession), "first": CoachJSON.optional(trend.first), "last": CoachJSON.optional(trend.last)]
    }

    func outputs() throws -> [CoachOutput] {
        let store = try database.open()
        let report = try CoachCLI.failing { try CoachCLI.input { try ProgressReport.of(athlete, in: store) } }
        let (person, progress) = (report.athlete, report.progress)
        var outputs = [CoachOutput(
            ["\(person.name): \(progress.points.count) session\(progress.points.count == 1 ? "" : "s")",
             "  mean \(Self.trendText(progress.mean, unit: "ms"))", "  best \(Self.trendText(progress.best, unit: "ms"))",
             "  misses \(Self.trendText(progress.missRate, unit: "%", percent: true))"],
            type: "progress", [
                "athlete": CoachJSON.athlete(person), "sessions": .integer(Int64(progress.points.count)),
                "mean": Self.trendJSON(progress.mean), "best": Self.trendJSON(progress.best), "missRate": Self.trendJSON(progress.missRate),
            ])]
        for target in progress.perTarget {
            let colour = TargetPalette.colour(of: target.target)?.name
            outputs.append(CoachOutput(
                "  target \(target.target) (\(colour ?? "?")): mean \(Self.trendText(target.mean, unit: "ms")); misses \(Self.trendText(target.missRate, unit: "%", percent: true))",
                type: "target-progress", [
                    "target": .integer(Int64(target.target)), "colour": CoachJSON.optional(colour), "sessions": .integer(Int64(target.points.count)),
                    "mean": Self.trendJSON(target.mean), "best": Self.trendJSON(target.best), "missRate": Self.trendJSON(target.missRate),
                ]))
        }
        if let chart {
            try CoachCLI.write(report.chart, to: chart)
            outputs.append(CoachOutput("wrote \(chart)", type: "chart-written", ["file": .string(chart)]))
        }
        if let heartRateChart {
            try CoachCLI.write(report.heartRateChart, to: heartRateChart)
            outputs.append(CoachOutput("wrote \(heartRateChart)", type: "chart-written", ["file": .string(heartRateChart)]))
        }
        return outputs
    }
    func lines() throws -> [String] { try outputs().flatMap(\.lines) }
    func run() async throws { output.emit(try outputs()) }
}
