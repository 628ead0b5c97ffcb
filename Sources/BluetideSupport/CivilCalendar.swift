/// Proleptic Gregorian calendar arithmetic on day numbers (day 0 = 1970-01-01), written out so
/// results never depend on the host's locale, time zone or Foundation version.
///
/// Works in 400-year cycles of 146 097 days, with the year taken to start on March 1st so the
/// leap day falls at its end. Wrapping arithmetic: absurd field values give a wrong day, never a
/// trap (decoders feed it untrusted bytes).
public enum CivilCalendar {
    /// Days from 1970-01-01 to the given date (month 1...12, day 1...31).
    public static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let marchYear = month <= 2 ? year &- 1 : year
        let (cycle, yearOfCycle) = floorDivide(marchYear, 400)
        let marchMonth = month > 2 ? month &- 3 : month &+ 9  // 0 = March … 11 = February
        let dayOfYear = (153 &* marchMonth &+ 2) / 5 &+ day &- 1
        let dayOfCycle = yearOfCycle &* 365 &+ yearOfCycle / 4 &- yearOfCycle / 100 &+ dayOfYear
        return cycle &* 146_097 &+ dayOfCycle &- 719_468  // 719 468 days from 0000-03-01 to 1970-01-01
    }

    /// The date `days` after 1970-01-01 (inverse of ``days(year:month:day:)``).
    public static func date(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let (cycle, dayOfCycle) = floorDivide(days &+ 719_468, 146_097)
        let yearOfCycle = (dayOfCycle - dayOfCycle / 1460 + dayOfCycle / 36_524 - dayOfCycle / 146_096) / 365
        let dayOfYear = dayOfCycle - (365 * yearOfCycle + yearOfCycle / 4 - yearOfCycle / 100)
        let marchMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * marchMonth + 2) / 5 + 1
        let month = marchMonth < 10 ? marchMonth + 3 : marchMonth - 9
        return (cycle &* 400 &+ yearOfCycle &+ (month <= 2 ? 1 : 0), month, day)
    }

    /// True for Gregorian leap years (every 4th, except centuries not divisible by 400).
    public static func isLeap(_ year: Int64) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    /// Days in `month` (1...12) of `year`.
    public static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Quotient and non-negative remainder (floor division), for dates and times before 1970.
    public static func floorDivide(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        var quotient = value / divisor
        var remainder = value % divisor
        if remainder < 0 {
            quotient -= 1
            remainder += divisor
        }
        return (quotient, remainder)
    }
}
