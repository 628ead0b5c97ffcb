import Foundation
import BluetideSupport

/// Gregorian calendar arithmetic in UTC, written out so results never depend on the host's
/// locale or time zone (CSV, SVG and statistics must be identical on every machine).
enum UTCCalendar {
    /// Calendar fields of an instant in UTC; milliseconds are truncated toward the past.
    struct Components: Hashable, Sendable {
        var year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, millisecond: Int
    }

    /// Splits `date` into UTC calendar fields (proleptic Gregorian).
    static func components(of date: Date) -> Components {
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
    static func daysFromEpoch(year: Int, month: Int, day: Int) -> Int64 {
        CivilCalendar.days(year: Int64(year), month: Int64(month), day: Int64(day))
    }

    /// ISO-8601 UTC timestamp with milliseconds: `2026-11-21T13:05:09.250Z`.
    static func iso8601(_ date: Date) -> String {
        let c = components(of: date)
        let ms = c.millisecond < 10 ? "00\(c.millisecond)" : c.millisecond < 100 ? "0\(c.millisecond)" : "\(c.millisecond)"
        return "\(String(format4: c.year))-\(String(format2: c.month))-\(String(format2: c.day))T"
            + "\(String(format2: c.hour)):\(String(format2: c.minute)):\(String(format2: c.second)).\(ms)Z"
    }
}
