import BluetideCharts
import BluetideReflex
import Foundation

extension DashboardPages {
    /// `/athletes/{id}`: personal data, weight history (with the weigh-in form), statistics per
    /// target, every session with its figures per target, and charts of the session means over
    /// time, per target and of the latest session. Nil when there is no such athlete.
    public func athletePage(id: Int64, weightFields: FormFields? = nil, weightErrors: FormErrors? = nil,
                            editFields: FormFields? = nil, editErrors: FormErrors? = nil, notice: String? = nil) throws -> HTML? {
        guard let athlete = try store.athlete(id: id) else { return nil }
        let weights = try store.weightHistory(athleteID: id)
        let results = try store.results(athleteID: id)
        let statistics = ReflexStatistics.athlete(results)

        let age = athlete.birthDate.flatMap { display.age(born: $0, at: now()) }
        let birth: HTML = athlete.birthDate.map { date -> HTML in
            "\(date.iso)\(age.map { " (\($0) years)" } ?? "")"
        } ?? "–"
        let latestWeight = weights.last.map { "\(DisplayText.fixed($0.kilograms, digits: 1)) kg on \($0.date.iso)" } ?? "–"
        let notesHTML: HTML = athlete.notes.isEmpty ? "–" : "\(athlete.notes)"
        let facts: HTML = """
            <section class="card" id="personal"><h2>Personal data</h2><dl class="facts">\
            <dt>Name</dt><dd class="athlete-name">\(athlete.name)</dd>\
            <dt>Birth date</dt><dd>\(birth)</dd>\
            <dt>Sex</dt><dd>\(athlete.sex, or: "–")</dd>\
            <dt>Stance</dt><dd>\(athlete.stance.rawValue)</dd>\
            <dt>Weight</dt><dd>\(latestWeight)</dd>\
            <dt>Notes</dt><dd class="notes">\(notesHTML)</dd>\
            <dt>Sessions</dt><dd>\(results.count)</dd>\
            </dl>
            <p class="actions"><a class="button" href="/run?athlete=\(id)">Run a session</a> <a href="/api/athletes/\(id)">JSON</a></p></section>

            """

        let weightRows = weights.reversed().map { w -> HTML in
            "<tr><td>\(w.date.iso)</td><td class=\"num\">\(DisplayText.fixed(w.kilograms, digits: 1)) kg</td></tr>\n"
        }
        // The chart from two weigh-ins on (one point says nothing the table does not).
        let weightChart: HTML = weights.count < 2 ? "" : """
            <figure class="weight-chart" id="weight-chart">\(HTML(trusted: SVGChart.weightOverTime(
                weights, title: "\(athlete.name): weight", options: SVGChartOptions(height: 260, idPrefix: "weight-svg"))))</figure>

            """
        let weightTable: HTML = weights.isEmpty
            ? "<p class=\"muted\">No weigh-ins yet.</p>\n"
            : weightChart + "<div class=\"table-wrap\"><table id=\"weights\"><thead><tr><th>Date</th><th class=\"num\">Weight</th></tr></thead><tbody>\n\(weightRows)</tbody></table></div>\n"
        let today = CalendarDate(utcDayOf: now()).iso
        let weightSection: HTML = """
            <section class="card" id="weight"><h2>Weight history</h2>
            \(weightTable)<form method="post" action="/athletes/\(id)/weights" id="weight-form" novalidate>
            \(PageLayout.errorSummary(weightErrors))<div class="grid2">
            \(PageLayout.field("date", label: "Date", value: weightFields?["date"] ?? today, errors: weightErrors, type: "date"))\
            \(PageLayout.field("kilograms", label: "Weight (kg)", value: weightFields?["kilograms"] ?? "", errors: weightErrors,
                               attributes: " inputmode=\"decimal\" placeholder=\"63.5\""))\
            </div><button type="submit">Add weigh-in</button></form></section>

            """

        let sessionsSection = sessionsTable(results)
        var charts: [HTML] = []
        if !statistics.trend.points.isEmpty {
            charts.append(chart(SVGChart.meansOverTime(statistics.trend, title: "\(athlete.name): mean reaction time per session",
                                                       options: SVGChartOptions(height: 340, idPrefix: "trend-chart")), id: "trend"))
        }
        if !statistics.perTarget.isEmpty {
            charts.append(chart(SVGChart.perTarget(statistics.perTarget, title: "\(athlete.name): reaction time per target",
                                                   options: SVGChartOptions(height: 340, idPrefix: "targets-chart")), id: "targets"))
        }
        if results.count >= 2 {
            charts.append(chart(SVGChart.progress(AthleteProgress.of(results), title: "\(athlete.name): progress per session",
                                                  options: SVGChartOptions(height: 340, idPrefix: "progress-chart")), id: "progress"))
        }
        if results.contains(where: { $0.steps.contains { $0.heartRateBpm != nil } }) {
            charts.append(chart(SVGChart.reactionAgainstHeartRate(results.flatMap(\.steps), title: "\(athlete.name): reaction time against heart rate",
                                                                  options: SVGChartOptions(height: 340, idPrefix: "heart-rate-chart")), id: "heart-rate"))
        }
        if let latest = results.last {
            charts.append(chart(SVGChart.reactionTimes(
                of: latest, title: "Latest session (\(display.dateTime(latest.session.started))): reaction time per step",
                options: SVGChartOptions(idPrefix: "latest-chart")), id: "latest"))
        }
        let trendText: HTML = statistics.trend.text.map { text -> HTML in
            "<p>Trend: \(text).</p>\n"
        } ?? "<p class=\"muted\">The trend needs two sessions with hits.</p>\n"
        let statisticsSection: HTML = """
            <section class="card" id="statistics"><h2>All sessions</h2>
            \(statBoxes(statistics.overall))\(trendText)\(perTargetTable(statistics.perTarget))\
            <p class="downloads" id="downloads">Download CSV: <a href="/athletes/\(id)/export.csv" download>one row per step</a> · \
            <a href="/athletes/\(id)/export.csv?per=session" download>one row per session</a></p></section>

            """
        let chartSection: HTML = charts.isEmpty ? "" : "<h2>Charts</h2>\n<div class=\"charts\">\(charts)</div>\n"
        let noticeHTML: HTML = notice.map { "<p class=\"notice\" role=\"status\">\($0)</p>\n" } ?? ""
        let editForm = athleteForm(
            action: "/athletes/\(id)", heading: "Edit personal data", button: "Save changes",
            fields: editFields ?? FormFields([("name", athlete.name), ("birthDate", athlete.birthDate?.iso ?? ""),
                                             ("sex", athlete.sex ?? ""), ("stance", athlete.stance.rawValue), ("notes", athlete.notes)]),
            errors: editErrors)
        return PageLayout.page(title: athlete.name, section: .athletes, body: """
            \(noticeHTML)\(facts)\(statisticsSection)\(chartSection)\(sessionsSection)\(weightSection)\(editForm)
            """)
    }

