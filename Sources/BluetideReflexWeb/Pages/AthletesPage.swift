import BluetideReflex
import Foundation

extension DashboardPages {
    /// `/athletes`: every athlete with their sessions and latest mean, and the form to add one
    /// (`fields`/`errors` when a submission was refused).
    public func athletesPage(fields: FormFields? = nil, errors: FormErrors? = nil) throws -> HTML {
        let athletes = try store.athletes()
        let results = try store.results()
        let rows = athletes.map { athlete -> HTML in
            let mine = results.filter { $0.session.athleteId == athlete.id }
            let summary = ReflexStatistics.summary(of: mine.flatMap(\.steps))
            let last = mine.last.map { display.dateTime($0.session.started) } ?? "–"
            let age = athlete.birthDate.flatMap { display.age(born: $0, at: now()) }.map { "\($0)" } ?? "–"
            return """
                <tr data-athlete="\(athlete.id ?? -1)"><td><a href="/athletes/\(athlete.id ?? -1)">\(athlete.name)</a></td>\
                <td class="num hide-small">\(age)</td><td class="num">\(mine.count)</td>\
                <td class="num">\(DisplayText.milliseconds(summary.meanMilliseconds))</td>\
                <td class="num hide-small">\(DisplayText.percent(summary.hitRate))</td><td class="hide-small">\(last)</td></tr>

                """
        }
        let list: HTML = athletes.isEmpty
            ? "<p class=\"muted\" id=\"no-athletes\">No athletes yet: add the first one below.</p>\n"
            : """
                <div class="table-wrap"><table id="athletes"><thead><tr><th>Name</th><th class="num hide-small">Age</th><th class="num">Sessions</th>\
                <th class="num">Mean</th><th class="num hide-small">Hit rate</th><th class="hide-small">Last session</th></tr></thead><tbody>
                \(rows)</tbody></table></div>

                """
        return PageLayout.page(title: "Athletes", section: .athletes, body: """
            <section class="card">\(list)</section>
            \(athleteForm(action: "/athletes", heading: "Add an athlete", button: "Add athlete", fields: fields, errors: errors))
            """)
    }

    /// The athlete form (add on the list page, edit on the athlete's page).
    func athleteForm(action: String, heading: String, button: String, fields: FormFields?, errors: FormErrors?) -> HTML {
        let stance = fields?.trimmed("stance") ?? "orthodox"
        let options = Stance.allCases.map { item -> HTML in
            let selected: HTML = item.rawValue == stance ? " selected" : ""
            return "<option value=\"\(item.rawValue)\"\(selected)>\(item.rawValue)</option>"
        }
        let stanceInvalid: HTML = errors?.error(for: "stance") == nil ? "" : " aria-invalid=\"true\""
        let stanceError: HTML = errors?.error(for: "stance").map { "<span class=\"field-error\">\($0.description)</span>" } ?? ""
        return """
            <form class="card" method="post" action="\(action)" id="athlete-form" novalidate>
            <h2>\(heading)</h2>
            \(PageLayout.errorSummary(errors))<div class="grid2">
            \(PageLayout.field("name", label: "Name", value: fields?["name"] ?? "", errors: errors, required: true))\
            \(PageLayout.field("birthDate", label: "Birth date", value: fields?["birthDate"] ?? "", errors: errors, type: "date", hint: "YYYY-MM-DD, optional"))\
            \(PageLayout.field("sex", label: "Sex", value: fields?["sex"] ?? "", errors: errors, hint: "optional"))\
            <label class="field"><span>Stance</span><select name="stance"\(stanceInvalid)>\(options)</select>\(stanceError)</label>
            </div>
            <label class="field"><span>Notes</span><textarea name="notes">\(fields?["notes"] ?? "")</textarea></label>
            <button type="submit">\(button)</button>
            </form>

            """
    }
}
