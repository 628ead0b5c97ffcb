/// Writes SVG markup line by line with escaping and locale-independent numbers. Output depends
/// only on the calls made, so the same chart is byte-for-byte identical every time.
public struct SVGBuilder {
    /// An empty document.
    public init() {}

    public private(set) var lines: [String] = []
    private var depth = 0

    /// Escapes text and attribute values (see ``MarkupEscaping/escape(_:)``).
    public static func escape(_ text: String) -> String { MarkupEscaping.escape(text) }

    /// A coordinate or length: at most two decimals, no trailing zeros.
    public static func number(_ value: Double) -> String { DecimalText.compact(value, maxDigits: 2) }

    private static func attributeText(_ attributes: [(String, String)]) -> String {
        attributes.map { " \($0.0)=\"\(escape($0.1))\"" }.joined()
    }

    private mutating func emit(_ line: String) {
        lines.append(String(repeating: "  ", count: depth) + line)
    }

    /// `<name attrs/>`.
    public mutating func empty(_ name: String, _ attributes: [(String, String)]) {
        emit("<\(name)\(Self.attributeText(attributes))/>")
    }

    /// `<name attrs>text</name>`.
    public mutating func text(_ name: String, _ attributes: [(String, String)] = [], _ content: String) {
        emit("<\(name)\(Self.attributeText(attributes))>\(Self.escape(content))</\(name)>")
    }

    /// An element with a `<title>` child (a tooltip for one mark).
    public mutating func titled(_ name: String, _ attributes: [(String, String)], title: String) {
        emit("<\(name)\(Self.attributeText(attributes))><title>\(Self.escape(title))</title></\(name)>")
    }

    /// Opens `<name attrs>`; pair with ``close(_:)``.
    public mutating func open(_ name: String, _ attributes: [(String, String)] = []) {
        emit("<\(name)\(Self.attributeText(attributes))>")
        depth += 1
    }

    /// Closes the element opened last.
    public mutating func close(_ name: String) {
        depth = max(0, depth - 1)
        emit("</\(name)>")
    }

    /// The document text, newline-terminated.
    public var document: String { lines.joined(separator: "\n") + "\n" }
}
