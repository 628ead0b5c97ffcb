import BluetideReflex
import Foundation

/// An athlete's progress over sessions (the `progress` command): the trends and, for the
/// charts, the step results they come from.
public struct ProgressReport: Sendable {
    /// The athlete.
    public var athlete: Athlete
    /// Trends of mean, best and miss rate, overall and per target.
    public var progress: AthleteProgress
    /// Every session's results, oldest first.
    public var results: [SessionResults]

    /// The progress of the athlete called `name`.
    /// - Throws: ``CoachInputError`` for an unknown or ambiguous name; `CoachStoreError`.
    public static func of(_ name: String, in store: CoachStore) throws -> ProgressReport {
        let athlete = try AthleteLookup.athlete(name, in: store)
        let results = try store.results(athleteID: athlete.id ?? -1)
        return ProgressReport(athlete: athlete, progress: AthleteProgress.of(results), results: results)
    }

    /// The progress chart (SVG): mean, best and each target's mean per session.
    public var chart: String { SVGChart.progress(progress, title: "\(athlete.name): progress per session") }

    /// Reaction time against heart rate (SVG), every step with a heart rate.
    public var heartRateChart: String {
        SVGChart.reactionAgainstHeartRate(results.flatMap(\.steps), title: "\(athlete.name): reaction time against heart rate")
    }
}
