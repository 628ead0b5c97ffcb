import Foundation
import BluetideSupport

/// Gregorian calendar arithmetic in UTC, written out so results never depend on the host's
/// locale or time zone (CSV, SVG and statistics must be identical on every machine).
public enum UTCCalendar {
    /// Calendar fields of an instant in UTC; milliseconds are truncated toward the past.
    public struct Components: Hashable, Sendable {
        public var year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, millisecond: Int
    }

    /// Splits `date` into UTC calendar fields (proleptic Gregorian).
    public static func components(of date: Date) -> Components {
        let raw = (date.timeIntervalSince1970 * 1000).rounded(.down)
        // A NaN instant (never produced by the store) reads as the epoch rather than trapping.
        let totalMs = raw.isNaN ? 0 : raw
        // Clamp to years 0001...9999 so the integer conversion can never trap.
        let clamped = min(max(totalMs, -62_135_596_800_000), 253_402_300_799_999)
        let ms = Int64(clamped)
        let msPerDay: Int64 = 86_400_000
        var days = ms / msPerDay
        var rest = ms % msPerDay
        if rest < 0 { rest += msPerDay; days -= 1 }
        let (y, m, d) = CivilCalendar.date(fromDays: days)
        return Components(
            year: Int(y), month: Int(m), day: Int(d),
            hour: Int(rest / 3_600_000), minute: Int(rest / 60_000 % 60),
            second: Int(rest / 1000 % 60), millisecond: Int(rest % 1000))
    }

    /// Days since 1970-01-01 for a Gregorian date.
    public static func daysFromEpoch(year: Int, month: Int, day: Int) -> Int64 {
        CivilCalendar.days(year: Int64(year), month: Int64(month), day: Int64(day))
    }

    /// Gregorian date for days since 1970-01-01 (inverse of ``daysFromEpoch(year:month:day:)``).
    public static func civil(fromDays days: Int64) -> (Int, Int, Int) {
        let (year, month, day) = CivilCalendar.date(fromDays: days)
        return (Int(year), Int(month), Int(day))
    }

    /// ISO-8601 UTC timestamp with milliseconds: `2026-11-21T13:05:09.250Z`.
    public static func iso8601(_ date: Date) -> String {
        let c = components(of: date)
        let ms = c.millisecond < 10 ? "00\(c.millisecond)" : c.millisecond < 100 ? "0\(c.millisecond)" : "\(c.millisecond)"
        return "\(UTCCalendar.fourDigits(c.year))-\(UTCCalendar.twoDigits(c.month))-\(UTCCalendar.twoDigits(c.day))T"
            + "\(UTCCalendar.twoDigits(c.hour)):\(UTCCalendar.twoDigits(c.minute)):\(UTCCalendar.twoDigits(c.second)).\(ms)Z"
    }

    /// Zero-padded to two digits (`7` → `07`).
    public static func twoDigits(_ value: Int) -> String { value < 10 && value >= 0 ? "0\(value)" : "\(value)" }

    /// Zero-padded to four digits (`826` → `0826`).
    public static func fourDigits(_ value: Int) -> String {
        let s = "\(value)"
        return value >= 0 && s.count < 4 ? String(repeating: "0", count: 4 - s.count) + s : s
    }
}
