import BluetideCharts
import Foundation

/// Our own small SVG charts (no scripts, no external resources): reaction times per step of a
/// session, figures per target, and session means over time with their trend. Output is deterministic text.
public enum SVGChart {
    /// Most step positions a session chart draws (a program has at most `PunchSequence.maxSteps`).
    static let maxDrawnSteps = 4096

    // MARK: Reaction times per step

    /// Bars of reaction time per step (hits), coloured by target; misses drawn as crosses at the
    /// step's allowed time; a dashed line at the mean of hits; a legend of the targets present.
    public static func reactionTimes(of results: SessionResults, title: String? = nil, options: SVGChartOptions = .init(idPrefix: "reflex-chart")) -> String {
        let steps = results.steps
        let summary = ReflexStatistics.summary(of: steps)
        let title = title ?? "Reaction times, session \(results.session.id.map { "\($0)" } ?? "")"
            + " (\(ChartAxis.timeLabel(results.session.started, showsTime: false)))"
        let description = steps.isEmpty
            ? "No step results recorded."
            : "\(steps.count) steps, \(summary.hits) hits, \(summary.misses) misses"
                + (summary.meanMilliseconds.map { ", mean reaction \(DecimalText.fixed($0, 0)) ms" } ?? "")
                + (summary.bestMilliseconds.map { ", best \(DecimalText.fixed($0, 0)) ms" } ?? "") + "."

        var svg = SVGBuilder()
        let p = plot(for: options)
        begin(&svg, options: options, title: title, description: description)

        // Steps run 0..<stepCount; hand-made records with indices outside 0...4095 are not drawn.
        let maxIndex = steps.map(\.stepIndex).filter { (0..<Self.maxDrawnSteps).contains($0) }.max() ?? -1
        let stepCount = min(max(results.session.stepCount, maxIndex + 1), Self.maxDrawnSteps)
        let topValue = steps.map { Double($0.reactionMilliseconds) }.max() ?? 0
        let yTicks = ChartAxis.valueTicks(upTo: topValue)
        let yMax = yTicks.last ?? 1000
        func y(_ ms: Double) -> Double { p.bottom - min(max(ms, 0), yMax) / yMax * p.height }
        let band = p.width / Double(max(stepCount, 1))
        func x(_ index: Int) -> Double { p.left + (Double(index) + 0.5) * band }

        valueAxis(&svg, p, ticks: yTicks, y: y, label: "Reaction time (ms)")
        svg.open("g", [("class", "x-axis")])
        svg.empty("line", [("x1", n(p.left)), ("y1", n(p.bottom)), ("x2", n(p.right)), ("y2", n(p.bottom)), ("stroke", "#333333")])
        for index in ChartAxis.indexTicks(count: stepCount) {
            svg.empty("line", [("x1", n(x(index))), ("y1", n(p.bottom)), ("x2", n(x(index))), ("y2", n(p.bottom + 5)), ("stroke", "#333333")])
            svg.text("text", [("x", n(x(index))), ("y", n(p.bottom + 18)), ("text-anchor", "middle"), ("font-size", "11")], "\(index + 1)")
        }
        svg.text("text", [("x", n(p.left + p.width / 2)), ("y", n(p.bottom + 32)), ("text-anchor", "middle"), ("font-size", "12")], "Step")
        svg.close("g")

        if steps.isEmpty {
            noData(&svg, p, "No results")
        } else {
            svg.open("g", [("class", "steps")])
            let barWidth = max(1, band * 0.7)
            for step in steps where (0..<stepCount).contains(step.stepIndex) {
                let colour = TargetPalette.colour(of: step.target)
                let fill = colour?.fill ?? "#999999", stroke = colour?.stroke ?? "#333333"
                let colourName = colour?.name ?? "unknown"
                let ms = Double(step.reactionMilliseconds)
                let wrong = step.wrongTarget ? ", wrong target first" : ""
                if step.hit {
                    let top = y(ms)
                    svg.titled("rect", [
                        ("class", "hit target-\(step.target)"), ("x", n(x(step.stepIndex) - barWidth / 2)), ("y", n(top)),
                        ("width", n(barWidth)), ("height", n(max(0, p.bottom - top))), ("fill", fill), ("stroke", stroke),
                    ], title: "Step \(step.stepIndex + 1): target \(step.target) (\(colourName)), hit after \(step.reactionMilliseconds) ms\(wrong)")
                } else {
                    let cx = x(step.stepIndex), cy = y(ms), r = min(6, max(2, barWidth / 2))
                    svg.titled("path", [
                        ("class", "miss target-\(step.target)"),
                        ("d", "M\(n(cx - r)) \(n(cy - r))L\(n(cx + r)) \(n(cy + r))M\(n(cx - r)) \(n(cy + r))L\(n(cx + r)) \(n(cy - r))"),
                        ("stroke", stroke), ("stroke-width", "2"), ("fill", "none"),
                    ], title: "Step \(step.stepIndex + 1): target \(step.target) (\(colourName)), miss\(wrong)")
                }
            }
            svg.close("g")
            if let mean = summary.meanMilliseconds {
                svg.open("g", [("class", "mean")])
                svg.empty("line", [("x1", n(p.left)), ("y1", n(y(mean))), ("x2", n(p.right)), ("y2", n(y(mean))),
                                   ("stroke", "#333333"), ("stroke-dasharray", "6 4")])
                svg.text("text", [("x", n(p.right)), ("y", n(y(mean) - 4)), ("text-anchor", "end"), ("font-size", "11")],
                         "mean \(DecimalText.fixed(mean, 0)) ms")
                svg.close("g")
            }
        }

        // Legend: targets present, then the miss marker.
        svg.open("g", [("class", "legend")])
        var lx = p.left
        let ly = max(options.height, 180) - 10
        for target in Set(steps.map(\.target)).sorted() {
            let colour = TargetPalette.colour(of: target)
            svg.empty("rect", [("x", n(lx)), ("y", n(ly - 10)), ("width", "12"), ("height", "12"),
                               ("fill", colour?.fill ?? "#999999"), ("stroke", colour?.stroke ?? "#333333")])
            let label = "\(target) \(colour?.name ?? "")"
            svg.text("text", [("x", n(lx + 16)), ("y", n(ly)), ("font-size", "11")], label)
            lx += 24 + Double(label.count) * 7
        }
        if steps.contains(where: { !$0.hit }) {
            svg.empty("path", [("d", "M\(n(lx)) \(n(ly - 10))L\(n(lx + 10)) \(n(ly))M\(n(lx)) \(n(ly))L\(n(lx + 10)) \(n(ly - 10))"),
                               ("stroke", "#333333"), ("stroke-width", "2"), ("fill", "none")])
            svg.text("text", [("x", n(lx + 16)), ("y", n(ly)), ("font-size", "11")], "miss")
        }
        svg.close("g")
        svg.close("svg")
        return svg.document
    }

