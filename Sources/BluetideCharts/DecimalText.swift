/// Locale-independent decimal text for numbers in CSV and SVG: always a point, never a comma,
/// never exponent notation, fixed number of fraction digits.
public enum DecimalText {
    /// `value` rounded half away from zero to `digits` (0...6) fraction digits, trailing zeros kept
    /// (`fixed(412.25, 1)` = `412.3`). Non-finite values give an empty string; magnitudes beyond
    /// 1e12 are clamped so the integer conversion cannot trap.
    public static func fixed(_ value: Double, _ digits: Int) -> String {
        guard value.isFinite else { return "" }
        let digits = min(max(digits, 0), 6)
        var scale: Int64 = 1
        for _ in 0..<digits { scale *= 10 }
        let limit = 1e12
        let clamped = min(max(value, -limit), limit)
        let scaled = Int64((abs(clamped) * Double(scale)).rounded(.toNearestOrAwayFromZero))
        let whole = scaled / scale
        let fraction = scaled % scale
        let sign = clamped < 0 && scaled != 0 ? "-" : ""
        guard digits > 0 else { return "\(sign)\(whole)" }
        var fractionText = "\(fraction)"
        if fractionText.count < digits { fractionText = String(repeating: "0", count: digits - fractionText.count) + fractionText }
        return "\(sign)\(whole).\(fractionText)"
    }

    /// Like ``fixed(_:_:)`` but drops trailing zeros and a trailing point (`412.50` → `412.5`, `3.00` → `3`).
    public static func compact(_ value: Double, maxDigits: Int = 3) -> String {
        var text = fixed(value, maxDigits)
        guard text.contains(".") else { return text }
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        if text == "-0" { text = "0" }
        return text
    }
}
