import BluetideBase
import Foundation

/// A parsed JSON value, as much of JSON as a value-log line needs (all of it, in fact).
///
/// Value logs are read line by line; this small parser works on one line's UTF-8 bytes, keeps
/// object keys in their written order, rejects duplicate keys, and reports the column (1-based
/// byte position) of the first syntax error, so a reader can say exactly what is wrong where.
/// It never traps: nesting is limited and numbers are range-checked.
enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// A number with its text as written (kept so integers can be checked exactly).
    case number(Double, text: String)
    case string(String)
    case array([JSONValue])
    /// Members in written order.
    case object([(key: String, value: JSONValue)])

    static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.number(a, _), .number(b, _)): return a == b
        case let (.string(a), .string(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.object(a), .object(b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: return false
        }
    }

    /// The member named `key` of an object, else nil.
    subscript(key: String) -> JSONValue? {
        guard case let .object(members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// A short description for error messages: `"abc"`, `12.5`, `true`, `null`, `an object`.
    var shortDescription: String {
        switch self {
        case .null: return "null"
        case let .bool(value): return value ? "true" : "false"
        case let .number(_, text): return text
        case let .string(text):
            let limit = 40
            let shown = text.count > limit ? String(text.prefix(limit)) + "…" : text
            return "\"" + shown + "\""
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

/// A JSON syntax error at a 1-based byte column of the line.
struct JSONSyntaxError: Error, Sendable, Equatable {
    var column: Int
    var message: String
}

/// Parses one JSON text (a whole line) from UTF-8 bytes.
struct JSONParser {
    /// Deepest nesting accepted; deeper input is rejected rather than risking the stack.
    static let maximumDepth = 64

    private let bytes: [UInt8]
    private var position = 0

    private init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Parses `bytes` as exactly one JSON value surrounded by optional whitespace.
    static func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONValue {
        var parser = JSONParser(bytes)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        if parser.position < bytes.count {
            throw parser.error("unexpected \(parser.describeCurrent()) after the end of the value")
        }
        return value
    }

    private func error(_ message: String) -> JSONSyntaxError {
        JSONSyntaxError(column: position + 1, message: message)
    }

    private func describeCurrent() -> String {
        guard position < bytes.count else { return "end of line" }
        let byte = bytes[position]
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x" + [byte].hexString
    }

    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        guard depth < Self.maximumDepth else { throw error("nesting deeper than \(Self.maximumDepth) levels") }
        guard position < bytes.count else { throw error("expected a value, found end of line") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth)
        case UInt8(ascii: "["): return try parseArray(depth: depth)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectWord("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectWord("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectWord("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("expected a value, found \(describeCurrent())")
        }
    }

    private mutating func expectWord(_ word: String) throws(JSONSyntaxError) {
        let expected = Array(word.utf8)
        guard bytes.count - position >= expected.count,
              Array(bytes[position..<position + expected.count]) == expected
        else { throw error("expected \(word)") }
        position += expected.count
    }

    private mutating func parseObject(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        position += 1  // {
        var members: [(key: String, value: JSONValue)] = []
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
            position += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
                throw error("expected a field name in quotes, found \(describeCurrent())")
            }
            let keyColumn = position + 1
            let key = try parseString()
            if members.contains(where: { $0.key == key }) {
                throw JSONSyntaxError(column: keyColumn, message: "field \"\(key)\" appears twice")
            }
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else {
                throw error("expected ':' after field name, found \(describeCurrent())")
            }
            position += 1
            skipWhitespace()
            let value = try parseValue(depth: depth + 1)
            members.append((key, value))
            skipWhitespace()
            guard position < bytes.count else { throw error("expected ',' or '}', found end of line") }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
                continue
            }
            if bytes[position] == UInt8(ascii: "}") {
                position += 1
                return .object(members)
            }
            throw error("expected ',' or '}', found \(describeCurrent())")
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        position += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
            position += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth + 1))
            skipWhitespace()
            guard position < bytes.count else { throw error("expected ',' or ']', found end of line") }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
                continue
            }
            if bytes[position] == UInt8(ascii: "]") {
                position += 1
                return .array(elements)
            }
            throw error("expected ',' or ']', found \(describeCurrent())")
        }
    }

    private mutating func parseString() throws(JSONSyntaxError) -> String {
        position += 1  // opening quote
        var scalars = String.UnicodeScalarView()
        var runStart = position
        /// Appends the raw UTF-8 run before an escape or the closing quote, validating it.
        func flushRun(_ end: Int, into scalars: inout String.UnicodeScalarView) throws(JSONSyntaxError) {
            guard end > runStart else { return }
            let run = Array(bytes[runStart..<end])
            let text = String(decoding: run, as: UTF8.self)
            guard Array(text.utf8) == run else {
                throw JSONSyntaxError(column: runStart + 1, message: "string is not valid UTF-8")
            }
            scalars.append(contentsOf: text.unicodeScalars)
        }
        while true {
            guard position < bytes.count else { throw error("unterminated string") }
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                try flushRun(position, into: &scalars)
                position += 1
                return String(scalars)
            }
            if byte < 0x20 { throw error("control character 0x\([byte].hexString) inside a string (escape it)") }
            if byte != UInt8(ascii: "\\") {
                position += 1
                continue
            }
            try flushRun(position, into: &scalars)
            position += 1
            guard position < bytes.count else { throw error("unterminated escape") }
            let escape = bytes[position]
            position += 1
            switch escape {
            case UInt8(ascii: "\""): scalars.append("\"")
            case UInt8(ascii: "\\"): scalars.append("\\")
            case UInt8(ascii: "/"): scalars.append("/")
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "u"):
                let first = try parseHex4()
                if (0xD800...0xDBFF).contains(first) {
                    // A high surrogate must be followed by an escaped low surrogate.
                    guard bytes.count - position >= 6, bytes[position] == UInt8(ascii: "\\"),
                          bytes[position + 1] == UInt8(ascii: "u")
                    else { throw error("lone UTF-16 surrogate in \\u escape") }
                    position += 2
                    let second = try parseHex4()
                    guard (0xDC00...0xDFFF).contains(second) else { throw error("invalid UTF-16 surrogate pair") }
                    let combined = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
                    guard let scalar = Unicode.Scalar(combined) else { throw error("invalid UTF-16 surrogate pair") }
                    scalars.append(scalar)
                } else {
                    guard let scalar = Unicode.Scalar(first) else { throw error("lone UTF-16 surrogate in \\u escape") }
                    scalars.append(scalar)
                }
            default:
                position -= 1
                throw error("unknown escape \\\(describeCurrent())")
            }
            runStart = position
        }
    }

    private mutating func parseHex4() throws(JSONSyntaxError) -> UInt32 {
        guard bytes.count - position >= 4 else { throw error("expected 4 hex digits after \\u") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = Character(Unicode.Scalar(bytes[position])).hexDigitValue else {
                throw error("expected 4 hex digits after \\u, found \(describeCurrent())")
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }

    private mutating func parseNumber() throws(JSONSyntaxError) -> JSONValue {
        let start = position
        func isDigit(_ index: Int) -> Bool {
            index < bytes.count && bytes[index] >= UInt8(ascii: "0") && bytes[index] <= UInt8(ascii: "9")
        }
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        guard isDigit(position) else { throw error("expected a digit, found \(describeCurrent())") }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
        } else {
            while isDigit(position) { position += 1 }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            position += 1
            guard isDigit(position) else { throw error("expected a digit after '.', found \(describeCurrent())") }
            while isDigit(position) { position += 1 }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                position += 1
            }
            guard isDigit(position) else { throw error("expected an exponent digit, found \(describeCurrent())") }
            while isDigit(position) { position += 1 }
        }
        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw JSONSyntaxError(column: start + 1, message: "number \(text) is out of range")
        }
        return .number(value, text: text)
    }
}

