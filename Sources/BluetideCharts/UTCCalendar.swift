import Foundation

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
        let (y, m, d) = civil(fromDays: days)
        return Components(
            year: y, month: m, day: d,
            hour: Int(rest / 3_600_000), minute: Int(rest / 60_000 % 60),
            second: Int(rest / 1000 % 60), millisecond: Int(rest % 1000))
    }

    /// Days since 1970-01-01 for a Gregorian date.
    public static func daysFromEpoch(year: Int, month: Int, day: Int) -> Int64 {
        // Count from 0000-03-01 so February (with its leap day) is the last month of the year.
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let shiftedMonth = Int64(month > 2 ? month - 3 : month + 9)
        let dayOfYear = (153 * shiftedMonth + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// Gregorian date for days since 1970-01-01 (inverse of ``daysFromEpoch(year:month:day:)``).
    public static func civil(fromDays days: Int64) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
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
