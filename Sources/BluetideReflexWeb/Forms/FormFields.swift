/// The fields of a submitted form (`application/x-www-form-urlencoded`) or a query string.
///
/// `+` is a space and `%XX` a UTF-8 byte; a malformed escape is kept as written. A field given
/// several times keeps every value, in order.
public struct FormFields: Sendable, Hashable {
    /// Name–value pairs in the order received.
    public private(set) var pairs: [(name: String, value: String)]

    /// Parses an encoded body or query (without the leading `?`).
    public init(encoded text: String) {
        pairs = text.split(separator: "&", omittingEmptySubsequences: true).map { part in
            let pieces = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = Self.decode(pieces[0])
            let value = pieces.count > 1 ? Self.decode(pieces[1]) : ""
            return (name, value)
        }
    }

    /// Fields given directly (tests, JSON bodies turned into fields).
    public init(_ pairs: [(String, String)]) {
        self.pairs = pairs.map { (name: $0.0, value: $0.1) }
    }

    /// The first value of `name`, or nil when absent.
    public subscript(_ name: String) -> String? { pairs.first { $0.name == name }?.value }

    /// The first value of `name` with surrounding whitespace removed; "" when absent.
    public func trimmed(_ name: String) -> String {
        (self[name] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Every value of `name`, in order.
    public func all(_ name: String) -> [String] { pairs.filter { $0.name == name }.map(\.value) }

    public static func == (a: FormFields, b: FormFields) -> Bool {
        a.pairs.map(\.name) == b.pairs.map(\.name) && a.pairs.map(\.value) == b.pairs.map(\.value)
    }

    public func hash(into hasher: inout Hasher) {
        for pair in pairs {
            hasher.combine(pair.name)
            hasher.combine(pair.value)
        }
    }

    /// Form decoding: `+` → space, `%XX` → byte, then UTF-8 (invalid sequences become U+FFFD).
    static func decode(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.popFirst() {
            switch byte {
            case UInt8(ascii: "+"):
                bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                if utf8.count >= 2, let high = hexValue(utf8[utf8.startIndex]), let low = hexValue(utf8[utf8.startIndex + 1]) {
                    bytes.append(high << 4 | low)
                    utf8 = utf8.dropFirst(2)
                } else {
                    bytes.append(byte)
                }
            default:
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
