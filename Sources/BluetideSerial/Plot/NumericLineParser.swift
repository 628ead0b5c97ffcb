/// Finds the numbers in the lines a device prints, for plotting: `key=value` or `key:value`
/// pairs (`temp=21.5 hum=40`, `a:1,b:2`), CSV (`21.5,40`, with a header line of names such as
/// `temp,hum` naming the columns after it) or whitespace-separated numbers (`21.5 40`). Unnamed
/// numbers are named by their column, `1`, `2`, … Pure: one line in, named values out.
public struct NumericLineParser: Sendable {
    /// Column names from the last header line (a line of names only), used for unnamed columns.
    public private(set) var headers: [String] = []

    /// A parser with no header yet.
    public init() {}

    /// The named values in `line`, in order; empty when it has none (a header line sets the
    /// column names and gives nothing). A token that is not a number is skipped.
    public mutating func parse(_ line: String) -> [(name: String, value: Double)] {
        let tokens = line.split(whereSeparator: { $0 == "," || $0 == ";" || $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" })
            .map(String.init)
        guard !tokens.isEmpty else { return [] }
        var values: [(name: String, value: Double)] = []
        var names: [String] = []
        var column = 0
        for token in tokens {
            if let separator = token.firstIndex(where: { $0 == "=" || $0 == ":" }) {
                let name = String(token[..<separator])
                let text = String(token[token.index(after: separator)...])
                if let value = Self.number(text), !name.isEmpty { values.append((name, value)) }
                continue
            }
            column += 1
            if let value = Self.number(token) {
                let name = column <= headers.count ? headers[column - 1] : String(column)
                values.append((name, value))
            } else {
                names.append(token)
            }
        }
        // A line of names only (a CSV header) names the columns that follow.
        if values.isEmpty, !names.isEmpty, names.count == column { headers = names }
        return values
    }

    /// `text` as a finite number (`21.5`, `-3`, `1e3`), or nil.
    static func number(_ text: String) -> Double? {
        guard let value = Double(text), value.isFinite else { return nil }
        return value
    }
}
