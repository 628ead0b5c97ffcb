import BluetideCharts

/// Fatigue within one session: how reaction times of hits drift from the start to the end.
///
/// The hits are taken in step order; the mean of the first third is compared with the mean of
/// the last third, and a least-squares line gives the drift per step. Positive values mean the
/// athlete got slower. Needs at least ``minimumHits`` hits.
public struct Fatigue: Hashable, Sendable, Codable {
    /// Fewest hits for a fatigue figure (three per third).
    public static let minimumHits = 9
    /// Drift, relative to the first third, from which the session counts as showing fatigue (10 %).
    public static let threshold = 0.10

    /// Mean of the first third of the hits, ms.
    public var firstThirdMilliseconds: Double
    /// Mean of the last third of the hits, ms.
    public var lastThirdMilliseconds: Double
    /// Slope of reaction time against step number, ms per step (nil when undefined).
    public var millisecondsPerStep: Double?

    /// Last third minus first third, ms (positive: slower at the end).
    public var driftMilliseconds: Double { lastThirdMilliseconds - firstThirdMilliseconds }

    /// Drift relative to the first third (0.12 is 12 % slower at the end).
    public var driftRatio: Double { firstThirdMilliseconds > 0 ? driftMilliseconds / firstThirdMilliseconds : 0 }

    /// True when the last third is at least ``threshold`` slower than the first.
    public var showsFatigue: Bool { driftRatio >= Self.threshold }

    /// In words: `slower by 42 ms (+18 %) from the first to the last third`.
    public var text: String {
        // Text, not Int: figures from stored records of any size never trap.
        let percent = DecimalText.fixed(driftRatio * 100, 0)
        let ms = DecimalText.fixed(abs(driftMilliseconds), 0)
        if ms == "0" { return "no drift from the first to the last third" }
        return "\(driftMilliseconds > 0 ? "slower" : "faster") by \(ms) ms (\(driftRatio >= 0 ? "+" : "")\(percent) %) from the first to the last third"
    }

    /// The figure for `steps` (any order; misses are ignored), nil with fewer than ``minimumHits`` hits.
    public static func of(_ steps: [StepResult]) -> Fatigue? {
        let hits = steps.filter(\.hit).sorted { $0.stepIndex < $1.stepIndex }
        guard hits.count >= minimumHits else { return nil }
        let third = hits.count / 3
        func mean(_ part: ArraySlice<StepResult>) -> Double {
            // In Double: stored values come from anywhere and an Int64 sum could overflow.
            part.reduce(0.0) { $0 + Double($1.reactionMilliseconds) } / Double(part.count)
        }
        let fit = ReflexStatistics.leastSquares(x: hits.map { Double($0.stepIndex) }, y: hits.map { Double($0.reactionMilliseconds) })
        return Fatigue(firstThirdMilliseconds: mean(hits.prefix(third)), lastThirdMilliseconds: mean(hits.suffix(third)),
                       millisecondsPerStep: fit?.slope)
    }
}
