import BluetideReflex
import Foundation

/// One athlete's sessions with their statistics, per-target figures and trend (the `history`
/// command), plus the lookups `chart` and `export` make.
public struct AthleteHistory: Sendable {
    /// The athlete.
    public var athlete: Athlete
    /// Each stored session, oldest first, with its statistics.
    public var sessions: [SessionStatistics]
    /// Every session together: per-target figures and the trend (nil when there are no sessions).
    public var overall: AthleteStatistics?

    /// The history of the athlete called `name`.
    /// - Throws: ``CoachInputError`` for an unknown or ambiguous name; `CoachStoreError`.
    public static func of(_ name: String, in store: CoachStore) throws -> AthleteHistory {
        let athlete = try AthleteLookup.athlete(name, in: store)
        let results = try store.results(athleteID: athlete.id ?? -1)
        return AthleteHistory(athlete: athlete, sessions: results.map(ReflexStatistics.session),
                              overall: results.isEmpty ? nil : ReflexStatistics.athlete(results))
    }

    /// Session `sessionID` of the athlete called `name`, with its results.
    /// - Throws: ``CoachInputError`` `.noSuchSession` when the athlete has no such session.
    public static func session(_ sessionID: Int64, of name: String, in store: CoachStore) throws -> (Athlete, SessionResults) {
        let athlete = try AthleteLookup.athlete(name, in: store)
        guard let results = try store.results(athleteID: athlete.id ?? -1).first(where: { $0.session.id == sessionID }) else {
            throw CoachInputError(field: "--session", .noSuchSession(athlete: athlete.name, id: sessionID))
        }
        return (athlete, results)
    }

    /// The SVG chart of session `sessionID`'s reaction times, titled with the athlete and session.
    public static func chart(_ sessionID: Int64, of name: String, in store: CoachStore) throws -> (athlete: Athlete, svg: String) {
        let (athlete, results) = try session(sessionID, of: name, in: store)
        return (athlete, SVGChart.reactionTimes(of: results, title: "\(athlete.name), session \(sessionID)"))
    }

    /// The CSV of the athlete called `name`: one row per step, or per session.
    /// - Returns: the athlete, the CSV text and its row count (header left out).
    public static func csv(of name: String, perSession: Bool, in store: CoachStore) throws -> (athlete: Athlete, csv: String, rows: Int) {
        let athlete = try AthleteLookup.athlete(name, in: store)
        let csv = perSession ? try CSVExport.sessions(from: store, athleteID: athlete.id) : try CSVExport.steps(from: store, athleteID: athlete.id)
        return (athlete, csv, csv.split(whereSeparator: \.isNewline).count - 1)
    }
}
