import Foundation

/// Statistics over stored step results: pure functions, no database access.
public enum ReflexStatistics {
    /// Seconds in a week, the unit of ``AthleteTrend/perWeek``.
    public static let secondsPerWeek: Double = 7 * 86_400

    /// Counts, hit rate and reaction-time figures (hits only) of `steps`.
    public static func summary(of steps: [StepResult]) -> ReactionSummary {
        guard !steps.isEmpty else { return .empty }
        let hitTimes = steps.filter(\.hit).map { Double($0.reactionMilliseconds) }
        var result = ReactionSummary(
            count: steps.count, hits: hitTimes.count, wrongTargetFirst: steps.filter(\.wrongTarget).count,
            hitRate: Double(hitTimes.count) / Double(steps.count))
        guard !hitTimes.isEmpty else { return result }
        let sorted = hitTimes.sorted()
        let mean = sorted.reduce(0, +) / Double(sorted.count)
        result.meanMilliseconds = mean
        result.medianMilliseconds = median(ofSorted: sorted)
        result.bestMilliseconds = sorted.first
        result.worstMilliseconds = sorted.last
        let variance = sorted.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(sorted.count)
        result.standardDeviationMilliseconds = variance.squareRoot()
        return result
    }

    /// One summary per target present in `steps`, ordered by target index.
    public static func perTarget(_ steps: [StepResult]) -> [TargetSummary] {
        Dictionary(grouping: steps, by: \.target)
            .sorted { $0.key < $1.key }
            .map { TargetSummary(target: $0.key, summary: summary(of: $0.value)) }
    }

    /// Overall and per-target figures for one session.
    public static func session(_ results: SessionResults) -> SessionStatistics {
        let reported = Set(results.steps.map(\.stepIndex)).count
        return SessionStatistics(
            session: results.session, overall: summary(of: results.steps), perTarget: perTarget(results.steps),
            missingSteps: max(0, results.session.stepCount - reported), fatigue: Fatigue.of(results.steps))
    }

    /// An athlete's session means over time and the least-squares trend, per session and per
    /// week. Sessions without hits have no mean and are left out; incomplete sessions are left
    /// out unless `includeIncomplete`.
    public static func trend(of sessions: [SessionResults], includeIncomplete: Bool = true) -> AthleteTrend {
        let points: [SessionMeanPoint] = sessions
            .filter { includeIncomplete || $0.session.complete }
            .sorted { ($0.session.started, $0.session.id ?? 0) < ($1.session.started, $1.session.id ?? 0) }
            .compactMap { results in
                let s = summary(of: results.steps)
                guard let mean = s.meanMilliseconds, let rate = s.hitRate else { return nil }
                return SessionMeanPoint(sessionID: results.session.id ?? 0, started: results.session.started,
                                        meanMilliseconds: mean, hitRate: rate)
            }
        let means = points.map(\.meanMilliseconds)
        let perSession = leastSquares(x: means.indices.map(Double.init), y: means)
        let origin = points.first?.started ?? Date(timeIntervalSince1970: 0)
        let weeks = points.map { $0.started.timeIntervalSince(origin) / secondsPerWeek }
        return AthleteTrend(points: points, perSession: perSession, perWeek: leastSquares(x: weeks, y: means))
    }

    /// Overall, per-target and trend figures over an athlete's sessions (see ``trend(of:includeIncomplete:)``
    /// for which sessions count towards the trend).
    public static func athlete(_ sessions: [SessionResults], includeIncomplete: Bool = true) -> AthleteStatistics {
        let counted = sessions.filter { includeIncomplete || $0.session.complete }
        let steps = counted.flatMap(\.steps)
        return AthleteStatistics(sessions: counted.count, overall: summary(of: steps), perTarget: perTarget(steps),
                                 trend: trend(of: counted))
    }

    /// Median of an ascending list: the middle value, or the mean of the two middle values; nil when empty.
    public static func median(ofSorted values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let mid = values.count / 2
        return values.count % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2
    }

    /// Least-squares line through (x, y); nil with fewer than two points, unequal lengths, or
    /// when all x are equal (the slope is undefined).
    public static func leastSquares(x: [Double], y: [Double]) -> LinearFit? {
        guard x.count == y.count, x.count >= 2 else { return nil }
        let n = Double(x.count)
        let meanX = x.reduce(0, +) / n, meanY = y.reduce(0, +) / n
        var sxy = 0.0, sxx = 0.0
        for (xi, yi) in zip(x, y) {
            sxy += (xi - meanX) * (yi - meanY)
            sxx += (xi - meanX) * (xi - meanX)
        }
        guard sxx > 0, sxx.isFinite, sxy.isFinite else { return nil }
        let slope = sxy / sxx
        return LinearFit(slope: slope, intercept: meanY - slope * meanX)
    }
}
