import ArgumentParser
import Bluetide
import BluetideBase
import BluetideEmulation
import BluetideDeviceModels
import BluetideProfiles
import BluetideReflex
import BluetideReflexCoach
import BluetideReflexEmulation
import BluetideReflexWeb
import BluetideTransport
import BluetideGateway
import Foundation

// MARK: history, export, chart

/// `history`: sessions, per-target statistics and trend of one athlete.
struct ReflexCoachHistory: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "history", abstract: "An athlete's sessions, per-target statistics and trend.")
    @OptionGroup var database: CoachDatabaseOptions
    @Option(name: .long, help: "Athlete name.") var athlete: String
    @OptionGroup var output: CoachOutputOptions

    func outputs() throws -> [CoachOutput] {
        let history = try CoachCLI.input { try AthleteHistory.of(athlete, in: try database.open()) }
        let person = history.athlete
        let athleteJSON = CoachJSON.athlete(person)
        guard let overall = history.overall, !history.sessions.isEmpty else {
            return [CoachOutput("\(person.name): no sessions", type: "history", ["athlete": athleteJSON, "sessions": 0])]
        }
        let count = history.sessions.count
        var outputs = [CoachOutput("\(person.name): \(count) session\(count == 1 ? "" : "s")", type: "history",
                                   ["athlete": athleteJSON, "sessions": .integer(Int64(count))])]
        for stats in history.sessions {
            let state = (stats.session.complete ? "complete" : "incomplete") + (stats.session.endReason.map { " (\($0))" } ?? "")
            outputs.append(CoachOutput(
                "session \(stats.session.id ?? -1)  \(CoachCLI.dateText(stats.session.started))  \(stats.session.sequenceName ?? "-")  \(state)  \(CoachCLI.summaryLine(stats.overall))",
                type: "session", [
                    "sessionId": .integer(stats.session.id ?? -1), "started": .string(CoachCLI.dateText(stats.session.started)),
                    "sequence": CoachJSON.optional(stats.session.sequenceName), "complete": .bool(stats.session.complete),
                    "endReason": CoachJSON.optional(stats.session.endReason), "summary": CoachJSON.summary(stats.overall),
                ]))
        }
        outputs.append(CoachOutput("per target:", type: nil))
        for t in overall.perTarget {
            let colour = TargetPalette.colour(of: t.target)?.name
            outputs.append(CoachOutput("  target \(t.target) (\(colour ?? "?")): \(CoachCLI.summaryLine(t.summary))", type: "target", [
                "target": .integer(Int64(t.target)), "colour": CoachJSON.optional(colour), "summary": CoachJSON.summary(t.summary),
            ]))
        }
        let slope = overall.trend.millisecondsPerSession
        let trendText = overall.trend.text ?? "needs two sessions"
        outputs.append(CoachOutput("trend: \(trendText)", type: "trend", ["millisecondsPerSession": CoachJSON.optional(slope)]))
        return outputs
    }
    func lines() throws -> [String] { try outputs().flatMap(\.lines) }
    func run() async throws { output.emit(try outputs()) }
}

/// `export`: one athlete's step results as CSV.
struct ReflexCoachExport: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "export", abstract: "Export an athlete's results as CSV (one row per step, or per session).")
    @OptionGroup var database: CoachDatabaseOptions
    @Option(name: .long, help: "Athlete name.") var athlete: String
    @Option(name: .long, help: "Output CSV file.") var out: String
    @Flag(name: .long, help: "One row per session instead of per step.") var sessions = false
    @OptionGroup var output: CoachOutputOptions

    func outputs() throws -> [CoachOutput] {
        let (person, csv, rows) = try CoachCLI.input { try AthleteHistory.csv(of: athlete, perSession: sessions, in: try database.open()) }
        try CoachCLI.write(csv, to: out)
        return [CoachOutput("wrote \(rows) row\(rows == 1 ? "" : "s") to \(out)", type: "exported",
                            ["file": .string(out), "rows": .integer(Int64(rows)), "athlete": CoachJSON.athlete(person)])]
    }
    func lines() throws -> [String] { try outputs().flatMap(\.lines) }
    func run() async throws { output.emit(try outputs()) }
}

/// `chart`: one session's reaction times as SVG.
struct ReflexCoachChart: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "chart", abstract: "Draw a session's reaction times as an SVG chart.")
    @OptionGroup var database: CoachDatabaseOptions
    @Option(name: .long, help: "Athlete name.") var athlete: String
    @Option(name: .long, help: "Session id (see history).") var session: Int64
    @Option(name: .long, help: "Output SVG file.") var out: String
    @OptionGroup var output: CoachOutputOptions

    func outputs() throws -> [CoachOutput] {
        let chart = try CoachCLI.input { try AthleteHistory.chart(session, of: athlete, in: try database.open()) }
        try CoachCLI.write(chart.svg, to: out)
        return [CoachOutput("wrote \(out)", type: "chart-written", ["file": .string(out), "sessionId": .integer(session)])]
    }
    func lines() throws -> [String] { try outputs().flatMap(\.lines) }
    func run() async throws { output.emit(try outputs()) }
}