/// Writes JSON text by the rules of docs/json-output.md: string literals, numbers, field names.
/// The one place these rules live; the CLI's `--json` output and the gateway's MQTT payloads both
/// write through it.
public enum JSONText {
    /// `value` with at most six decimals (microseconds for seconds), trailing zeros dropped:
    /// 1.1363676329999999 → `1.136368`, 90.0 → `90`, -0.0000001 → `0`. Infinities and NaN (which
    /// JSON cannot hold) become `null`.
    public static func number(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        let rounded = (value * 1_000_000).rounded() / 1_000_000
        if rounded == rounded.rounded(), abs(rounded) < 1e15 { return String(Int64(rounded)) }
        if abs(rounded) < 1e9 {
            // Millionths as an integer (exact below 2^53): the digits `%.6f` would print, without its cost.
            let millionths = Int64((value * 1_000_000).rounded())
            let magnitude = millionths.magnitude
            var fraction = String(magnitude % 1_000_000)
            fraction = String(repeating: "0", count: 6 - fraction.utf8.count) + fraction
            while fraction.hasSuffix("0") { fraction.removeLast() }
            return (millionths < 0 ? "-" : "") + String(magnitude / 1_000_000) + "." + fraction
        }
        var text = String(format: "%.6f", rounded)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text == "-0" ? "0" : text
    }

    /// A field name in the one spelling of docs/json-output.md: lowerCamelCase (`att_error` →
    /// `attError`) and metres, not meters (`distanceMeters` → `distanceMetres`, `kilometers` →
    /// `kilometres`); a word that only contains the letters (`parameters`, `diameter`) is left as
    /// it is spelled. Names that need no change (most) are returned without further work.
    public static func fieldName(_ key: String) -> String {
        guard key.contains("_") || key.contains("eter") || key.isEmpty else { return key }
        let parts = key.split(separator: "_", omittingEmptySubsequences: true)
        var name = parts.enumerated().map { index, part in index == 0 ? String(part) : part.prefix(1).uppercased() + part.dropFirst() }.joined()
        if name.isEmpty { name = key }
        // The unit: "Meter" starting a camelCase word, "meter" starting the key or after kilo/centi/milli.
        return name.replacingOccurrences(of: "Meter", with: "Metre")
            .replacingOccurrences(of: #"(^|[Kk]ilo|[Cc]enti|[Mm]illi)meter"#, with: "$1metre", options: .regularExpression)
    }

    /// `text` as a JSON string literal with quotes; `"`, `\` and control characters are escaped,
    /// everything else (including non-ASCII) is kept as UTF-8.
    public static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
