import BluetideReflex
import Foundation

/// Renders the dashboard's pages from the coach's store. Pure reads: every page is built from
/// one look at the database, nothing is cached, so what a phone shows is what is stored.
public struct DashboardPages: Sendable {
    /// Where athletes, sequences and sessions live.
    public let store: CoachStore
    /// How numbers and dates are written.
    public var display: DisplayText
    /// The current time (ages, default weigh-in day).
    public var now: @Sendable () -> Date

    /// Pages over `store`.
    public init(store: CoachStore, display: DisplayText = DisplayText(), now: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        self.display = display
        self.now = now
    }

    /// The "not found" page body for `what` (e.g. `athlete 7`).
    public func notFound(_ what: String, back: PageLayout.Section) -> HTML {
        PageLayout.page(title: "Not found", section: back, body: """
            <section class="card"><p>There is no \(what).</p><p><a href="\(back == .sequences ? "/sequences" : "/athletes")">Back to the list</a></p></section>

            """)
    }

    /// Summary boxes: steps hit, hit rate, mean, median, best.
    func statBoxes(_ s: ReactionSummary) -> HTML {
        """
        <div class="stats">\
        <div><span>Hits</span><b>\(s.hits)/\(s.count)</b></div>\
        <div><span>Hit rate</span><b>\(DisplayText.percent(s.hitRate))</b></div>\
        <div><span>Mean</span><b>\(DisplayText.milliseconds(s.meanMilliseconds))</b></div>\
        <div><span>Median</span><b>\(DisplayText.milliseconds(s.medianMilliseconds))</b></div>\
        <div><span>Best</span><b>\(DisplayText.milliseconds(s.bestMilliseconds))</b></div>\
        </div>

        """
    }

    /// A table of per-target figures (one row per target present).
    func perTargetTable(_ targets: [TargetSummary]) -> HTML {
        guard !targets.isEmpty else { return "<p class=\"muted\">No results yet.</p>\n" }
        let rows = targets.map { t -> HTML in
            let s = t.summary
            return """
                <tr data-target="\(t.target)"><td>\(PageLayout.targetSwatch(t.target)) \(DisplayText.targetName(t.target))</td>\
                <td class="num">\(s.hits)/\(s.count)</td><td class="num">\(DisplayText.percent(s.hitRate))</td>\
                <td class="num">\(DisplayText.milliseconds(s.meanMilliseconds))</td><td class="num">\(DisplayText.milliseconds(s.medianMilliseconds))</td>\
                <td class="num">\(DisplayText.milliseconds(s.bestMilliseconds))</td></tr>

                """
        }
        return """
            <div class="table-wrap"><table class="per-target"><thead><tr><th>Target</th><th class="num">Hits</th><th class="num">Rate</th>\
            <th class="num">Mean</th><th class="num">Median</th><th class="num">Best</th></tr></thead><tbody>
            \(rows)</tbody></table></div>

            """
    }

    /// An SVG chart from ``SVGChart`` inside its frame (the chart escapes its own text).
    func chart(_ svg: String, id: String) -> HTML {
        "<figure class=\"chart\" id=\"\(id)\">\(HTML(trusted: svg))</figure>\n"
    }
}
