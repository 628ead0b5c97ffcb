import BluetideCharts
import BluetideReflex

/// A fragment of HTML markup whose interpolated `String`s are escaped.
///
/// Write pages as literals: `let row: HTML = "<td>\(athlete.name)</td>"`. Every interpolated
/// `String` is escaped for text and attribute values (`&`, `<`, `>`, `"`, `'`), so user text
/// can never become markup; numbers are written as they are; another `HTML` value (or a list of
/// them) is inserted verbatim. Trusted markup from our own code (the SVG charts, which escape
/// their own text) goes in through ``HTML/init(trusted:)``.
public struct HTML: Sendable, Hashable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// The markup.
    public private(set) var markup: String

    /// Markup produced by our own code that is already safe (e.g. an ``SVGChart`` drawing).
    public init(trusted markup: String) { self.markup = markup }

    /// A literal with no interpolation.
    public init(stringLiteral value: String) { markup = value }

    /// A literal with escaped interpolations.
    public init(stringInterpolation: StringInterpolation) { markup = stringInterpolation.markup }

    /// The markup, as sent.
    public var description: String { markup }

    /// Nothing.
    public static let empty = HTML(trusted: "")

    /// Appends another fragment.
    public static func + (lhs: HTML, rhs: HTML) -> HTML { HTML(trusted: lhs.markup + rhs.markup) }

    /// Escapes `text` for element content and quoted attribute values (the rule the SVG charts
    /// use too: ``MarkupEscaping/escape(_:)``).
    public static func escape(_ text: String) -> String { MarkupEscaping.escape(text) }

    /// Builds the markup of a literal: literal parts verbatim, interpolations escaped.
    public struct StringInterpolation: StringInterpolationProtocol {
        var markup = ""

        public init(literalCapacity: Int, interpolationCount: Int) {
            markup.reserveCapacity(literalCapacity + 16 * interpolationCount)
        }

        public mutating func appendLiteral(_ literal: String) { markup += literal }

        /// User or data text: escaped.
        public mutating func appendInterpolation(_ text: String) { markup += HTML.escape(text) }

        /// Optional text: escaped, or `placeholder` when nil.
        public mutating func appendInterpolation(_ text: String?, or placeholder: String) {
            markup += HTML.escape(text ?? placeholder)
        }

        /// A number, written in decimal.
        public mutating func appendInterpolation<Number: BinaryInteger>(_ number: Number) { markup += String(number) }

        /// Another fragment, verbatim.
        public mutating func appendInterpolation(_ fragment: HTML) { markup += fragment.markup }

        /// Fragments one after the other.
        public mutating func appendInterpolation(_ fragments: [HTML]) {
            for fragment in fragments { markup += fragment.markup }
        }
    }
}

extension Array where Element == HTML {
    /// The fragments one after the other.
    public func joined() -> HTML { HTML(trusted: map(\.markup).joined()) }
}
