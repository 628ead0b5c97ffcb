#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import BluetideSupport

/// A wall-clock instant with millisecond precision, written as ISO-8601 UTC text
/// (`2026-11-21T12:26:23.125Z`).
///
/// Value logs carry wall-clock time only to say when something happened in human terms; pacing
/// and derived rates use the monotonic ``ValueRecord/timestamp``. Whole milliseconds make the
/// text form round-trip exactly. Formatting and parsing are done here (proleptic Gregorian
/// calendar, years 0000-9999) so the format does not depend on a platform date formatter.
public struct WallClockTime: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public var millisecondsSince1970: Int64

    /// Earliest representable instant, 0000-01-01T00:00:00.000Z.
    public static let earliest = WallClockTime(millisecondsSince1970: -62_167_219_200_000)
    /// Latest representable instant, 9999-12-31T23:59:59.999Z.
    public static let latest = WallClockTime(millisecondsSince1970: 253_402_300_799_999)

    /// An instant given in milliseconds since the Unix epoch.
    public init(millisecondsSince1970: Int64) {
        self.millisecondsSince1970 = millisecondsSince1970
    }

    /// The instant `date`, rounded to the nearest millisecond (clamped to years 0000-9999).
    public init(_ date: Date) {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        let clamped = min(max(milliseconds.isFinite ? milliseconds : 0,
                              Double(Self.earliest.millisecondsSince1970)),
                          Double(Self.latest.millisecondsSince1970))
        self.init(millisecondsSince1970: Int64(clamped))
    }

    /// The current wall-clock time (reads the system clock: use at the edges, not in protocol code).
    public static func now() -> WallClockTime { WallClockTime(Date()) }

    /// This instant as a Foundation `Date`.
    public var date: Date { Date(timeIntervalSince1970: Double(millisecondsSince1970) / 1000) }

    public static func < (lhs: WallClockTime, rhs: WallClockTime) -> Bool {
        lhs.millisecondsSince1970 < rhs.millisecondsSince1970
    }

    /// Whether the instant lies in years 0000-9999, the range the text form can carry.
    public var isRepresentable: Bool { self >= Self.earliest && self <= Self.latest }

    /// ISO-8601 UTC with milliseconds, e.g. `2026-11-21T12:26:23.125Z`.
    public var iso8601: String {
        let clamped = min(max(millisecondsSince1970, Self.earliest.millisecondsSince1970), Self.latest.millisecondsSince1970)
        let (days, msOfDay) = CivilCalendar.floorDivide(clamped, 86_400_000)
        let (year, month, day) = CivilCalendar.date(fromDays: days)
        let hour = msOfDay / 3_600_000
        let minute = msOfDay / 60_000 % 60
        let second = msOfDay / 1000 % 60
        let millisecond = msOfDay % 1000
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2)).\(pad(millisecond, 3))Z"
    }

    public var description: String { iso8601 }

    /// Why ISO-8601 text could not be read.
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The text given.
        public var input: String
        /// What was wrong with it.
        public var reason: String
        public var description: String { "invalid ISO-8601 time \"\(input)\": \(reason)" }
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`; fractions finer than a millisecond
    /// are truncated. Dates are checked (no February 30th).
    public init(iso8601 text: String) throws(ParseError) {
        let chars = Array(text.utf8)
        func fail(_ reason: String) -> ParseError { ParseError(input: text, reason: reason) }
        func number(_ range: Range<Int>, _ name: String) throws(ParseError) -> Int64 {
            guard range.upperBound <= chars.count else { throw fail("too short: \(name) missing") }
            var value: Int64 = 0
            for index in range {
                let c = chars[index]
                guard c >= UInt8(ascii: "0"), c <= UInt8(ascii: "9") else { throw fail("\(name) must be digits") }
                value = value * 10 + Int64(c - UInt8(ascii: "0"))
            }
            return value
        }
        func expect(_ index: Int, _ char: Character, _ name: String) throws(ParseError) {
            guard index < chars.count, chars[index] == char.asciiValue else { throw fail("expected '\(char)' \(name)") }
        }
        let year = try number(0..<4, "year")
        try expect(4, "-", "after the year")
        let month = try number(5..<7, "month")
        try expect(7, "-", "after the month")
        let day = try number(8..<10, "day")
        try expect(10, "T", "between date and time")
        let hour = try number(11..<13, "hour")
        try expect(13, ":", "after the hour")
        let minute = try number(14..<16, "minute")
        try expect(16, ":", "after the minutes")
        let second = try number(17..<19, "second")
        guard (1...12).contains(month) else { throw fail("month \(month) is not 1-12") }
        guard day >= 1, day <= CivilCalendar.daysInMonth(year: year, month: month) else {
            throw fail("day \(day) does not exist in month \(month) of \(year)")
        }
        guard hour < 24, minute < 60, second < 61 else { throw fail("time of day out of range") }
        var index = 19
        var millisecond: Int64 = 0
        if index < chars.count, chars[index] == UInt8(ascii: ".") {
            index += 1
            let fractionStart = index
            var scale: Int64 = 100
            while index < chars.count, chars[index] >= UInt8(ascii: "0"), chars[index] <= UInt8(ascii: "9") {
                millisecond += Int64(chars[index] - UInt8(ascii: "0")) * scale
                scale /= 10
                index += 1
            }
            guard index > fractionStart else { throw fail("expected digits after '.'") }
        }
        guard index < chars.count else { throw fail("missing time zone (Z or ±HH:MM)") }
        var offsetMinutes: Int64 = 0
        switch chars[index] {
        case UInt8(ascii: "Z"):
            index += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign: Int64 = chars[index] == UInt8(ascii: "+") ? 1 : -1
            let offsetHours = try number(index + 1..<index + 3, "zone hours")
            try expect(index + 3, ":", "in the zone offset")
            let offsetMins = try number(index + 4..<index + 6, "zone minutes")
            guard offsetHours < 24, offsetMins < 60 else { throw fail("zone offset out of range") }
            offsetMinutes = sign * (offsetHours * 60 + offsetMins)
            index += 6
        default:
            throw fail("expected a time zone (Z or ±HH:MM)")
        }
        guard index == chars.count else { throw fail("unexpected text after the time zone") }
        let days = CivilCalendar.days(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetMinutes * 60
        self.init(millisecondsSince1970: seconds * 1000 + millisecond)
        // A zone offset can move a time at the edge of year 0000 or 9999 out of the range the
        // text form carries; refuse it rather than read a time that cannot be written back.
        guard isRepresentable else { throw fail("outside years 0000-9999 in UTC") }
    }
}

/// `value` in decimal, zero-padded to `width` digits.
private func pad(_ value: Int64, _ width: Int) -> String {
    let text = String(value)
    return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
}
