import Foundation

/// One problem with one input, worded for whoever typed it: which field, what was expected, what
/// came. The CLI prints it after the option's name, the dashboard next to the form field, the API
/// in its `errors` list.
public struct InputProblem: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was expected, e.g. `kilograms above 0 and below 500, as a decimal number like 63.5`.
    public var expected: String
    /// What came, as typed (nil when nothing came).
    public var got: String?

    public init(expected: String, got: String?) {
        self.expected = expected
        self.got = got
    }

    /// `expected …, got "…"`; control characters in what came are shown as `\u{…}` escapes.
    public var description: String {
        guard let got else { return "expected \(expected), got nothing" }
        let shown = got.unicodeScalars.map { InputRules.isControl($0) ? "\\u{\(String($0.value, radix: 16))}" : String($0) }.joined()
        return "expected \(expected), got \"\(shown.count > 80 ? String(shown.prefix(80)) + "…" : shown)\""
    }
}

/// The one set of rules for what the coach accepts — weights, dates, names, free text — used by
/// the CLI, the dashboard's forms and its JSON API alike, so a value refused in one is refused in
/// all, with the same words.
///
/// Numbers are plain decimals only (`63.5`, `63,5`): no hexadecimal (`0x10`), no exponent
/// (`1e-300`), no `inf`/`nan`. Text refuses NUL and other control characters (notes may hold
/// line breaks and tabs), naming the field.
public enum InputRules {
    /// Weigh-ins: above this many kilograms…
    public static let minimumKilogramsExclusive = 0.0
    /// …and below this many.
    public static let maximumKilogramsExclusive = 500.0
    /// Birth dates and weigh-in days: years accepted.
    public static let years = 1900...2100
    /// Athlete names: at most this many characters.
    public static let maximumNameLength = 100
    /// Sequence names: at most this many characters.
    public static let maximumSequenceNameLength = 60
    /// Sex as recorded: at most this many characters.
    public static let maximumSexLength = 40
    /// Notes: at most this many characters.
    public static let maximumNotesLength = 4000

    /// Kilograms from `text`: a decimal number (point or comma) above 0 and below 500.
    public static func kilograms(_ text: String) throws(InputProblem) -> Double {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let expected = "kilograms above 0 and below 500, as a decimal number like 63.5"
        guard !trimmed.isEmpty else { throw InputProblem(expected: expected, got: nil) }
        guard let value = decimal(trimmed), value > minimumKilogramsExclusive, value < maximumKilogramsExclusive else {
            throw InputProblem(expected: expected, got: text)
        }
        return value
    }

    /// A plain decimal number: optional sign, digits, optionally one `.` or `,` and more digits.
    /// Nil for anything else (hex, exponents, `inf`, `nan`, several separators, no digits).
    public static func decimal(_ text: String) -> Double? {
        var body = Substring(text)
        var negative = false
        if let first = body.first, first == "-" || first == "+" {
            negative = first == "-"
            body = body.dropFirst()
        }
        let parts = body.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "." || $0 == "," })
        guard (1...2).contains(parts.count), parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
              !(parts[0].isEmpty && (parts.count == 1 || parts[1].isEmpty)) else { return nil }
        let digits = (parts[0].isEmpty ? "0" : String(parts[0])) + (parts.count == 2 && !parts[1].isEmpty ? "." + parts[1] : "")
        guard let magnitude = Double(digits) else { return nil }
        return negative ? -magnitude : magnitude
    }

    /// A day `YYYY-MM-DD` in ``years``.
    public static func date(_ text: String) throws(InputProblem) -> CalendarDate {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard let date = CalendarDate(iso: trimmed), years.contains(date.year) else {
            throw InputProblem(expected: "a date YYYY-MM-DD between \(years.lowerBound) and \(years.upperBound), e.g. 2004-05-17",
                               got: trimmed.isEmpty ? nil : text)
        }
        return date
    }

    /// A name: trimmed, 1…`maximum` characters, no control characters.
    public static func name(_ text: String, maximum: Int = maximumNameLength) throws(InputProblem) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let expected = "a name of 1 to \(maximum) characters without control characters"
        guard !trimmed.isEmpty else { throw InputProblem(expected: expected, got: nil) }
        guard trimmed.count <= maximum, !trimmed.unicodeScalars.contains(where: isControl) else {
            throw InputProblem(expected: expected, got: text)
        }
        return trimmed
    }

    /// Free text of at most `maximum` characters without control characters (with
    /// `lineBreaks`, CR, LF and tab are allowed).
    public static func text(_ text: String, maximum: Int, lineBreaks: Bool = false) throws(InputProblem) -> String {
        let refused = text.unicodeScalars.contains { isControl($0) && !(lineBreaks && ($0 == "\n" || $0 == "\r" || $0 == "\t")) }
        guard text.count <= maximum, !refused else {
            throw InputProblem(expected: "at most \(maximum) characters without control characters"
                                   + (lineBreaks ? " (line breaks and tabs are fine)" : ""), got: text)
        }
        return text
    }

    /// True for C0 and C1 control characters and DEL (NUL included).
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
