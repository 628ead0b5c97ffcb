/// Escaping of text for HTML and XML (the SVG charts, the dashboard's pages): one rule for both.
public enum MarkupEscaping {
    /// Escapes `&`, `<`, `>`, `"` and `'` (as `&#39;`, which HTML and XML both read) for element
    /// content and quoted attribute values. Drops the characters XML 1.0 does not allow (control
    /// characters other than tab, line feed and carriage return; U+FFFE, U+FFFF) and DEL.
    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
            default:
                let value = scalar.value
                if value < 0x20 || value == 0x7F || value == 0xFFFE || value == 0xFFFF { continue }
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
