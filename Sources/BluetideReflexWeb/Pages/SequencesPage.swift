import BluetideProfiles
import BluetideReflex
import Foundation

extension DashboardPages {
    /// `/sequences`: saved sequences (targets as coloured swatches, total time, max interval)
    /// and the random generator's form (`randomFields`/`randomErrors` when refused).
    public func sequencesPage(randomFields: FormFields? = nil, randomErrors: FormErrors? = nil, notice: String? = nil) throws -> HTML {
        let sequences = try store.sequences()
        let rows = sequences.map { s -> HTML in
            let total = s.milliseconds.reduce(0) { $0 + Int($1) }
            let shown = s.targets.prefix(16).map { PageLayout.targetSwatch($0) }
            let more: HTML = s.targets.count > 16 ? " …" : ""
            let maxInterval = s.maxIntervalMilliseconds.map { "\($0) ms" } ?? "–"
            return """
                <tr data-sequence="\(s.name)"><td><a href="\(Self.editorPath(s.name))">\(s.name)</a></td><td class="num">\(s.targets.count)</td>\
                <td class="swatches">\(shown)\(more)</td><td class="num hide-small">\(DisplayText.fixed(Double(total) / 1000, digits: 1)) s</td>\
                <td class="num hide-small">\(maxInterval)</td><td><a href="/run?sequence=\(Self.queryValue(s.name))">Run</a></td></tr>

                """
        }
        let list: HTML = sequences.isEmpty
            ? "<p class=\"muted\" id=\"no-sequences\">No saved sequences yet.</p>\n"
            : """
                <div class="table-wrap"><table id="sequences"><thead><tr><th>Name</th><th class="num">Steps</th><th>Targets</th>\
                <th class="num hide-small">Longest</th><th class="num hide-small">Max interval</th><th></th></tr></thead><tbody>
                \(rows)</tbody></table></div>

                """
        let noticeHTML: HTML = notice.map { "<p class=\"notice\" role=\"status\">\($0)</p>\n" } ?? ""
        return PageLayout.page(title: "Sequences", section: .sequences, body: """
            \(noticeHTML)<section class="card">\(list)<p><a class="button" href="/sequences/edit">New sequence</a></p></section>
            \(randomForm(fields: randomFields, errors: randomErrors))
            """)
    }

    /// The random generator: steps, targets to use (coloured), time range, repeats, seed.
    func randomForm(fields: FormFields?, errors: FormErrors?) -> HTML {
        let ticked = fields.map { Set($0.all("target")) } ?? Set((0...5).map { "\($0)" })
        let checks = TargetPalette.colours.map { colour -> HTML in
            let checked: HTML = ticked.contains("\(colour.target)") ? " checked" : ""
            return "<label class=\"target-check target-\(colour.target)\"><input type=\"checkbox\" name=\"target\" value=\"\(colour.target)\"\(checked)> \(colour.target) \(colour.name)</label>"
        }
        let targetError: HTML = errors?.error(for: "target").map { "<span class=\"field-error\">\($0.description)</span>" } ?? ""
        let repeats: HTML = fields?["repeats"] != nil ? " checked" : ""
        return """
            <form class="card" method="post" action="/sequences/random" id="random-form" novalidate>
            <h2>Random sequence</h2>
            \(PageLayout.errorSummary(errors))<div class="grid2">
            \(PageLayout.field("name", label: "Name", value: fields?["name"] ?? "", errors: errors, required: true))\
            \(PageLayout.field("steps", label: "Steps", value: fields?["steps"] ?? "20", errors: errors, type: "number", hint: "1–\(PunchSequence.maxSteps)"))\
            \(PageLayout.field("minTime", label: "Shortest time (ms)", value: fields?["minTime"] ?? "800", errors: errors, type: "number"))\
            \(PageLayout.field("maxTime", label: "Longest time (ms)", value: fields?["maxTime"] ?? "2000", errors: errors, type: "number"))\
            \(PageLayout.field("seed", label: "Seed", value: fields?["seed"] ?? "", errors: errors, hint: "optional: the same seed gives the same sequence"))\
            </div>
            <fieldset class="target-choices"><legend>Targets to use</legend>\(checks)\(targetError)</fieldset>
            <label class="field"><span><input type="checkbox" name="repeats" value="1"\(repeats) style="width:auto"> Allow the same target twice in a row</span></label>
            <button type="submit">Generate and save</button>
            </form>

            """
    }

