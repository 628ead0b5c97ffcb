import BluetideReflex
import Foundation

extension DashboardPages {
    /// `/run`: pick an athlete and a saved sequence and start; results of the current (or last)
    /// run arrive over the `/live` WebSocket and are written into the page by our script. The
    /// page itself carries no results, so whatever appears in its table came live.
    /// `athleteID`/`sequenceName` preselect; `errors` when a start (without script) was refused.
    public func runPage(athleteID: Int64? = nil, sequenceName: String? = nil, errors: FormErrors? = nil,
                        refusal: String? = nil, gameErrors: FormErrors? = nil, gameRefusal: String? = nil) throws -> HTML {
        let athletes = try store.athletes()
        let sequences = try store.sequences()
        let athleteOptions = athletes.map { athlete -> HTML in
            let selected: HTML = athlete.id == athleteID ? " selected" : ""
            return "<option value=\"\(athlete.id ?? -1)\"\(selected)>\(athlete.name)</option>"
        }
        let sequenceOptions = sequences.map { s -> HTML in
            let selected: HTML = s.name == sequenceName ? " selected" : ""
            return "<option value=\"\(s.name)\"\(selected)>\(s.name) (\(s.targets.count) steps)</option>"
        }
        func invalid(_ field: String) -> HTML { errors?.error(for: field) == nil ? "" : " aria-invalid=\"true\"" }
        func message(_ field: String) -> HTML {
            errors?.error(for: field).map { error -> HTML in "<span class=\"field-error\">\(error.description)</span>" } ?? ""
        }
        let missing: HTML = athletes.isEmpty || sequences.isEmpty
            ? "<p class=\"muted\">Add \(athletes.isEmpty ? "an athlete" : "")\(athletes.isEmpty && sequences.isEmpty ? " and " : "")\(sequences.isEmpty ? "a sequence" : "") first.</p>\n"
            : ""
        let refusalHTML: HTML = refusal.map { "<div class=\"errors\" role=\"alert\"><p>\($0)</p></div>\n" } ?? ""
        return PageLayout.page(title: "Run a session", section: .run, body: """
            <form class="card" method="post" action="/run" id="run-form" novalidate>
            \(refusalHTML)\(PageLayout.errorSummary(errors))<div id="run-errors" class="errors" role="alert" hidden></div>\(missing)<div class="grid2">
            <label class="field"><span>Athlete</span><select name="athlete" id="athlete"\(invalid("athlete"))><option value="">Choose…</option>\(athleteOptions)</select>\(message("athlete"))</label>
            <label class="field"><span>Sequence</span><select name="sequence" id="sequence"\(invalid("sequence"))><option value="">Choose…</option>\(sequenceOptions)</select>\(message("sequence"))</label>
            </div>
            <p class="actions"><button type="submit" id="start-button">Start</button><button type="button" class="danger" id="stop-button" disabled>Stop</button></p>
            </form>
            \(gameForm(athletes: athletes, sequences: sequences, errors: gameErrors, refusal: gameRefusal))
            <section class="card" id="live" data-state="idle" data-connected="no">
            <h2 id="run-heading">Live results</h2>
            <p class="run-state" id="run-state" data-state="idle">Connecting to the coach…</p>
            <p><strong id="run-summary"></strong> <a id="session-link" href="#" hidden>Open the session</a></p>
            <div class="table-wrap"><table id="live-steps"><thead><tr><th class="num">Step</th><th>Target</th><th>Result</th><th class="num">Reaction</th></tr></thead><tbody></tbody></table></div>
            <h2>Log</h2><ul id="run-log" class="muted"></ul>
            <noscript><p>Live results need JavaScript; the results are stored all the same: see the athlete's page.</p></noscript>
            </section>

            """, script: true)
    }

    /// The game form: several athletes at once on several trainers (``GameForm``); the game is
    /// watched on `/tv`.
    func gameForm(athletes: [Athlete], sequences: [SavedSequence], errors: FormErrors?, refusal: String?) -> HTML {
        let athleteOptions = athletes.map { athlete -> HTML in "<option value=\"\(athlete.id ?? -1)\">\(athlete.name)</option>" }
        let sequenceOptions = sequences.map { s -> HTML in "<option value=\"\(s.name)\">\(s.name) (\(s.targets.count) steps)</option>" }
        let refusalHTML: HTML = refusal.map { "<div class=\"errors\" role=\"alert\" id=\"game-refusal\"><p>\($0)</p></div>\n" } ?? ""
        return """
            <form class="card" method="post" action="/game" id="game-form">
            <h2>Game</h2>
            \(refusalHTML)\(PageLayout.errorSummary(errors))<div class="grid2">
            <label class="field"><span>Game</span><select name="mode" id="game-mode">
            <option value="head-to-head">Head-to-head: best mean</option><option value="first-to">Head-to-head: first to N hits</option>
            <option value="relay">Relay (teams in list order)</option><option value="chase">Colour chase, 1-4 on one trainer</option></select></label>
            <label class="field"><span>Sequence</span><select name="sequence" id="game-sequence"><option value="">Choose…</option>\(sequenceOptions)</select></label>
            <label class="field"><span>Athletes (lanes in list order)</span><select name="athletes" id="game-athletes" multiple size="4">\(athleteOptions)</select></label>
            <label class="field"><span>First to (hits)</span><input name="firstTo" id="game-first-to" type="number" min="1" value="10"></label>
            <label class="field"><span>Teams (relay)</span><input name="teams" id="game-teams" type="number" min="1" max="8" value="2"></label>
            </div>
            <p class="actions"><button type="submit" id="game-start">Start the game</button> <a href="/tv">Open the gym screen (/tv)</a></p>
            </form>
            """
    }
}
