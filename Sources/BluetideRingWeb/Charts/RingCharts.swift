import BluetideCharts
import BluetideRing
import Foundation

/// The ring's SVG charts: heart rate over a day, steps per day, sleep per night by stage, SpO2
/// per day. Drawn with the shared chart frame (``SVGChartFrame``), so they look like the coach's;
/// the same samples always give the same bytes.
public enum RingCharts {
    /// Colours of the sleep stages (deep darkest).
    static let stageColours: [(kind: String, name: String, colour: String)] = [
        (RingSampleKind.sleepDeep, "deep", "#1A3A8F"), (RingSampleKind.sleepLight, "light", "#5B8DEF"),
        (RingSampleKind.sleepREM, "REM", "#9B6BDF"), (RingSampleKind.sleepAwake, "awake", "#F2A541"),
    ]

    private static let n = SVGChartFrame.n

    /// Heart rate against the time of day (00:00-24:00 on the ring's clock), bpm.
    /// `points` are (minute of day, bpm).
    public static func heartRateDay(_ points: [(minute: Int, bpm: Double)], dayLabel: String, options: SVGChartOptions) -> String {
        var svg = SVGBuilder()
        SVGChartFrame.begin(&svg, options: options, title: "Heart rate, \(dayLabel)",
                            description: "\(points.count) heart-rate readings over the day, in beats per minute.")
        let p = SVGChartFrame.plot(for: options)
        let low = (points.map(\.bpm).min() ?? 50) - 5, high = (points.map(\.bpm).max() ?? 100) + 5
        let ticks = ChartAxis.valueTicks(from: max(0, low), to: high, count: 5, minimumSpan: 20)
        let bottom = ticks.first ?? 40, top = ticks.last ?? 120
        let y = { (v: Double) in p.bottom - (v - bottom) / max(top - bottom, 1) * p.height }
        let x = { (m: Double) in p.left + m / 1440 * p.width }
        SVGChartFrame.valueAxis(&svg, p, ticks: ticks, y: y, label: "bpm")
        hourAxis(&svg, p, x: x)
        if points.isEmpty {
            SVGChartFrame.noData(&svg, p, "No heart-rate readings this day")
        } else {
            let path = points.map { "\(n(x(Double($0.minute)))),\(n(y($0.bpm)))" }.joined(separator: " ")
            svg.empty("polyline", [("class", "hr-line"), ("points", path), ("fill", "none"), ("stroke", "#D7263D"), ("stroke-width", "2")])
            for point in points {
                svg.titled("circle", [("cx", n(x(Double(point.minute)))), ("cy", n(y(point.bpm))), ("r", "2.5"), ("fill", "#D7263D")],
                           title: "\(clock(point.minute)): \(Int(point.bpm)) bpm")
            }
        }
        svg.close("svg")
        return svg.document
    }

    /// One bar per label, stacked from segments (value, colour, series name), with a legend.
    public static func stackedBars(
        _ bars: [(label: String, segments: [(value: Double, colour: String, name: String)])], title: String, description: String,
        unit: String, legend: [(name: String, colour: String)], options: SVGChartOptions
    ) -> String {
        var svg = SVGBuilder()
        SVGChartFrame.begin(&svg, options: options, title: title, description: description)
        let p = SVGChartFrame.plot(for: options)
        let highest = bars.map { $0.segments.reduce(0) { $0 + $1.value } }.max() ?? 0
        let ticks = ChartAxis.valueTicks(upTo: highest, count: 5, fallback: 10)
        let top = max(ticks.last ?? 1, 1)
        let y = { (v: Double) in p.bottom - v / top * p.height }
        SVGChartFrame.valueAxis(&svg, p, ticks: ticks, y: y, label: unit)
        svg.empty("line", [("x1", n(p.left)), ("y1", n(p.bottom)), ("x2", n(p.right)), ("y2", n(p.bottom)), ("stroke", "#333333")])
        if bars.isEmpty || highest == 0 {
            SVGChartFrame.noData(&svg, p, "Nothing synced yet")
        } else {
            let slot = p.width / Double(bars.count)
            let width = min(slot * 0.7, 48)
            let labelEvery = max(1, bars.count / 10)
            for (i, bar) in bars.enumerated() {
                let cx = p.left + slot * (Double(i) + 0.5)
                var base = 0.0
                svg.open("g", [("class", "bar")])
                for segment in bar.segments where segment.value > 0 {
                    svg.titled("rect", [
                        ("x", n(cx - width / 2)), ("y", n(y(base + segment.value))), ("width", n(width)),
                        ("height", n(y(base) - y(base + segment.value))), ("fill", segment.colour),
                    ], title: "\(bar.label) \(segment.name): \(DecimalText.compact(segment.value, maxDigits: 1)) \(unit)")
                    base += segment.value
                }
                svg.close("g")
                if i % labelEvery == 0 {
                    svg.text("text", [("x", n(cx)), ("y", n(p.bottom + 16)), ("text-anchor", "middle"), ("font-size", "11")], String(bar.label.suffix(5)))
                }
            }
        }
        var lx = p.left
        for item in legend where legend.count > 1 {
            svg.empty("rect", [("x", n(lx)), ("y", n(p.bottom + 34)), ("width", "12"), ("height", "12"), ("fill", item.colour)])
            svg.text("text", [("x", n(lx + 16)), ("y", n(p.bottom + 44)), ("font-size", "12")], item.name)
            lx += 24 + Double(item.name.count) * 7.5
        }
        svg.close("svg")
        return svg.document
    }

