import BluetideBase

/// The bytes a `write` in the shell sends: a typed form of the characteristic's profile
/// (`reset`, `target-power 200`: ``WriteForm``), hex (`01FF`, `01 ff`, `0x01`), text in quotes
/// (`"hello"`, or `text:hello`), or a typed little-endian number (`u8:1`, `u16:500`, `s16:-2`,
/// `u32:70000`, `s32:-1`) as the GATT characteristics' integer fields are encoded.
enum ShellValue {
    /// The bytes of `text` (the words after the characteristic) for a characteristic that takes
    /// `forms`; `characteristic` names it in errors.
    static func bytes(_ text: String, forms: [WriteForm], characteristic: String) throws(ShellRequest.SyntaxError) -> [UInt8] {
        let words = try ShellWords.split(text)
        if let first = words.first, let form = forms.first(where: { $0.name == first.lowercased() }) {
            return try form.bytes(Array(words.dropFirst()))
        }
        if words.count == 1 {
            do { return try bytes(words[0]) } catch {
                // A typed number out of range says so; anything else lists what this characteristic takes.
                if isTypedNumber(words[0]) { throw error }
            }
        } else if words.count > 1, words.allSatisfy({ (try? Hex.parse($0)) != nil }) {
            // Hex split by spaces: 01 ff 02.
            return words.flatMap { (try? Hex.parse($0)) ?? [] }
        }
        let generic = "hex (01FF), \"text\" or a typed number (u8:1, u16:500, s16:-2)"
        guard !forms.isEmpty else {
            throw ShellRequest.SyntaxError(message: "\(text) is not a value for \(characteristic): write \(generic) (its profile has no typed forms)")
        }
        let names = forms.map(\.usage).joined(separator: ", ")
        throw ShellRequest.SyntaxError(
            message: "\(text) is not a value for \(characteristic): expected \(forms.count == 1 ? names : "one of " + names) (its profile's forms), or \(generic)")
    }

    private static func isTypedNumber(_ word: String) -> Bool {
        guard let colon = word.firstIndex(of: ":") else { return false }
        return widths[String(word[..<colon]).lowercased()] != nil
    }

    /// What a write sent, for the reply: the value's JSON (decoded by the characteristic's
    /// profile when it has one and the bytes decode) and its readable summary, if any.
    static func written(_ bytes: [UInt8], to uuid: BluetoothUUID, at time: Double) -> (json: JSONOutputValue, summary: String?) {
        guard let decoding = try? ValueDecoding(uuid: uuid, profile: nil), decoding.profile != nil else {
            return (JSONOutput.value(bytes), nil)
        }
        let decoded = decoding.decode(bytes, at: time)
        guard decoded.error == nil, let summary = decoded.summary else { return (JSONOutput.value(bytes), nil) }
        return (JSONOutput.value(bytes, decoded: decoded.value, profile: decoding.profile, summary: summary), summary)
    }

    /// One word as hex, quoted text, `text:…` or a typed number.
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