    // MARK: Session means over time

    /// Session means (ms) against start time as a line with points, and the least-squares trend
    /// (per week) as a dashed line, labelled with its slope.
    public static func meansOverTime(_ trend: AthleteTrend, title: String = "Mean reaction time per session",
                                     options: SVGChartOptions = .init(idPrefix: "reflex-chart")) -> String {
        let points = trend.points
        let description: String
        if points.isEmpty {
            description = "No sessions with hits."
        } else {
            let first = points[0], last = points[points.count - 1]
            description = "\(points.count) sessions from \(ChartAxis.timeLabel(first.started, showsTime: false)) to "
                + "\(ChartAxis.timeLabel(last.started, showsTime: false)); first mean \(DecimalText.fixed(first.meanMilliseconds, 0)) ms, "
                + "last mean \(DecimalText.fixed(last.meanMilliseconds, 0)) ms"
                + (trend.text.map { ", trend \($0)" } ?? "") + "."
        }

        var svg = SVGBuilder()
        let p = plot(for: options)
        begin(&svg, options: options, title: title, description: description)

        var start = points.first?.started ?? Date(timeIntervalSince1970: 0)
        var end = points.last?.started ?? Date(timeIntervalSince1970: 86_400)
        if end.timeIntervalSince(start) <= 0 {
            start = start.addingTimeInterval(-86_400)
            end = end.addingTimeInterval(86_400)
        }
        let span = end.timeIntervalSince(start)
        // Leave 4 % of the width free on both sides so end points are not on the axis.
        let inset = p.width * 0.04
        func x(_ date: Date) -> Double { p.left + inset + date.timeIntervalSince(start) / span * (p.width - 2 * inset) }
        let yTicks = ChartAxis.valueTicks(upTo: points.map(\.meanMilliseconds).max() ?? 0)
        let yMax = yTicks.last ?? 1000
        func y(_ ms: Double) -> Double { p.bottom - min(max(ms, 0), yMax) / yMax * p.height }

        valueAxis(&svg, p, ticks: yTicks, y: y, label: "Mean reaction time (ms)")
        svg.open("g", [("class", "x-axis")])
        svg.empty("line", [("x1", n(p.left)), ("y1", n(p.bottom)), ("x2", n(p.right)), ("y2", n(p.bottom)), ("stroke", "#333333")])
        let (ticks, showsTime) = ChartAxis.timeTicks(from: start, to: end)
        for tick in ticks {
            svg.empty("line", [("x1", n(x(tick))), ("y1", n(p.bottom)), ("x2", n(x(tick))), ("y2", n(p.bottom + 5)), ("stroke", "#333333")])
            svg.text("text", [("x", n(x(tick))), ("y", n(p.bottom + 18)), ("text-anchor", "middle"), ("font-size", "11")],
                     ChartAxis.timeLabel(tick, showsTime: showsTime))
        }
        svg.text("text", [("x", n(p.left + p.width / 2)), ("y", n(p.bottom + 36)), ("text-anchor", "middle"), ("font-size", "12")],
                 "Session start (UTC)")
        svg.close("g")

        if points.isEmpty {
            noData(&svg, p, "No sessions with hits")
        } else {
            if points.count > 1 {
                let coordinates = points.map { "\(n(x($0.started))),\(n(y($0.meanMilliseconds)))" }.joined(separator: " ")
                svg.empty("polyline", [("class", "means"), ("points", coordinates), ("fill", "none"), ("stroke", "#1F6FD1"), ("stroke-width", "2")])
            }
            svg.open("g", [("class", "sessions")])
            for point in points {
                svg.titled("circle", [("cx", n(x(point.started))), ("cy", n(y(point.meanMilliseconds))), ("r", "4"),
                                      ("fill", "#1F6FD1"), ("stroke", "#0F3F7F")],
                           title: "Session \(point.sessionID), \(UTCCalendar.iso8601(point.started)): mean \(DecimalText.fixed(point.meanMilliseconds, 1)) ms, "
                               + "hit rate \(DecimalText.fixed(point.hitRate * 100, 0)) %")
            }
            svg.close("g")
            if let fit = trend.perWeek, let first = points.first, let last = points.last {
                let origin = first.started
                func weeks(_ d: Date) -> Double { d.timeIntervalSince(origin) / ReflexStatistics.secondsPerWeek }
                svg.open("g", [("class", "trend")])
                svg.empty("line", [("x1", n(x(first.started))), ("y1", n(y(fit.value(at: weeks(first.started))))),
                                   ("x2", n(x(last.started))), ("y2", n(y(fit.value(at: weeks(last.started))))),
                                   ("stroke", "#D7263D"), ("stroke-width", "1.5"), ("stroke-dasharray", "6 4")])
                svg.text("text", [("x", n(p.right)), ("y", n(p.top - 6)), ("text-anchor", "end"), ("font-size", "11")],
                         trend.shownMillisecondsPerWeek != nil
                             ? "trend \(DecimalText.fixed(fit.slope, 1)) ms/week"
                             : "trend " + (trend.millisecondsPerSession.map { AthleteTrend.words($0, per: "session") } ?? ""))
                svg.close("g")
            }
        }
        svg.close("svg")
        return svg.document
    }

