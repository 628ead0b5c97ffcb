import BluetideCharts
import Foundation

extension SVGChart {
    // MARK: Progress

    /// An athlete's progress (``AthleteProgress``): mean (solid) and best (dashed) reaction time
    /// per session, and each target's mean as a thin line in its LED colour; x is the session
    /// number, oldest first.
    public static func progress(_ progress: AthleteProgress, title: String = "Progress per session",
                                options: SVGChartOptions = .init(idPrefix: "reflex-progress")) -> String {
        let points = progress.points
        let description = points.isEmpty ? "No sessions."
            : "\(points.count) session\(points.count == 1 ? "" : "s"); mean from \(text(progress.mean.first)) to \(text(progress.mean.last)) ms, best from "
                + "\(text(progress.best.first)) to \(text(progress.best.last)) ms, miss rate from "
                + "\(percent(progress.missRate.first)) to \(percent(progress.missRate.last))."
        var svg = SVGBuilder()
        let p = SVGChartFrame.plot(for: options)
        SVGChartFrame.begin(&svg, options: options, title: title, description: description)
        let all = points.compactMap(\.meanMilliseconds) + progress.perTarget.flatMap { $0.points.compactMap(\.meanMilliseconds) }
        let yTicks = ChartAxis.valueTicks(upTo: all.max() ?? 0)
        let yMax = yTicks.last ?? 1000
        let count = max(points.count, 1)
        let inset = p.width * 0.04
        func x(_ index: Int) -> Double {
            count == 1 ? p.left + p.width / 2 : p.left + inset + Double(index) / Double(count - 1) * (p.width - 2 * inset)
        }
        func y(_ ms: Double) -> Double { p.bottom - min(max(ms, 0), yMax) / yMax * p.height }
        SVGChartFrame.valueAxis(&svg, p, ticks: yTicks, y: y, label: "Reaction time (ms)")
        svg.open("g", [("class", "x-axis")])
        svg.empty("line", [("x1", n(p.left)), ("y1", n(p.bottom)), ("x2", n(p.right)), ("y2", n(p.bottom)), ("stroke", "#333333")])
        for index in ChartAxis.indexTicks(count: points.count) {
            svg.text("text", [("x", n(x(index))), ("y", n(p.bottom + 18)), ("text-anchor", "middle"), ("font-size", "11")], "\(index + 1)")
        }
        svg.text("text", [("x", n(p.left + p.width / 2)), ("y", n(p.bottom + 36)), ("text-anchor", "middle"), ("font-size", "12")], "Session")
        svg.close("g")
        guard !points.isEmpty else {
            SVGChartFrame.noData(&svg, p, "No sessions")
            svg.close("svg")
            return svg.document
        }
        let index = Dictionary(points.enumerated().map { ($0.element.sessionID, $0.offset) }, uniquingKeysWith: { a, _ in a })
        func line(_ values: [(Int, Double)], _ attributes: [(String, String)]) {
            guard values.count > 1 else { return }
            svg.empty("polyline", [("points", values.map { "\(n(x($0.0))),\(n(y($0.1)))" }.joined(separator: " ")), ("fill", "none")] + attributes)
        }
        svg.open("g", [("class", "targets")])
        for target in progress.perTarget {
            let colour = TargetPalette.colour(of: target.target)
            line(target.points.compactMap { point in point.meanMilliseconds.flatMap { mean in index[point.sessionID].map { ($0, mean) } } },
                 [("class", "target-\(target.target)"), ("stroke", colour?.stroke ?? "#888888"), ("stroke-width", "1"), ("opacity", "0.7")])
        }
        svg.close("g")
        line(points.enumerated().compactMap { i, point in point.bestMilliseconds.map { (i, $0) } },
             [("class", "best"), ("stroke", "#2FA84F"), ("stroke-width", "2"), ("stroke-dasharray", "6 4")])
        line(points.enumerated().compactMap { i, point in point.meanMilliseconds.map { (i, $0) } },
             [("class", "mean"), ("stroke", "#1F6FD1"), ("stroke-width", "2.5")])
        svg.open("g", [("class", "sessions")])
        for (i, point) in points.enumerated() {
            guard let mean = point.meanMilliseconds else { continue }
            svg.titled("circle", [("cx", n(x(i))), ("cy", n(y(mean))), ("r", "4"), ("fill", "#1F6FD1"), ("stroke", "#0F3F7F")],
                       title: "Session \(point.sessionID), \(UTCCalendar.iso8601(point.started)): mean \(DecimalText.fixed(mean, 0)) ms, best "
                           + "\(text(point.bestMilliseconds)) ms, misses \(percent(point.missRate))")
        }
        svg.close("g")
        svg.text("text", [("x", n(p.right)), ("y", n(p.top - 6)), ("text-anchor", "end"), ("font-size", "11")],
                 "mean (solid), best (dashed), per target (thin)")
        svg.close("svg")
        return svg.document
    }

