import BluetideLiveWeb
import BluetideSerial
import Foundation

/// The plotted points for the `uart plot` page: each as one JSON text message
/// (`{"t":SECONDS,"values":{"sine":0.309,…}}`), the last ``historyLength`` kept so a page that
/// connects late draws at once and so ``csv()`` can export them. One owner of the history.
public actor PlotFeed {
    /// Points kept (a page connecting late gets these first; the CSV export has these).
    public nonisolated let historyLength: Int
    private var points: [(t: Double, values: [(String, Double)])] = []
    private var names: [String] = []
    private var listeners = LiveListeners()
    private var parser = NumericLineParser()

    /// A feed keeping the last `historyLength` points (at least 1).
    public init(historyLength: Int = 10_000) {
        self.historyLength = max(historyLength, 1)
    }

    /// Adds the numbers in one received `line` (see ``NumericLineParser``) at `t` seconds since
    /// the plot started; returns them (empty for a line without numbers, or a header line).
    @discardableResult
    public func publish(line: String, t: Double) -> [(name: String, value: Double)] {
        let values = parser.parse(line)
        publish(t: t, values: values)
        return values
    }

    /// Adds one line's values at `t` seconds since the plot started; nothing for an empty line.
    public func publish(t: Double, values: [(name: String, value: Double)]) {
        guard !values.isEmpty, !listeners.isFinished else { return }
        let point = (t: t, values: values.map { ($0.name, $0.value) })
        points.append(point)
        if points.count > historyLength { points.removeFirst(points.count - historyLength) }
        for (name, _) in point.values where !names.contains(name) { names.append(name) }
        let message = Self.json(point)
        listeners.broadcast(message)
    }

    /// The series seen so far, in order of first appearance.
    public var seriesNames: [String] { names }
    /// How many points are kept.
    public var count: Int { points.count }

    /// The kept points, then every new one, until ``finish()``.
    public func listen() -> AsyncStream<String> {
        listeners.listen(history: points.map(Self.json), buffer: historyLength + 256) { [weak self] id in Task { await self?.forget(id) } }
    }

    /// The kept points as CSV: a `seconds` column and one per series (in order of first
    /// appearance), an empty cell where a line did not carry a series.
    public func csv() -> String {
        var out = (["seconds"] + names.map(Self.csvField)).joined(separator: ",") + "\n"
        for point in points {
            var row = [Self.number(point.t)]
            for name in names { row.append(point.values.last { $0.0 == name }.map { Self.number($0.1) } ?? "") }
            out += row.joined(separator: ",") + "\n"
        }
        return out
    }

    /// Ends every page's stream.
    public func finish() {
        listeners.finish()
    }

    private func forget(_ id: Int) { listeners.forget(id) }

    static func json(_ point: (t: Double, values: [(String, Double)])) -> String {
        let fields = point.values.map { "\(jsonString($0.0)):\(number($0.1))" }.joined(separator: ",")
        return "{\"t\":\(number(point.t)),\"values\":{\(fields)}}"
    }

    /// A number with at most six decimals, trailing zeros dropped (`0.309`, `2`).
    static func number(_ value: Double) -> String {
        var text = String(format: "%.6f", value)
        while text.contains("."), text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text == "-0" ? "0" : text
    }

    static func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    static func csvField(_ text: String) -> String {
        text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" }) ? "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : text
    }
}
