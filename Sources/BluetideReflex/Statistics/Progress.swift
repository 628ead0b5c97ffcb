import Foundation

/// One session in an athlete's progress: its mean and best reaction time and miss rate.
public struct ProgressPoint: Hashable, Sendable, Codable {
    /// The session.
    public var sessionID: Int64
    /// When it started.
    public var started: Date
    /// Steps counted.
    public var steps: Int
    /// Mean and best reaction time of hits, ms (nil without hits).
    public var meanMilliseconds: Double?
    public var bestMilliseconds: Double?
    /// Misses / steps, 0...1.
    public var missRate: Double
}

/// How one figure moved over the sessions: least-squares slope per session (negative is
/// faster for times, fewer misses for the miss rate), and its first and last value.
public struct ProgressTrend: Hashable, Sendable, Codable {
    /// Change per session (ms, or miss-rate fraction); nil with fewer than two values.
    public var perSession: Double?
    /// The first and last value.
    public var first: Double?
    public var last: Double?

    /// The trend of `values` in session order (nil values are left out).
    public static func of(_ values: [Double?]) -> ProgressTrend {
        let indexed = values.enumerated().compactMap { index, value in value.map { (Double(index), $0) } }
        return ProgressTrend(perSession: ReflexStatistics.leastSquares(x: indexed.map(\.0), y: indexed.map(\.1))?.slope,
                             first: indexed.first?.1, last: indexed.last?.1)
    }
}

/// An athlete's progress over sessions, overall and per target: trends of mean and best reaction
/// time and of the miss rate.
public struct AthleteProgress: Hashable, Sendable, Codable {
    /// One target's progress.
    public struct Target: Hashable, Sendable, Codable {
        /// Target index 0...5.
        public var target: UInt8
        /// Its points, one per session that lit it.
        public var points: [ProgressPoint]
        public var mean: ProgressTrend
        public var best: ProgressTrend
        public var missRate: ProgressTrend
    }

    /// All steps of each session, oldest first.
    public var points: [ProgressPoint]
    public var mean: ProgressTrend
    public var best: ProgressTrend
    public var missRate: ProgressTrend
    /// Per target, by target index.
    public var perTarget: [Target]

    /// The progress over `sessions` (any order; sessions without steps are left out; incomplete
    /// ones only with `includeIncomplete`).
    public static func of(_ sessions: [SessionResults], includeIncomplete: Bool = true) -> AthleteProgress {
        let ordered = sessions.filter { (includeIncomplete || $0.session.complete) && !$0.steps.isEmpty }
            .sorted { ($0.session.started, $0.session.id ?? 0) < ($1.session.started, $1.session.id ?? 0) }
        func point(_ session: TrainingSession, _ steps: [StepResult]) -> ProgressPoint {
            let summary = ReflexStatistics.summary(of: steps)
            return ProgressPoint(sessionID: session.id ?? 0, started: session.started, steps: steps.count,
                                 meanMilliseconds: summary.meanMilliseconds, bestMilliseconds: summary.bestMilliseconds,
                                 missRate: Double(summary.misses) / Double(max(1, steps.count)))
        }
        let points = ordered.map { point($0.session, $0.steps) }
        let targets = Set(ordered.flatMap { $0.steps.map(\.target) }).sorted()
        let perTarget = targets.map { target -> Target in
            let targetPoints = ordered.compactMap { results -> ProgressPoint? in
                let steps = results.steps.filter { $0.target == target }
                return steps.isEmpty ? nil : point(results.session, steps)
            }
            return Target(target: target, points: targetPoints, mean: .of(targetPoints.map(\.meanMilliseconds)),
                          best: .of(targetPoints.map(\.bestMilliseconds)), missRate: .of(targetPoints.map { $0.missRate }))
        }
        return AthleteProgress(points: points, mean: .of(points.map(\.meanMilliseconds)), best: .of(points.map(\.bestMilliseconds)),
                               missRate: .of(points.map { $0.missRate }), perTarget: perTarget)
    }
}