    // MARK: Reaction time against heart rate

    /// Each hit's reaction time (ms) against the athlete's heart rate then (bpm), one point per
    /// step in its target's colour, with the least-squares line; steps without a heart rate are
    /// left out.
    public static func reactionAgainstHeartRate(_ steps: [StepResult], title: String = "Reaction time against heart rate",
                                                options: SVGChartOptions = .init(idPrefix: "reflex-heart-rate")) -> String {
        // Only heart rates a heart can have (the store keeps no others; records from elsewhere may).
        let pairs = steps.filter(\.hit).compactMap { step -> (Double, Double, StepResult)? in
            guard let bpm = step.heartRateBpm, (1...300).contains(bpm) else { return nil }
            return (Double(bpm), Double(step.reactionMilliseconds), step)
        }
        let fit = ReflexStatistics.leastSquares(x: pairs.map(\.0), y: pairs.map(\.1))
        let description = pairs.isEmpty ? "No hits with a heart rate."
            : "\(pairs.count) hits with a heart rate from \(Int(pairs.map(\.0).min() ?? 0)) to \(Int(pairs.map(\.0).max() ?? 0)) bpm"
                + (fit.map { "; \(DecimalText.fixed($0.slope, 1)) ms per bpm" } ?? "") + "."
        var svg = SVGBuilder()
        let p = SVGChartFrame.plot(for: options)
        SVGChartFrame.begin(&svg, options: options, title: title, description: description)
        let yTicks = ChartAxis.valueTicks(upTo: pairs.map(\.1).max() ?? 0)
        let yMax = yTicks.last ?? 1000
        let xTicks = ChartAxis.valueTicks(from: pairs.map(\.0).min() ?? 60, to: pairs.map(\.0).max() ?? 180, minimumSpan: 20)
        let xMin = xTicks.first ?? 60, xMax = max(xTicks.last ?? 180, xMin + 1)
        func x(_ bpm: Double) -> Double { p.left + (bpm - xMin) / (xMax - xMin) * p.width }
        func y(_ ms: Double) -> Double { p.bottom - min(max(ms, 0), yMax) / yMax * p.height }
        SVGChartFrame.valueAxis(&svg, p, ticks: yTicks, y: y, label: "Reaction time (ms)")
        svg.open("g", [("class", "x-axis")])
        svg.empty("line", [("x1", n(p.left)), ("y1", n(p.bottom)), ("x2", n(p.right)), ("y2", n(p.bottom)), ("stroke", "#333333")])
        for tick in xTicks {
            svg.text("text", [("x", n(x(tick))), ("y", n(p.bottom + 18)), ("text-anchor", "middle"), ("font-size", "11")], DecimalText.fixed(tick, 0))
        }
        svg.text("text", [("x", n(p.left + p.width / 2)), ("y", n(p.bottom + 36)), ("text-anchor", "middle"), ("font-size", "12")], "Heart rate (bpm)")
        svg.close("g")
        if pairs.isEmpty {
            SVGChartFrame.noData(&svg, p, "No hits with a heart rate")
        } else {
            svg.open("g", [("class", "hits")])
            for (bpm, ms, step) in pairs {
                let colour = TargetPalette.colour(of: step.target)
                svg.titled("circle", [("cx", n(x(bpm))), ("cy", n(y(ms))), ("r", "4"), ("fill", colour?.fill ?? "#888888"), ("stroke", colour?.stroke ?? "#333333")],
                           title: "Step \(step.stepIndex &+ 1), target \(step.target): \(DecimalText.fixed(ms, 0)) ms at \(Int(bpm)) bpm")
            }
            svg.close("g")
            if let fit {
                svg.empty("line", [("class", "fit"), ("x1", n(x(xMin))), ("y1", n(y(fit.value(at: xMin)))), ("x2", n(x(xMax))),
                                   ("y2", n(y(fit.value(at: xMax)))), ("stroke", "#D7263D"), ("stroke-width", "1.5"), ("stroke-dasharray", "6 4")])
            }
        }
        svg.close("svg")
        return svg.document
    }

    private static func text(_ value: Double?) -> String { value.map { DecimalText.fixed($0, 0) } ?? "-" }
    private static func percent(_ value: Double?) -> String { value.map { DecimalText.fixed($0 * 100, 0) + " %" } ?? "-" }
}
