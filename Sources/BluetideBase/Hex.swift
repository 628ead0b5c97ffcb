/// Hex text for bytes, and bytes from hex text, as users type and read them.
extension Sequence where Element == UInt8 {
    /// Lower-case hex, two digits per byte, no separators: `[0x16, 0x4E]` → `"164e"`.
    public var hexString: String {
        var out = ""
        for byte in self {
            out.append(Hex.digits[Int(byte >> 4)])
            out.append(Hex.digits[Int(byte & 0x0F)])
        }
        return out
    }

    /// Upper-case hex with a space between bytes: `[0x16, 0x4E]` → `"16 4E"`.
    public var spacedHex: String {
        map { byte in
            String(Hex.upperDigits[Int(byte >> 4)]) + String(Hex.upperDigits[Int(byte & 0x0F)])
        }.joined(separator: " ")
    }
}

/// Parsing of hex text.
public enum Hex {
    static let digits: [Character] = Array("0123456789abcdef")
    static let upperDigits: [Character] = Array("0123456789ABCDEF")

    /// Why hex text could not be read.
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public let input: String
        public let reason: String
        public var description: String { "invalid hex \"\(input)\": \(reason)" }
    }

    /// Parses hex such as `"16 4E 1C"`, `"164e1c"`, `"0x16,0x4E"` or `"16:4E"`.
    /// Separators (space, `:`, `-`, `,`, `_`) and `0x` prefixes are ignored; an odd number of
    /// digits or any other character throws, naming the offending position.
    public static func parse(_ text: String) throws(ParseError) -> [UInt8] {
        var out: [UInt8] = []
        var high: UInt8?
        let chars = Array(text)
        var i = 0
        while i < chars.count {
            let c = chars[i]
            if c == "0", i + 1 < chars.count, chars[i + 1] == "x" || chars[i + 1] == "X", high == nil {
                i += 2
                continue
            }
            if c == " " || c == ":" || c == "-" || c == "," || c == "_" || c == "\t" || c == "\n" {
                if high != nil {
                    throw ParseError(input: text, reason: "lone hex digit before separator at position \(i)")
                }
                i += 1
                continue
            }
            guard c.isASCII, let nibble = c.hexDigitValue else {
                throw ParseError(input: text, reason: "'\(c)' at position \(i) is not a hex digit")
            }
            if let h = high {
                out.append(h << 4 | UInt8(nibble))
                high = nil
            } else {
                high = UInt8(nibble)
            }
            i += 1
        }
        if high != nil { throw ParseError(input: text, reason: "odd number of hex digits") }
        return out
    }
}
