import BluetideCharts
import BluetideReflex
import Foundation

/// How the dashboard writes numbers and dates for people: fixed decimals with a point (never
/// the locale's comma), dates as `2026-11-21 18:05` in the server's time zone.
public struct DisplayText: Sendable {
    /// The time zone dates are shown in.
    public var timeZone: TimeZone

    /// Dates in `timeZone` (default: the server's own).
    public init(timeZone: TimeZone = .current) { self.timeZone = timeZone }

    /// `412 ms`, or `–` when nil.
    public static func milliseconds(_ value: Double?) -> String {
        value.map { fixed($0, digits: 0) + " ms" } ?? "–"
    }

    /// `83 %`, or `–` when nil.
    public static func percent(_ rate: Double?) -> String {
        rate.map { fixed($0 * 100, digits: 0) + " %" } ?? "–"
    }

    /// `value` with `digits` decimals and a point, rounded half away from zero — the one rule of
    /// the charts, the CSV and the CLI (`DecimalText`), so 62.5 % is 63 % everywhere.
    public static func fixed(_ value: Double, digits: Int) -> String {
        guard value.isFinite else { return "–" }
        return DecimalText.fixed(value, digits)
    }

    /// `2026-11-21 18:05`.
    public func dateTime(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        return String(format: "%04d-%02d-%02d %02d:%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0, c.minute ?? 0)
    }

    /// Whole years from `birth` to the day of `now` in `timeZone`, or nil if `birth` is later.
    public func age(born birth: CalendarDate, at now: Date) -> Int? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let c = calendar.dateComponents([.year, .month, .day], from: now)
        guard let year = c.year, let month = c.month, let day = c.day else { return nil }
        var years = year - birth.year
        if (month, day) < (birth.month, birth.day) { years -= 1 }
        return years >= 0 ? years : nil
    }

    /// `red` for target 0, or `target 7` outside the palette.
    public static func targetName(_ target: UInt8) -> String {
        TargetPalette.colour(of: target)?.name ?? "target \(target)"
    }
}
