import Foundation

/// Number formatting shared by the ride's views and exports (dot decimals whatever the locale).
public enum RideFormat {
    /// `value` with `decimals` digits after the point.
    public static func fixed(_ value: Double, _ decimals: Int) -> String {
        guard value.isFinite else { return "–" }
        return String(format: "%.\(max(0, decimals))f", locale: Locale(identifier: "en_US_POSIX"), value)
    }

    /// `h:mm:ss` or `m:ss`.
    public static func clock(_ seconds: Double) -> String {
        let total = max(0, Int(seconds.isFinite ? seconds : 0))
        let h = total / 3600, m = total / 60 % 60, s = total % 60
        let two = { (n: Int) in n < 10 ? "0\(n)" : "\(n)" }
        return h > 0 ? "\(h):\(two(m)):\(two(s))" : "\(m):\(two(s))"
    }
}
