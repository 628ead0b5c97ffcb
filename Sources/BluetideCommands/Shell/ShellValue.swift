import BluetideCore

/// The bytes a `write` in the shell sends: hex (`01FF`, `01 ff`, `0x01`), text in quotes
/// (`"hello"`, or `text:hello`), or a typed little-endian number (`u8:1`, `u16:500`, `s16:-2`,
/// `u32:70000`, `s32:-1`) as the GATT characteristics' integer fields are encoded.
enum ShellValue {
    static func bytes(_ text: String) throws(ShellRequest.SyntaxError) -> [UInt8] {
        let unquoted = ShellWords.unquoted(text)
        if unquoted != text { return Array(unquoted.utf8) }
        if text.hasPrefix("text:") { return Array(text.dropFirst(5).utf8) }
        if let colon = text.firstIndex(of: ":"), let width = widths[String(text[..<colon]).lowercased()] {
            let number = String(text[text.index(after: colon)...])
            guard let value = Int64(number), width.range.contains(value) else {
                throw ShellRequest.SyntaxError(message: "\(text): \(text[..<colon]) takes a whole number from \(width.range.lowerBound) to \(width.range.upperBound)")
            }
            let pattern = UInt64(bitPattern: value)
            return (0..<width.bytes).map { UInt8(truncatingIfNeeded: pattern >> (8 * UInt64($0))) }
        }
        let hex = text.lowercased().hasPrefix("0x") ? String(text.dropFirst(2)) : text
        do { return try Hex.parse(hex) } catch {
            throw ShellRequest.SyntaxError(message: "\(text) is not a value: write hex (01FF), \"text\" or a typed number (u8:1, u16:500, s16:-2)")
        }
    }

    private static let widths: [String: (bytes: Int, range: ClosedRange<Int64>)] = [
        "u8": (1, 0...0xFF), "s8": (1, -0x80...0x7F),
        "u16": (2, 0...0xFFFF), "s16": (2, -0x8000...0x7FFF),
        "u32": (4, 0...0xFFFF_FFFF), "s32": (4, -0x8000_0000...0x7FFF_FFFF),
    ]
}
