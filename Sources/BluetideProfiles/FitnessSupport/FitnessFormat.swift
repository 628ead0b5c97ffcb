/// Number formatting for the fitness summaries, without Foundation.
enum FitnessFormat {
    /// `value` with exactly `decimals` digits after the point, rounded half away from zero:
    /// `fixed(13.7343, 2)` → `"13.73"`. Non-finite values print as `nan`, `inf`, `-inf`.
    static func fixed(_ value: Double, _ decimals: Int) -> String {
        guard value.isFinite else { return value.isNaN ? "nan" : (value > 0 ? "inf" : "-inf") }
        let places = max(0, min(decimals, 9))
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        // Beyond 2^53 the digits are not meaningful anyway; fall back to Swift's own printing.
        guard scaled < 9.0e15 else { return "\(value)" }
        let whole = UInt64(scaled)
        let divisor = UInt64(scale)
        var text = String(whole / divisor)
        if places > 0 {
            let fraction = String(whole % divisor)
            text += "." + String(repeating: "0", count: places - fraction.count) + fraction
        }
        return (value < 0 && scaled != 0) ? "-" + text : text
    }

    /// Upper-case hex of a byte, `0x1F` style.
    static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return "0x" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0x0F)])
    }
}