    /// Daily values as points joined by a line, with a band between each day's low and high.
    public static func dailyRange(
        _ days: [(label: String, mean: Double, low: Double, high: Double)], title: String, description: String, unit: String,
        floor: Double, options: SVGChartOptions
    ) -> String {
        var svg = SVGBuilder()
        SVGChartFrame.begin(&svg, options: options, title: title, description: description)
        let p = SVGChartFrame.plot(for: options)
        let ticks = ChartAxis.valueTicks(from: min(floor, days.map(\.low).min() ?? floor), to: max(100, days.map(\.high).max() ?? 100), count: 5, minimumSpan: 5)
        let bottom = ticks.first ?? floor, top = ticks.last ?? 100
        let y = { (v: Double) in p.bottom - (v - bottom) / max(top - bottom, 1) * p.height }
        SVGChartFrame.valueAxis(&svg, p, ticks: ticks, y: y, label: unit)
        if days.isEmpty {
            SVGChartFrame.noData(&svg, p, "Nothing synced yet")
        } else {
            let slot = p.width / Double(days.count)
            let x = { (i: Int) in p.left + slot * (Double(i) + 0.5) }
            for (i, day) in days.enumerated() {
                svg.empty("line", [("x1", n(x(i))), ("y1", n(y(day.low))), ("x2", n(x(i))), ("y2", n(y(day.high))), ("stroke", "#9EC5E8"), ("stroke-width", "8")])
                svg.text("text", [("x", n(x(i))), ("y", n(p.bottom + 16)), ("text-anchor", "middle"), ("font-size", "11")], String(day.label.suffix(5)))
            }
            svg.empty("polyline", [("points", days.indices.map { "\(n(x($0))),\(n(y(days[$0].mean)))" }.joined(separator: " ")),
                                   ("fill", "none"), ("stroke", "#1F6FB2"), ("stroke-width", "2")])
            for (i, day) in days.enumerated() {
                svg.titled("circle", [("cx", n(x(i))), ("cy", n(y(day.mean))), ("r", "3.5"), ("fill", "#1F6FB2")],
                           title: "\(day.label): mean \(DecimalText.fixed(day.mean, 1)) \(unit) (\(Int(day.low))-\(Int(day.high)))")
            }
        }
        svg.close("svg")
        return svg.document
    }

    private static func hourAxis(_ svg: inout SVGBuilder, _ p: ChartPlot, x: (Double) -> Double) {
        svg.empty("line", [("x1", n(p.left)), ("y1", n(p.bottom)), ("x2", n(p.right)), ("y2", n(p.bottom)), ("stroke", "#333333")])
        for hour in stride(from: 0, through: 24, by: 3) {
            let hx = x(Double(hour * 60))
            svg.empty("line", [("x1", n(hx)), ("y1", n(p.bottom)), ("x2", n(hx)), ("y2", n(p.bottom + 5)), ("stroke", "#333333")])
            svg.text("text", [("x", n(hx)), ("y", n(p.bottom + 18)), ("text-anchor", "middle"), ("font-size", "11")], clock(hour * 60))
        }
    }

    /// `07:30`.
    static func clock(_ minute: Int) -> String { "\(RingCalendar.pad(Int64(minute / 60), 2)):\(RingCalendar.pad(Int64(minute % 60), 2))" }
}