    /// Every session of the athlete, newest first, with overall and per-target means.
    func sessionsTable(_ results: [SessionResults]) -> HTML {
        guard !results.isEmpty else {
            return "<section class=\"card\" id=\"sessions\"><h2>Sessions</h2><p class=\"muted\">No sessions yet.</p></section>\n"
        }
        let targetHeads = TargetPalette.colours.map { colour -> HTML in
            "<th class=\"num\">\(PageLayout.targetSwatch(colour.target))</th>"
        }
        let rows = results.reversed().map { r -> HTML in
            let stats = ReflexStatistics.session(r)
            let id = r.session.id ?? -1
            let state: HTML = r.session.complete ? "<span class=\"hit\">complete</span>" : "<span class=\"miss\">incomplete</span>"
            let cells = TargetPalette.colours.map { colour -> HTML in
                guard let t = stats.perTarget.first(where: { $0.target == colour.target }) else { return "<td class=\"num muted\">–</td>" }
                let mean = t.summary.meanMilliseconds.map { DisplayText.fixed($0, digits: 0) } ?? "miss"
                return "<td class=\"num\" title=\"\(t.summary.hits)/\(t.summary.count) hits\">\(mean)</td>"
            }
            return """
                <tr data-session="\(id)"><td><a href="/sessions/\(id)">\(display.dateTime(r.session.started))</a></td>\
                <td>\(r.session.sequenceName, or: "–")</td><td>\(state)</td>\
                <td class="num">\(stats.overall.hits)/\(r.session.stepCount)</td>\
                <td class="num">\(DisplayText.milliseconds(stats.overall.meanMilliseconds))</td>\
                <td class="num">\(DisplayText.milliseconds(stats.overall.bestMilliseconds))</td>\(cells)</tr>

                """
        }
        return """
            <section class="card" id="sessions"><h2>Sessions</h2><p class="muted">Mean reaction time per target in ms; tap a date for the details.</p>
            <div class="table-wrap"><table><thead><tr><th>Started</th><th>Sequence</th><th>State</th><th class="num">Hits</th>\
            <th class="num">Mean</th><th class="num">Best</th>\(targetHeads)</tr></thead><tbody>
            \(rows)</tbody></table></div></section>

            """
    }
}
