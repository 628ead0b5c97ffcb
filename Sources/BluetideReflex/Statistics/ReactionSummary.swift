import Foundation
import BluetideCharts

/// Counts and reaction-time figures for a set of steps. Times are in milliseconds and use hits
/// only (a miss's time is just the step's interval); they are nil when there is no hit.
public struct ReactionSummary: Hashable, Sendable, Codable {
    /// Steps counted.
    public var count: Int
    /// Steps where the lit target was hit in time.
    public var hits: Int
    /// Steps that timed out.
    public var misses: Int { count - hits }
    /// Steps where another target was hit first.
    public var wrongTargetFirst: Int
    /// hits / count, 0...1; nil when there are no steps.
    public var hitRate: Double?
    /// Mean reaction time of hits, ms.
    public var meanMilliseconds: Double?
    /// Median reaction time of hits, ms (mean of the two middle values for an even count).
    public var medianMilliseconds: Double?
    /// Fastest hit, ms.
    public var bestMilliseconds: Double?
    /// Slowest hit, ms.
    public var worstMilliseconds: Double?
    /// Population standard deviation of hit times, ms (0 for a single hit).
    public var standardDeviationMilliseconds: Double?

    /// An empty summary (no steps).
    public static let empty = ReactionSummary(count: 0, hits: 0, wrongTargetFirst: 0)

    /// Builds a summary; normally made by ``ReflexStatistics/summary(of:)``.
    public init(count: Int, hits: Int, wrongTargetFirst: Int, hitRate: Double? = nil, meanMilliseconds: Double? = nil,
                medianMilliseconds: Double? = nil, bestMilliseconds: Double? = nil, worstMilliseconds: Double? = nil,
                standardDeviationMilliseconds: Double? = nil) {
        self.count = count
        self.hits = hits
        self.wrongTargetFirst = wrongTargetFirst
        self.hitRate = hitRate
        self.meanMilliseconds = meanMilliseconds
        self.medianMilliseconds = medianMilliseconds
        self.bestMilliseconds = bestMilliseconds
        self.worstMilliseconds = worstMilliseconds
        self.standardDeviationMilliseconds = standardDeviationMilliseconds
    }
}

/// The summary of one target's steps.
public struct TargetSummary: Hashable, Sendable, Codable {
    /// Target index 0...5.
    public var target: UInt8
    /// Its figures.
    public var summary: ReactionSummary
}

/// Figures for one session, overall and per target.
public struct SessionStatistics: Hashable, Sendable, Codable {
    /// The session.
    public var session: TrainingSession
    /// All its steps together.
    public var overall: ReactionSummary
    /// One entry per target that occurs in the steps, by target index.
    public var perTarget: [TargetSummary]
    /// Steps of the program that have no stored result (the run stopped or the link dropped).
    public var missingSteps: Int
    /// Reaction-time drift from the start to the end of the session; nil with too few hits.
    public var fatigue: Fatigue? = nil
}

/// A straight line y = intercept + slope · x fitted by least squares.
public struct LinearFit: Hashable, Sendable, Codable {
    /// Change of y per unit of x.
    public var slope: Double
    /// y at x = 0.
    public var intercept: Double

    /// The line's y at `x`.
    public func value(at x: Double) -> Double { intercept + slope * x }
}

/// One session's mean in an athlete's history.
public struct SessionMeanPoint: Hashable, Sendable, Codable {
    /// The session's id.
    public var sessionID: Int64
    /// When it started.
    public var started: Date
    /// Mean reaction time of its hits, ms.
    public var meanMilliseconds: Double
    /// Its hit rate 0...1.
    public var hitRate: Double
}

/// An athlete's progress: session means in time order and their trends (negative slopes mean
/// getting faster).
public struct AthleteTrend: Hashable, Sendable, Codable {
    /// Sessions with at least one hit, oldest first.
    public var points: [SessionMeanPoint]
    /// Fit of mean against session number (0, 1, 2, ...): slope in ms per session; nil with fewer than 2 points.
    public var perSession: LinearFit?
    /// Fit of mean against weeks since the first point: slope in ms per week; nil with fewer than
    /// 2 points or when all sessions started at the same instant.
    public var perWeek: LinearFit?
    /// Slope in ms per session, if defined.
    public var millisecondsPerSession: Double? { perSession?.slope }
    /// Slope in ms per week, if defined.
    public var millisecondsPerWeek: Double? { perWeek?.slope }

    /// Days the sessions must span before a per-week trend is shown: over a shorter span (a few
    /// sessions minutes apart) the per-week slope extrapolates seconds to a week and means nothing.
    public static let weeklyTrendMinimumDays = 14.0

    /// Days from the first to the last session.
    public var spanDays: Double {
        guard let first = points.first, let last = points.last else { return 0 }
        return last.started.timeIntervalSince(first.started) / 86_400
    }

    /// The per-week slope when the sessions span at least ``weeklyTrendMinimumDays``, else nil.
    public var shownMillisecondsPerWeek: Double? {
        spanDays >= Self.weeklyTrendMinimumDays ? millisecondsPerWeek : nil
    }

    /// The trend in words, one rule for every view: `81.1 ms slower per session`, with
    /// `(3.5 ms faster per week)` when the sessions span two weeks or more; `no change per
    /// session`; nil with fewer than two sessions.
    public var text: String? {
        guard let slope = millisecondsPerSession else { return nil }
        var text = Self.words(slope, per: "session")
        if let weekly = shownMillisecondsPerWeek { text += " (\(Self.words(weekly, per: "week")))" }
        return text
    }

    /// `12.0 ms faster per week` (negative: faster), `3.1 ms slower per session`, `no change per week`.
    static func words(_ slope: Double, per unit: String) -> String {
        let rounded = DecimalText.fixed(abs(slope), 1)
        guard rounded != "0.0" else { return "no change per \(unit)" }
        return "\(rounded) ms \(slope < 0 ? "faster" : "slower") per \(unit)"
    }
}

/// Everything about one athlete's training at a glance: all steps together, per target, and the
/// trend of session means.
public struct AthleteStatistics: Hashable, Sendable, Codable {
    /// Number of sessions considered.
    public var sessions: Int
    /// All steps of all sessions together.
    public var overall: ReactionSummary
    /// Per target over all sessions, by target index.
    public var perTarget: [TargetSummary]
    /// Session means over time and their slopes.
    public var trend: AthleteTrend
}
