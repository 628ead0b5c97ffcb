import BluetideCharts
import Foundation
import GRDB

/// A day in the Gregorian calendar without time or time zone (a birth date, a weigh-in day).
///
/// Stored and exchanged as ISO-8601 text `YYYY-MM-DD`, so it sorts correctly as text in SQLite.
public struct CalendarDate: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// Year, e.g. 2026.
    public let year: Int
    /// Month 1...12.
    public let month: Int
    /// Day of month 1...31 (checked against the month's length).
    public let day: Int

    /// Builds a date, or nil when the day does not exist (e.g. 2026-02-30) or the year is outside 1...9999.
    public init?(year: Int, month: Int, day: Int) {
        guard (1...9999).contains(year), (1...12).contains(month), day >= 1,
              day <= CalendarDate.daysIn(month: month, year: year) else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// Parses `YYYY-MM-DD`; nil for anything else.
    public init?(iso text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
              let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]) else { return nil }
        self.init(year: y, month: m, day: d)
    }

    /// The UTC day containing `date`.
    public init(utcDayOf date: Date) {
        let parts = UTCCalendar.components(of: date)
        // A Date's UTC components always form a valid day; the fallback only guards against out-of-range years.
        self = CalendarDate(year: parts.year, month: parts.month, day: parts.day)
            ?? CalendarDate(year: 1970, month: 1, day: 1)!
    }

    /// `YYYY-MM-DD`.
    public var iso: String {
        UTCCalendar.fourDigits(year) + "-" + UTCCalendar.twoDigits(month) + "-" + UTCCalendar.twoDigits(day)
    }

    /// Same as ``iso``.
    public var description: String { iso }

    /// Midnight UTC at the start of this day.
    public var startOfDayUTC: Date {
        Date(timeIntervalSince1970: Double(UTCCalendar.daysFromEpoch(year: year, month: month, day: day)) * 86_400)
    }

    /// Earlier day first.
    public static func < (a: CalendarDate, b: CalendarDate) -> Bool {
        (a.year, a.month, a.day) < (b.year, b.month, b.day)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Decodes `YYYY-MM-DD` text.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let date = CalendarDate(iso: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "expected YYYY-MM-DD, found \(text)"))
        }
        self = date
    }

    /// Encodes as `YYYY-MM-DD` text.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(iso)
    }
}

extension CalendarDate: DatabaseValueConvertible {
    /// Stored as `YYYY-MM-DD` text.
    public var databaseValue: DatabaseValue { iso.databaseValue }

    /// Reads `YYYY-MM-DD` text; nil for anything else.
    public static func fromDatabaseValue(_ dbValue: DatabaseValue) -> CalendarDate? {
        String.fromDatabaseValue(dbValue).flatMap(CalendarDate.init(iso:))
    }
}
