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
    public func day(at date: Date) -> Int { Int(ringSeconds(at: date).floorDiv(86_400)) }

    /// The ring day as `YYYY-MM-DD`.
    public static func label(day: Int) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        let c = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: TimeInterval(day) * 86_400))
        return String(format: "%04d-%02d-%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0)
    }

    /// The instant the ring shows `minute` of ring day `day` (minute may be negative or past 1440).
    public func date(day: Int, minute: Int) -> Date { date(ringSeconds: Int64(day) * 86_400 + Int64(minute) * 60) }
}

extension Int64 {
    fileprivate func floorDiv(_ d: Int64) -> Int64 { (self - ((self % d) + d) % d) / d }
}