    // MARK: Weight

    /// Body mass over time: one point per weigh-in (kg), joined in date order, on an axis fitted
    /// to the weights (not from zero, so a change of a kilogram shows).
    public static func weightOverTime(_ entries: [WeightEntry], title: String = "Weight",
                                      options: SVGChartOptions = .init(idPrefix: "reflex-chart")) -> String {
        let points = entries.sorted { $0.date < $1.date }
        let description: String
        if let first = points.first, let last = points.last {
            description = "\(points.count) weigh-ins from \(first.date.iso) to \(last.date.iso); first "
                + "\(DecimalText.fixed(first.kilograms, 1)) kg, last \(DecimalText.fixed(last.kilograms, 1)) kg."
        } else {
            description = "No weigh-ins."
        }

        var svg = SVGBuilder()
        let p = plot(for: options)
        begin(&svg, options: options, title: title, description: description)

        var start = points.first?.date.startOfDayUTC ?? Date(timeIntervalSince1970: 0)
        var end = points.last?.date.startOfDayUTC ?? Date(timeIntervalSince1970: 86_400)
        if end.timeIntervalSince(start) <= 0 {
            start = start.addingTimeInterval(-86_400)
            end = end.addingTimeInterval(86_400)
        }
        let span = end.timeIntervalSince(start)
        let inset = p.width * 0.04
        func x(_ date: Date) -> Double { p.left + inset + date.timeIntervalSince(start) / span * (p.width - 2 * inset) }
        let kilograms = points.map(\.kilograms)
        let yTicks = kilograms.isEmpty
            ? ChartAxis.valueTicks(from: 50, to: 90)
            : ChartAxis.valueTicks(from: kilograms.min()!, to: kilograms.max()!, count: 4, minimumSpan: 2)
        let yMin = yTicks.first ?? 0, yMax = yTicks.last ?? 1
        func y(_ kg: Double) -> Double { p.bottom - (min(max(kg, yMin), yMax) - yMin) / max(yMax - yMin, 1e-9) * p.height }

        valueAxis(&svg, p, ticks: yTicks, y: y, label: "Weight (kg)")
        svg.open("g", [("class", "x-axis")])
        svg.empty("line", [("x1", n(p.left)), ("y1", n(p.bottom)), ("x2", n(p.right)), ("y2", n(p.bottom)), ("stroke", "#333333")])
        let (ticks, _) = ChartAxis.timeTicks(from: start, to: end)
        for tick in ticks {
            svg.empty("line", [("x1", n(x(tick))), ("y1", n(p.bottom)), ("x2", n(x(tick))), ("y2", n(p.bottom + 5)), ("stroke", "#333333")])
            svg.text("text", [("x", n(x(tick))), ("y", n(p.bottom + 18)), ("text-anchor", "middle"), ("font-size", "11")],
                     ChartAxis.timeLabel(tick, showsTime: false))
        }
        svg.text("text", [("x", n(p.left + p.width / 2)), ("y", n(p.bottom + 36)), ("text-anchor", "middle"), ("font-size", "12")],
                 "Date (UTC)")
        svg.close("g")

        if points.isEmpty {
            noData(&svg, p, "No weigh-ins")
        } else {
            if points.count > 1 {
                let coordinates = points.map { "\(n(x($0.date.startOfDayUTC))),\(n(y($0.kilograms)))" }.joined(separator: " ")
                svg.empty("polyline", [("class", "weights"), ("points", coordinates), ("fill", "none"), ("stroke", "#2E9E49"), ("stroke-width", "2")])
            }
            svg.open("g", [("class", "weigh-ins")])
            for point in points {
                svg.titled("circle", [("cx", n(x(point.date.startOfDayUTC))), ("cy", n(y(point.kilograms))), ("r", "4"),
                                      ("fill", "#2E9E49"), ("stroke", "#1B6B30")],
                           title: "\(point.date.iso): \(DecimalText.fixed(point.kilograms, 1)) kg")
            }
            svg.close("g")
        }
        svg.close("svg")
        return svg.document
    }

