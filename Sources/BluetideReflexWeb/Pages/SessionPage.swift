import BluetideCharts
import BluetideReflex
import Foundation

extension DashboardPages {
    /// `/sessions/{id}`: one session's figures, per target, every step's result and the chart
    /// of reaction time per step. Nil when there is no such session.
    public func sessionPage(id: Int64) throws -> HTML? {
        guard let session = try store.session(id: id) else { return nil }
        let steps = try store.steps(sessionID: id)
        let results = SessionResults(session: session, steps: steps)
        let stats = ReflexStatistics.session(results)
        let athlete = try store.athlete(id: session.athleteId)
        let athleteName = athlete?.name ?? "athlete \(session.athleteId)"

        let state: HTML = session.complete
            ? "<span class=\"hit\">complete</span>"
            : "<span class=\"miss\">incomplete</span> (\(stats.missingSteps) of \(session.stepCount) steps missing)"
        let device = [session.deviceName, session.deviceAddress].compactMap { $0 }.joined(separator: " · ")
        let facts: HTML = """
            <section class="card"><dl class="facts">\
            <dt>Athlete</dt><dd><a href="/athletes/\(session.athleteId)">\(athleteName)</a></dd>\
            <dt>Sequence</dt><dd>\(session.sequenceName, or: "(not saved)")</dd>\
            <dt>Started</dt><dd>\(display.dateTime(session.started))</dd>\
            <dt>State</dt><dd id="session-state">\(state)</dd>\
            <dt>Trainer</dt><dd>\(device.isEmpty ? "–" : device)</dd>\
            </dl></section>

            """
        let rows = (0..<session.stepCount).map { index -> HTML in
            let target = session.targets[index]
            let allowed = index < session.milliseconds.count ? "\(session.milliseconds[index]) ms" : "–"
            guard let step = steps.first(where: { $0.stepIndex == index }) else {
                return "<tr class=\"step-row\" data-step=\"\(index)\"><td class=\"num\">\(index + 1)</td><td>\(PageLayout.targetSwatch(target)) \(DisplayText.targetName(target))</td><td class=\"muted\">no result</td><td class=\"num\">–</td><td class=\"num hide-small\">\(allowed)</td></tr>\n"
            }
            let result: HTML = step.hit ? "<span class=\"hit\">hit</span>" : "<span class=\"miss\">miss</span>"
            let wrong: HTML = step.wrongTarget ? " (wrong target first)" : ""
            return """
                <tr class="step-row" data-step="\(index)" data-hit="\(step.hit ? "yes" : "no")"><td class="num">\(index + 1)</td>\
                <td>\(PageLayout.targetSwatch(step.target)) \(DisplayText.targetName(step.target))</td><td>\(result)\(wrong)</td>\
                <td class="num">\(step.hit ? "\(step.reactionMilliseconds) ms" : "–")</td><td class="num hide-small">\(allowed)</td></tr>

                """
        }
        let title = "Session \(id): \(athleteName)"
        return PageLayout.page(title: title, section: .athletes, body: """
            \(facts)\(statBoxes(stats.overall))\
            \(chart(SVGChart.reactionTimes(of: results, title: "\(athleteName), \(display.dateTime(session.started))",
                                           options: SVGChartOptions(idPrefix: "session-chart")), id: "session-chart"))\
            <section class="card"><h2>Per target</h2>\(perTargetTable(stats.perTarget))</section>
            <section class="card"><h2>Steps</h2><div class="table-wrap"><table id="steps"><thead><tr><th class="num">Step</th><th>Target</th>\
            <th>Result</th><th class="num">Reaction</th><th class="num hide-small">Lit for</th></tr></thead><tbody>
            \(rows)</tbody></table></div>
            <p><a href="/api/sessions/\(id)">JSON</a></p></section>

            """)
    }
}
