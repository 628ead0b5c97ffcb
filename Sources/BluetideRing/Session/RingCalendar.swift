import BluetideSupport
import Foundation

/// The ring's notion of time. The ring keeps a wall clock with no time zone; Bluetide sets it to
/// local time in ``timeZone`` (as the official app does), so the ring's days are local days.
/// Ring seconds are that wall-clock time counted as if it were UTC; a *ring day* is
/// `ringSeconds / 86 400` (days since 1970-01-01 on the ring's calendar).
public struct RingCalendar: Sendable, Hashable {
    /// The zone whose wall clock the ring keeps.
    public var timeZone: TimeZone

    public init(timeZone: TimeZone = .current) { self.timeZone = timeZone }

    /// UTC.
    public static let utc = RingCalendar(timeZone: TimeZone(secondsFromGMT: 0)!)

    /// The ring's wall-clock seconds at `date`.
    public func ringSeconds(at date: Date) -> Int64 {
        Int64(date.timeIntervalSince1970.rounded(.down)) + Int64(timeZone.secondsFromGMT(for: date))
    }

    /// The instant the ring's wall clock shows `ringSeconds` (the later one in a DST fold).
    public func date(ringSeconds: Int64) -> Date {
        let guess = Date(timeIntervalSince1970: TimeInterval(ringSeconds))
        let offset = timeZone.secondsFromGMT(for: guess.addingTimeInterval(-TimeInterval(timeZone.secondsFromGMT(for: guess))))
        return Date(timeIntervalSince1970: TimeInterval(ringSeconds - Int64(offset)))
    }

    /// The ring day at `date`.
    public func day(at date: Date) -> Int { Int(CivilCalendar.floorDivide(ringSeconds(at: date), 86_400).0) }

    /// The ring day as `YYYY-MM-DD`.
    public static func label(day: Int) -> String {
        let (year, month, day) = CivilCalendar.date(fromDays: Int64(day))
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }

    /// The ring day of `YYYY-MM-DD`, nil when it is not a date.
    public static func day(label: String) -> Int? {
        let parts = label.split(separator: "-", omittingEmptySubsequences: false).map { Int64($0) }
        guard parts.count == 3, let year = parts[0], let month = parts[1], let day = parts[2], (1...12).contains(month),
              (1...CivilCalendar.daysInMonth(year: year, month: month)).contains(day) else { return nil }
        return Int(CivilCalendar.days(year: year, month: month, day: day))
    }

    /// Zero padded to `width` digits.
    public static func pad(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }

    /// The instant the ring shows `minute` of ring day `day` (minute may be negative or past 1440).
    public func date(day: Int, minute: Int) -> Date { date(ringSeconds: Int64(day) * 86_400 + Int64(minute) * 60) }
}