    /// `/sequences/edit`: the editor for a new sequence, or for `name` when given; `fields` and
    /// `errors` when a save was refused. Nil when `name` is given and not saved.
    public func sequenceEditorPage(name: String? = nil, fields: FormFields? = nil, errors: FormErrors? = nil, notice: String? = nil) throws -> HTML? {
        var values = fields
        if values == nil, let name {
            guard let saved = try store.sequence(named: name) else { return nil }
            values = FormFields([
                ("name", saved.name), ("targets", saved.targets.map(String.init).joined(separator: ",")),
                ("times", saved.milliseconds.map(String.init).joined(separator: ",")),
                ("maxInterval", saved.maxIntervalMilliseconds.map(String.init) ?? ""),
            ])
        }
        let buttons = TargetPalette.colours.map { colour -> HTML in
            """
            <button type="button" class="target-button target-\(colour.target)" data-target="\(colour.target)" \
            style="background:\(colour.fill);border-color:\(colour.stroke)" aria-label="add target \(colour.target) (\(colour.name))">\(colour.target)<br><small>\(colour.name)</small></button>
            """
        }
        // The steps as the server knows them (the script re-draws them with a time input each).
        let parsedTargets = SequenceForm.items(values?["targets"] ?? "")
        let parsedTimes = SequenceForm.items(values?["times"] ?? "")
        let stepItems = parsedTargets.enumerated().map { index, item -> HTML in
            let time = parsedTimes.count == parsedTargets.count ? parsedTimes[index] : (parsedTimes.first ?? "")
            let swatch: HTML = UInt8(item).flatMap { $0 <= 5 ? PageLayout.targetSwatch($0) : nil } ?? "<span class=\"swatch\">?</span>"
            return "<li data-target=\"\(item)\"><span class=\"n\">\(index + 1)</span>\(swatch)<span>\(time) ms</span></li>"
        }
        let title = name.map { "Sequence \($0)" } ?? "New sequence"
        let noticeHTML: HTML = notice.map { "<p class=\"notice\" role=\"status\">\($0)</p>\n" } ?? ""
        return PageLayout.page(title: title, section: .sequences, body: """
            \(noticeHTML)<form class="card" method="post" action="/sequences" id="sequence-editor" novalidate>
            \(PageLayout.errorSummary(errors))\
            \(PageLayout.field("name", label: "Name", value: values?["name"] ?? "", errors: errors, required: true))\
            <p class="muted">Tap the targets in the order they should light. Each step gets the default time; change any step's time below.</p>
            <div class="target-pad" id="target-pad">\(buttons)</div>
            <div class="grid2">
            <label class="field"><span>Default time per step (ms)</span><input type="number" id="default-time" value="1000" min="1" max="60000" step="50"></label>
            \(PageLayout.field("maxInterval", label: "Max interval between punches (ms)", value: values?["maxInterval"] ?? "", errors: errors,
                               type: "number", hint: "optional, 1–60000"))\
            </div>
            <p class="actions"><strong id="step-count">\(parsedTargets.count) steps</strong>\
            <button type="button" class="secondary" id="undo-step">Undo last</button><button type="button" class="secondary" id="clear-steps">Clear</button></p>
            <ol class="steps" id="steps">\(stepItems)</ol>
            \(PageLayout.field("targets", label: "Targets (in order)", value: values?["targets"] ?? "", errors: errors, hint: "0 red, 1 blue, 2 green, 3 yellow, 4 white, 5 orange, separated by commas", attributes: " id=\"targets\""))\
            \(PageLayout.field("times", label: "Times (ms)", value: values?["times"] ?? "", errors: errors, hint: "one per step, or one for all steps", attributes: " id=\"times\""))\
            <p class="actions"><button type="submit">Save sequence</button> <a href="/sequences">Back to sequences</a></p>
            </form>

            """, script: true)
    }

    /// The editor's address for the sequence `name`.
    static func editorPath(_ name: String) -> String { "/sequences/edit?name=" + queryValue(name) }

    /// `text` percent-encoded for a query value.
    static func queryValue(_ text: String) -> String {
        let allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }
}