    // MARK: Per target

    /// One bar per target: mean reaction time of hits, coloured like the LED, a whisker from best
    /// to worst hit, and the hit rate above. Targets without hits show only their hit rate.
    public static func perTarget(_ targets: [TargetSummary], title: String = "Reaction time per target",
                                 options: SVGChartOptions = .init(idPrefix: "reflex-chart")) -> String {
        let shown = targets.filter { $0.summary.count > 0 }.sorted { $0.target < $1.target }
        let description = shown.isEmpty
            ? "No step results recorded."
            : shown.map { t in
                let colour = TargetPalette.colour(of: t.target)?.name ?? "unknown"
                let mean = t.summary.meanMilliseconds.map { "mean \(DecimalText.fixed($0, 0)) ms" } ?? "no hits"
                let rate = t.summary.hitRate.map { "\(DecimalText.fixed($0 * 100, 0)) % hits" } ?? ""
                return "target \(t.target) (\(colour)): \(mean), \(rate)"
            }.joined(separator: "; ") + "."

        var svg = SVGBuilder()
        let p = plot(for: options)
        begin(&svg, options: options, title: title, description: description)
        // Headroom above the slowest hit, so the hit-rate labels above the whiskers stay clear of them.
        let top = (shown.compactMap { $0.summary.worstMilliseconds }.max() ?? 0) * 1.12
        let yTicks = ChartAxis.valueTicks(upTo: top)
        let yMax = yTicks.last ?? 1000
        func y(_ ms: Double) -> Double { p.bottom - min(max(ms, 0), yMax) / yMax * p.height }
        let band = p.width / Double(max(shown.count, 1))
        func x(_ slot: Int) -> Double { p.left + (Double(slot) + 0.5) * band }

        valueAxis(&svg, p, ticks: yTicks, y: y, label: "Reaction time (ms)")
        svg.open("g", [("class", "x-axis")])
        svg.empty("line", [("x1", n(p.left)), ("y1", n(p.bottom)), ("x2", n(p.right)), ("y2", n(p.bottom)), ("stroke", "#333333")])
        for (slot, t) in shown.enumerated() {
            svg.text("text", [("x", n(x(slot))), ("y", n(p.bottom + 18)), ("text-anchor", "middle"), ("font-size", "11")],
                     "\(t.target) \(TargetPalette.colour(of: t.target)?.name ?? "")")
        }
        svg.text("text", [("x", n(p.left + p.width / 2)), ("y", n(p.bottom + 32)), ("text-anchor", "middle"), ("font-size", "12")], "Target")
        svg.close("g")

        if shown.isEmpty {
            noData(&svg, p, "No results")
        } else {
            svg.open("g", [("class", "targets")])
            let barWidth = max(1, min(band * 0.6, 80))
            for (slot, t) in shown.enumerated() {
                let colour = TargetPalette.colour(of: t.target)
                let s = t.summary
                let rate = s.hitRate.map { "\(DecimalText.fixed($0 * 100, 0)) %" } ?? ""
                var labelY = p.bottom - 6
                if let mean = s.meanMilliseconds {
                    svg.titled("rect", [
                        ("class", "mean target-\(t.target)"), ("x", n(x(slot) - barWidth / 2)), ("y", n(y(mean))),
                        ("width", n(barWidth)), ("height", n(max(0, p.bottom - y(mean)))),
                        ("fill", colour?.fill ?? "#999999"), ("stroke", colour?.stroke ?? "#333333"),
                    ], title: "Target \(t.target): mean \(DecimalText.fixed(mean, 1)) ms over \(s.hits) hits of \(s.count) steps")
                    labelY = y(mean) - 6
                    if let best = s.bestMilliseconds, let worst = s.worstMilliseconds {
                        svg.empty("path", [
                            ("class", "range"),
                            ("d", "M\(n(x(slot))) \(n(y(best)))L\(n(x(slot))) \(n(y(worst)))M\(n(x(slot) - 6)) \(n(y(best)))"
                                + "L\(n(x(slot) + 6)) \(n(y(best)))M\(n(x(slot) - 6)) \(n(y(worst)))L\(n(x(slot) + 6)) \(n(y(worst)))"),
                            ("stroke", "#333333"), ("fill", "none"),
                        ])
                        labelY = min(labelY, y(worst) - 6)
                    }
                }
                svg.text("text", [("class", "hit-rate"), ("x", n(x(slot))), ("y", n(max(p.top + 10, labelY))), ("text-anchor", "middle"),
                                  ("font-size", "11")], rate)
            }
            svg.close("g")
        }
        svg.close("svg")
        return svg.document
    }

    // MARK: Shared parts

    static func n(_ value: Double) -> String { SVGChartFrame.n(value) }
    private static func plot(for options: SVGChartOptions) -> ChartPlot { SVGChartFrame.plot(for: options) }

    private static func begin(_ svg: inout SVGBuilder, options: SVGChartOptions, title: String, description: String) {
        SVGChartFrame.begin(&svg, options: options, title: title, description: description)
    }

    private static func valueAxis(_ svg: inout SVGBuilder, _ p: ChartPlot, ticks: [Double], y: (Double) -> Double, label: String) {
        SVGChartFrame.valueAxis(&svg, p, ticks: ticks, y: y, label: label)
    }

    private static func noData(_ svg: inout SVGBuilder, _ p: ChartPlot, _ message: String) {
        SVGChartFrame.noData(&svg, p, message)
    }
}
