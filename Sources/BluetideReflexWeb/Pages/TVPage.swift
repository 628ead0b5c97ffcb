import BluetideCharts
import BluetideReflex
import Foundation

extension DashboardPages {
    /// `/tv`: the gym's screen, full screen in big type on a TV or a phone: the running game's
    /// lanes (athlete, last reaction time, hits, mean), the decision and the leaderboards. The
    /// page carries only the boards; the game arrives over the `/live` WebSocket (script
    /// `/static/tv.js`), the boards are fetched again from `/tv/board` when a game ends.
    public func tvPage() throws -> HTML {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Bluetide · gym screen</title>
        <style>
        body { margin: 0; background: #0d1117; color: #f4f4f4; font-family: system-ui, sans-serif; }
        main { padding: 2vmin 3vmin; }
        h1 { font-size: clamp(1.8rem, 5vmin, 4rem); margin: 0; }
        .status { font-size: clamp(1.2rem, 3.5vmin, 3rem); color: #ffd166; margin: 1vmin 0 2vmin; min-height: 1.2em; }
        .lanes { display: grid; grid-template-columns: repeat(auto-fit, minmax(16rem, 1fr)); gap: 2vmin; }
        .lane { background: #161b22; border-radius: 2vmin; padding: 2vmin; border: 0.6vmin solid #30363d; }
        .lane.winner { border-color: #2fa84f; }
        .lane .who { font-size: clamp(1.4rem, 4.5vmin, 3.5rem); font-weight: 700; }
        .lane .last { font-size: clamp(2.5rem, 11vmin, 9rem); font-variant-numeric: tabular-nums; font-weight: 800; }
        .lane .last.miss { color: #d7263d; }
        .lane .figures { font-size: clamp(1rem, 3vmin, 2.2rem); color: #c9d1d9; font-variant-numeric: tabular-nums; }
        .swatch { display: inline-block; width: 0.8em; height: 0.8em; border-radius: 50%; margin-right: 0.3em; vertical-align: middle; }
        .boards { display: grid; grid-template-columns: repeat(auto-fit, minmax(20rem, 1fr)); gap: 2vmin; margin-top: 3vmin; }
        .board { background: #161b22; border-radius: 2vmin; padding: 2vmin; }
        .board h2 { margin: 0 0 1vmin; font-size: clamp(1.2rem, 3.5vmin, 2.6rem); }
        .board ol { margin: 0; padding-left: 1.6em; font-size: clamp(1rem, 3vmin, 2.2rem); font-variant-numeric: tabular-nums; }
        .muted { color: #8b949e; }
        </style>
        <script src="/static/tv.js" defer></script>
        </head><body>
        <main id="tv" data-state="idle" data-run="0">
        <h1 id="tv-title">Bluetide gym</h1>
        <p class="status" id="tv-status" role="status">Connecting…</p>
        <section class="lanes" id="tv-lanes" aria-live="polite"></section>
        <section class="boards" id="tv-board">\(try tvBoards(sequence: nil))</section>
        <noscript><p>The live game needs JavaScript; the boards above are as of loading the page.</p></noscript>
        </main>
        </body></html>
        """
    }

    /// The leaderboards for the TV page: `sequence`'s (when given) or the three most recently
    /// played sequences', top 5 of all time each (``Leaderboard``).
    public func tvBoards(sequence: String?) throws -> HTML {
        let results = try store.results()
        let athletes = try store.athletes()
        var weights: [Int64: [WeightEntry]] = [:]
        for athlete in athletes { if let id = athlete.id { weights[id] = try store.weightHistory(athleteID: id) } }
        var names: [String] = []
        if let sequence { names = [sequence] }
        for result in results.filter(\.session.complete).sorted(by: { $0.session.started > $1.session.started }) {
            guard let name = result.session.sequenceName, !names.contains(name), names.count < 3 else { continue }
            names.append(name)
        }
        if names.isEmpty { return "<div class=\"board\"><h2>Leaderboard</h2><p class=\"muted\">No complete sessions yet.</p></div>" }
        return names.map { name -> HTML in
            let board = Leaderboard.board(results, athletes: athletes, weights: weights, sequence: name, now: now()).prefix(5)
            let rows = board.map { entry -> HTML in
                "<li>\(entry.athlete.name) · \(DecimalText.fixed(entry.scoreMilliseconds, 0)) ms/step · \(entry.summary.hits)/\(entry.summary.count)</li>"
            }
            let list: HTML = rows.isEmpty ? "<p class=\"muted\">No complete sessions yet.</p>" : "<ol>\(Array(rows))</ol>"
            return "<div class=\"board\" data-sequence=\"\(name)\"><h2>\(name): all time</h2>\(list)</div>"
        }.reduce(HTML(trusted: ""), +)
    }
}
