import BluetideCharts
import BluetideRing
import Foundation

/// The pages of `ring serve`, rendered on the server from the synced samples: one overview with
/// heart rate over a day, steps per day, sleep per night and SpO2 per day. Days are the ring's
/// (local) days of ``calendar``. Plain HTML and inline SVG that scale to a phone's width.
public struct RingDashboard: Sendable {
    /// Where the samples are.
    public let store: RingStore
    /// How instants map to days.
    public let calendar: RingCalendar

    public init(store: RingStore, calendar: RingCalendar = RingCalendar()) {
        self.store = store
        self.calendar = calendar
    }

    /// Why a page could not be made.
    public struct PageError: Error, Sendable, CustomStringConvertible {
        public let status: Int
        public let description: String
    }

    /// What the overview shows, computed from the samples.
    public struct Overview: Sendable {
        public var sampleCount = 0
        public var days: [String] = []
        public var heartRateDay: String?
        public var heartRate: [(minute: Int, bpm: Double)] = []
        public var steps: [(label: String, steps: Double)] = []
        public var sleep: [(label: String, minutesByKind: [String: Double])] = []
        public var spo2: [(label: String, mean: Double, low: Double, high: Double)] = []
    }

    /// The numbers behind the overview; `day` (YYYY-MM-DD) picks the heart-rate day (default: the latest).
    public func overview(day: String?) throws -> Overview {
        let samples = try store.samples()
        var o = Overview()
        o.sampleCount = samples.count
        func dayOf(_ date: Date) -> Int { calendar.day(at: date) }
        let hr = samples.filter { $0.kind == RingSampleKind.heartRate }
        let hrDays = Set(hr.map { dayOf($0.time) }).sorted()
        o.days = hrDays.map(RingCalendar.label(day:))
        if let day {
            guard let wanted = RingCalendar.day(label: day) else {
                throw PageError(status: 400, description: "day \(day): expected a date YYYY-MM-DD")
            }
            o.heartRateDay = day
            o.heartRate = points(hr, day: wanted)
        } else if let latest = hrDays.last {
            o.heartRateDay = RingCalendar.label(day: latest)
            o.heartRate = points(hr, day: latest)
        }
        var steps: [Int: Double] = [:]
        for s in samples where s.kind == RingSampleKind.steps { steps[dayOf(s.time), default: 0] += s.value }
        o.steps = steps.keys.sorted().suffix(14).map { (RingCalendar.label(day: $0), steps[$0] ?? 0) }
        var nights: [Int: [String: Double]] = [:]
        for s in samples where s.kind.hasPrefix("sleep_") {
            nights[dayOf(s.time.addingTimeInterval(12 * 3600)), default: [:]][s.kind, default: 0] += s.value
        }
        o.sleep = nights.keys.sorted().suffix(14).map { (RingCalendar.label(day: $0), nights[$0] ?? [:]) }
        var spo2: [Int: [Double]] = [:]
        for s in samples where s.kind == RingSampleKind.spo2 { spo2[dayOf(s.time), default: []].append(s.value) }
        o.spo2 = spo2.keys.sorted().suffix(14).compactMap { d in
            guard let values = spo2[d], let low = values.min(), let high = values.max() else { return nil }
            return (RingCalendar.label(day: d), values.reduce(0, +) / Double(values.count), low, high)
        }
        return o
    }

    private func points(_ hr: [RingSample], day: Int) -> [(minute: Int, bpm: Double)] {
        hr.filter { calendar.day(at: $0.time) == day }.map { s in
            (Int((calendar.ringSeconds(at: s.time) - Int64(day) * 86_400) / 60), s.value)
        }
    }

    /// The overview page.
    public func page(day: String?) throws -> String {
        let o = try overview(day: day)
        let chart = SVGChartOptions(width: 720, height: 340)
        var body = "<h1>Ring history</h1>\n"
        if o.sampleCount == 0 {
            body += "<p class=\"empty\">No samples yet: run <code>bluetide ring sync</code>, then reload.</p>\n"
        } else {
            body += "<p>\(o.sampleCount) samples over \(o.days.count) days (\(escape(calendar.timeZone.identifier)) time).</p>\n"
        }
        // Heart rate over one day, with the previous and next days that have readings.
        body += "<section id=\"heart-rate\"><h2>Heart rate</h2>\n"
        if let current = o.heartRateDay {
            let index = o.days.firstIndex(of: current)
            var nav: [String] = []
            if let index, index > 0 { nav.append("<a href=\"/?day=\(o.days[index - 1])\">&larr; \(o.days[index - 1])</a>") }
            if let index, index + 1 < o.days.count { nav.append("<a href=\"/?day=\(o.days[index + 1])\">\(o.days[index + 1]) &rarr;</a>") }
            if !nav.isEmpty { body += "<nav>\(nav.joined(separator: " "))</nav>\n" }
        }
        body += RingCharts.heartRateDay(o.heartRate, dayLabel: o.heartRateDay ?? "no data", options: opt(chart, "hr")) + "</section>\n"
        body += "<section id=\"steps\"><h2>Steps per day</h2>\n"
        body += RingCharts.stackedBars(
            o.steps.map { (label: $0.label, segments: [(value: $0.steps, colour: "#2A9D8F", name: "steps")]) },
            title: "Steps per day", description: "Total steps on each of the last \(o.steps.count) days.", unit: "steps",
            legend: [("steps", "#2A9D8F")], options: opt(chart, "steps")) + "</section>\n"
        body += "<section id=\"sleep\"><h2>Sleep per night</h2>\n"
        body += RingCharts.stackedBars(
            o.sleep.map { night in
                (label: night.label, segments: RingCharts.stageColours.map { (value: (night.minutesByKind[$0.kind] ?? 0) / 60, colour: $0.colour, name: $0.name) })
            },
            title: "Sleep per night", description: "Hours of deep, light and REM sleep and awake time, by the day each night ends.",
            unit: "hours", legend: RingCharts.stageColours.map { ($0.name, $0.colour) }, options: opt(chart, "sleep")) + "</section>\n"
        body += "<section id=\"spo2\"><h2>Blood oxygen</h2>\n"
        body += RingCharts.dailyRange(
            o.spo2, title: "SpO2 per day", description: "Mean of the hourly SpO2 readings of each day, with the lowest and highest.",
            unit: "%", floor: 90, options: opt(chart, "spo2")) + "</section>\n"
        return Self.layout(title: "Ring history", body: body)
    }

    private func opt(_ options: SVGChartOptions, _ id: String) -> SVGChartOptions {
        var options = options
        options.idPrefix = id
        return options
    }

    private func escape(_ text: String) -> String { MarkupEscaping.escape(text) }

    /// The HTML shell: a viewport for phones, charts at full width.
    static func layout(title: String, body: String) -> String {
        """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(MarkupEscaping.escape(title))</title>
        <style>
        body { font-family: system-ui, sans-serif; margin: 0 auto; max-width: 760px; padding: 12px; color: #222; }
        h1 { font-size: 1.4em; margin: 0.2em 0; }
        h2 { font-size: 1.1em; margin: 1.2em 0 0.3em; }
        section svg { width: 100%; height: auto; display: block; }
        nav a { display: inline-block; margin: 0 1em 0.4em 0; }
        .empty { background: #FFF4D6; padding: 0.6em; }
        </style>
        </head>
        <body>
        \(body)</body>
        </html>

        """
    }
}
