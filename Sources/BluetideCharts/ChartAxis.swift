import Foundation

/// Tick placement for chart axes.
public enum ChartAxis {
    /// Ticks from 0 to a "nice" maximum ≥ `maxValue` (steps of 1, 2 or 5 × 10ⁿ), about `count`
    /// intervals. A non-positive or non-finite maximum gives 0...`fallback`.
    public static func valueTicks(upTo maxValue: Double, count: Int = 5, fallback: Double = 1000) -> [Double] {
        let top = maxValue.isFinite && maxValue > 0 ? maxValue : fallback
        let step = niceStep(top / Double(max(count, 1)))
        let intervals = max(1, Int((top / step).rounded(.up)))
        return (0...intervals).map { Double($0) * step }
    }

    /// Ticks over a "nice" range around `low...high` (steps of 1, 2 or 5 × 10ⁿ, about `count`
    /// intervals), for values far from zero such as body mass. A range narrower than `minimumSpan`
    /// is widened around its middle so a steady series is not drawn as noise.
    public static func valueTicks(from low: Double, to high: Double, count: Int = 5, minimumSpan: Double = 1) -> [Double] {
        guard low.isFinite, high.isFinite else { return valueTicks(upTo: 0) }
        var lower = min(low, high), upper = max(low, high)
        if upper - lower < minimumSpan {
            let middle = (lower + upper) / 2
            lower = middle - minimumSpan / 2
            upper = middle + minimumSpan / 2
        }
        let step = niceStep((upper - lower) / Double(max(count, 1)))
        let first = (lower / step).rounded(.down)
        let last = (upper / step).rounded(.up)
        return stride(from: first, through: last, by: 1).map { $0 * step }
    }

    /// The smallest of 1, 2, 5 × 10ⁿ that is ≥ `raw`.
    public static func niceStep(_ raw: Double) -> Double {
        guard raw.isFinite, raw > 0 else { return 1 }
        let magnitude = Foundation.pow(10, (Foundation.log10(raw)).rounded(.down))
        for factor in [1.0, 2, 5, 10] where factor * magnitude >= raw * (1 - 1e-12) { return factor * magnitude }
        return 10 * magnitude
    }

    /// Integer ticks over `0..<count` (step indices): every index when few, else a nice step.
    public static func indexTicks(count: Int, maxTicks: Int = 16) -> [Int] {
        guard count > 0 else { return [] }
        let step = count <= maxTicks ? 1 : max(1, Int(niceStep(Double(count) / Double(maxTicks))))
        return Array(stride(from: 0, to: count, by: step))
    }

    /// Candidate spacings for time axes, seconds: hours, days, weeks, months (28 d), quarters, years.
    public static let timeSteps: [Double] = [3600, 7200, 10_800, 21_600, 43_200, 86_400, 172_800, 604_800, 1_209_600,
                                      2_419_200, 7_862_400, 15_724_800, 31_449_600]

    /// Ticks at multiples of a spacing (UTC, from the epoch) inside `start...end`, about `count`
    /// of them, and whether labels need the time of day.
    public static func timeTicks(from start: Date, to end: Date, count: Int = 6) -> (ticks: [Date], showsTime: Bool) {
        let s = start.timeIntervalSince1970, e = end.timeIntervalSince1970
        guard s.isFinite, e.isFinite, e > s else { return ([], false) }
        let raw = (e - s) / Double(max(count, 1))
        let step = timeSteps.first { $0 >= raw } ?? timeSteps[timeSteps.count - 1] * ((raw / timeSteps[timeSteps.count - 1]).rounded(.up))
        var t = (s / step).rounded(.up) * step
        var ticks: [Date] = []
        while t <= e && ticks.count < 100 {
            ticks.append(Date(timeIntervalSince1970: t))
            t += step
        }
        return (ticks, step < 86_400)
    }

    /// `2026-11-21`, or `11-21 13:00` when the time of day matters.
    public static func timeLabel(_ date: Date, showsTime: Bool) -> String {
        let c = UTCCalendar.components(of: date)
        if showsTime { return "\(UTCCalendar.twoDigits(c.month))-\(UTCCalendar.twoDigits(c.day)) \(UTCCalendar.twoDigits(c.hour)):\(UTCCalendar.twoDigits(c.minute))" }
        return "\(UTCCalendar.fourDigits(c.year))-\(UTCCalendar.twoDigits(c.month))-\(UTCCalendar.twoDigits(c.day))"
    }
}
