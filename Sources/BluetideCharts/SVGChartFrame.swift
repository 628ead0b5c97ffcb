/// Size and naming of a chart.
public struct SVGChartOptions: Hashable, Sendable {
    /// Width in SVG user units (pixels at 100 %).
    public var width: Double
    /// Height in SVG user units.
    public var height: Double
    /// Prefix for element ids (`<title>`/`<desc>`), unique per chart when several share a page.
    public var idPrefix: String
    /// CSS font family for all text.
    public var fontFamily: String

    /// Defaults: 720 × 400, ids `chart-title`/`-desc`, sans-serif.
    public init(width: Double = 720, height: Double = 400, idPrefix: String = "chart", fontFamily: String = "sans-serif") {
        self.width = width
        self.height = height
        self.idPrefix = idPrefix
        self.fontFamily = fontFamily
    }
}

/// The plotting area of a chart inside its margins, in SVG user units.
public struct ChartPlot: Hashable, Sendable {
    /// Edges of the area: x of the left and right, y of the top and bottom (y grows downward).
    public let left: Double, top: Double, right: Double, bottom: Double
    /// Width of the area.
    public var width: Double { right - left }
    /// Height of the area.
    public var height: Double { bottom - top }

    /// An area with the given edges.
    public init(left: Double, top: Double, right: Double, bottom: Double) {
        self.left = left
        self.top = top
        self.right = right
        self.bottom = bottom
    }
}

/// The parts every chart shares: the `<svg>` root with an accessible title and description, a
/// value axis with grid lines, and a "no data" note. Charts (reflex, ring, ride) draw their own
/// marks between ``begin(_:options:title:description:)`` and closing `svg`.
public enum SVGChartFrame {
    /// Smallest drawn size, so margins never swallow the plot.
    public static let minimumWidth = 240.0, minimumHeight = 180.0

    /// The plot area for a chart of this size (room on the left for the value axis, below for
    /// the horizontal axis and a legend).
    public static func plot(for options: SVGChartOptions) -> ChartPlot {
        let width = max(options.width, minimumWidth), height = max(options.height, minimumHeight)
        return ChartPlot(left: 64, top: 44, right: width - 20, bottom: height - 64)
    }

    /// A coordinate as text (see ``SVGBuilder/number(_:)``).
    public static func n(_ value: Double) -> String { SVGBuilder.number(value) }

    /// Opens the `<svg>` root with `<title>`, `<desc>`, a white background and the visible title.
    public static func begin(_ svg: inout SVGBuilder, options: SVGChartOptions, title: String, description: String) {
        let width = max(options.width, minimumWidth), height = max(options.height, minimumHeight)
        let titleID = options.idPrefix + "-title", descID = options.idPrefix + "-desc"
        svg.open("svg", [
            ("xmlns", "http://www.w3.org/2000/svg"), ("width", n(width)), ("height", n(height)),
            ("viewBox", "0 0 \(n(width)) \(n(height))"), ("role", "img"), ("aria-labelledby", "\(titleID) \(descID)"),
            ("font-family", options.fontFamily),
        ])
        svg.text("title", [("id", titleID)], title)
        svg.text("desc", [("id", descID)], description)
        svg.empty("rect", [("x", "0"), ("y", "0"), ("width", n(width)), ("height", n(height)), ("fill", "#FFFFFF")])
        svg.text("text", [("class", "chart-title"), ("x", n(width / 2)), ("y", "24"), ("text-anchor", "middle"),
                          ("font-size", "15"), ("font-weight", "bold")], title)
    }

    /// A vertical value axis at the plot's left with grid lines at `ticks` and a rotated `label`.
    public static func valueAxis(_ svg: inout SVGBuilder, _ p: ChartPlot, ticks: [Double], y: (Double) -> Double, label: String) {
        svg.open("g", [("class", "y-axis")])
        svg.empty("line", [("x1", n(p.left)), ("y1", n(p.top)), ("x2", n(p.left)), ("y2", n(p.bottom)), ("stroke", "#333333")])
        for tick in ticks {
            svg.empty("line", [("x1", n(p.left)), ("y1", n(y(tick))), ("x2", n(p.right)), ("y2", n(y(tick))), ("stroke", "#E0E0E0")])
            svg.empty("line", [("x1", n(p.left - 5)), ("y1", n(y(tick))), ("x2", n(p.left)), ("y2", n(y(tick))), ("stroke", "#333333")])
            svg.text("text", [("x", n(p.left - 8)), ("y", n(y(tick) + 4)), ("text-anchor", "end"), ("font-size", "11")],
                     DecimalText.compact(tick, maxDigits: 2))
        }
        let cy = p.top + p.height / 2
        svg.text("text", [("x", "16"), ("y", n(cy)), ("text-anchor", "middle"), ("font-size", "12"),
                          ("transform", "rotate(-90 16 \(n(cy)))")], label)
        svg.close("g")
    }

    /// A grey note in the middle of an empty plot.
    public static func noData(_ svg: inout SVGBuilder, _ p: ChartPlot, _ message: String) {
        svg.text("text", [("class", "no-data"), ("x", n(p.left + p.width / 2)), ("y", n(p.top + p.height / 2)),
                          ("text-anchor", "middle"), ("font-size", "14"), ("fill", "#666666")], message)
    }
}
