import BluetideBase
import BluetideSupport

/// Packed BCD as the ring uses it for dates and times (`24 08 18` is 2024-08-18).
public enum COLMIBCD {
    /// Packs 0...99 into one BCD byte (values outside are clamped into 0...99).
    public static func encode(_ value: Int) -> UInt8 {
        let v = min(max(value, 0), 99)
        return UInt8((v / 10) << 4 | (v % 10))
    }

    /// Unpacks one BCD byte; a nibble above 9 throws, naming the field.
    public static func decode(_ byte: UInt8, _ field: String, at offset: Int? = nil) throws(DecodingError) -> Int {
        let high = Int(byte >> 4), low = Int(byte & 0x0F)
        guard high <= 9, low <= 9 else {
            throw .invalid(field, expected: "packed BCD (two digits 0-9)", found: "0x\([byte].hexString)", at: offset)
        }
        return high * 10 + low
    }

    /// Reads one BCD byte from `reader`.
    static func read(_ reader: inout ByteReader, _ field: String) throws(DecodingError) -> Int {
        let at = reader.offset
        return try decode(try reader.readUInt8(field), field, at: at)
    }
}

/// A calendar date and time of day in the ring's time base (no time zone: the ring keeps whatever
/// wall-clock time it was given; see ``COLMISetTime`` for Bluetide's convention).
public struct COLMIDateTime: Hashable, Sendable, Encodable, CustomStringConvertible {
    /// Full year, e.g. 2024.
    public var year: Int
    /// Month 1...12.
    public var month: Int
    /// Day of month 1...31.
    public var day: Int
    /// Hour 0...23.
    public var hour: Int
    /// Minute 0...59.
    public var minute: Int
    /// Second 0...59.
    public var second: Int

    public init(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) {
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
    }

    /// The civil date and time `seconds` after 1970-01-01 00:00:00 in the same time base.
    public init(secondsSince1970 seconds: Int64) {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds &- 86_399) / 86_400
        let secondOfDay = Int(seconds - days * 86_400)
        let (y, m, d) = CivilCalendar.date(fromDays: days)
        self.init(year: Int(truncatingIfNeeded: y), month: Int(m), day: Int(d), hour: secondOfDay / 3600, minute: secondOfDay / 60 % 60, second: secondOfDay % 60)
    }

    /// Seconds since 1970-01-01 00:00:00 in the same time base.
    public var secondsSince1970: Int64 {
        CivilCalendar.days(year: Int64(truncatingIfNeeded: year), month: Int64(truncatingIfNeeded: month), day: Int64(truncatingIfNeeded: day)) &* 86_400 &+ Int64(hour &* 3600 &+ minute &* 60 &+ second)
    }

    /// `2024-08-10 15:00:00`.
    public var description: String {
        func two(_ v: Int) -> String { v < 10 && v >= 0 ? "0\(v)" : "\(v)" }
        return "\(year)-\(two(month))-\(two(day)) \(two(hour)):\(two(minute)):\(two(second))"
    }

    /// `HH:MM` for minutes after midnight, e.g. `19:00`.
    public static func clock(minuteOfDay: Int) -> String {
        func two(_ v: Int) -> String { v < 10 && v >= 0 ? "0\(v)" : "\(v)" }
        return "\(two(minuteOfDay / 60)):\(two(minuteOfDay % 60))"
    }
}
