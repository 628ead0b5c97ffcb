import BluetideBase

/// Set-time request (opcode 0x01): the ring's wall clock, packed BCD.
///
/// **Time-zone convention.** The ring has no time zone; it keeps whatever wall-clock time it is
/// given, and its history (HR log slots, sport detail dates) comes back in that time base.
/// Bluetide sets the ring to **UTC** by default (as tahnok's client does), so
/// ``init(secondsSince1970:utcOffsetSeconds:language:)`` with offset 0 gives UTC and history
/// timestamps are plain Unix seconds. To keep local time on the ring (as Gadgetbridge does), pass
/// the zone's offset: the ring time base is then `unix + offset`, and the same offset must be used
/// for history requests (``COLMIRequest/heartRateLog(dayContaining:utcOffsetSeconds:)``).
///
/// Payload: `[1]` year − 2000, `[2]` month, `[3]` day, `[4]` hour, `[5]` minute, `[6]` second (all
/// BCD), `[7]` language (1 English, 0 Chinese).
public struct COLMISetTime: GATTCodable, Hashable, Sendable, Encodable {
    /// The wall-clock time to set, in the ring's time base; year 2000...2099.
    public let dateTime: COLMIDateTime
    /// Display language: 1 English (Bluetide's default), 0 Chinese.
    public let language: UInt8

    /// English display language.
    public static let english: UInt8 = 1
    /// Chinese display language.
    public static let chinese: UInt8 = 0

    /// Validates the fields (year 2000...2099, month 1...12, day 1...31, hour 0...23, minute and second 0...59).
    public init(_ dateTime: COLMIDateTime, language: UInt8 = COLMISetTime.english) throws(COLMIEncodingError) {
        let checks: [(String, Int, ClosedRange<Int>)] = [
            ("year", dateTime.year, 2000...2099), ("month", dateTime.month, 1...12), ("day", dateTime.day, 1...31),
            ("hour", dateTime.hour, 0...23), ("minute", dateTime.minute, 0...59), ("second", dateTime.second, 0...59),
        ]
        for (name, value, range) in checks where !range.contains(value) {
            throw COLMIEncodingError(
                field: "COLMI set time.\(name)", expected: "\(range.lowerBound)...\(range.upperBound)", found: "\(value)")
        }
        self.dateTime = dateTime
        self.language = language
    }

    /// The time `secondsSince1970` (Unix seconds, UTC) shifted by `utcOffsetSeconds` (0 keeps the ring on UTC).
    public init(secondsSince1970: Int64, utcOffsetSeconds: Int = 0, language: UInt8 = COLMISetTime.english)
        throws(COLMIEncodingError)
    {
        try self.init(COLMIDateTime(secondsSince1970: secondsSince1970 &+ Int64(utcOffsetSeconds)), language: language)
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        let year = try COLMIBCD.read(&reader, "COLMI set time.year")
        let month = try COLMIBCD.read(&reader, "COLMI set time.month")
        let day = try COLMIBCD.read(&reader, "COLMI set time.day")
        let hour = try COLMIBCD.read(&reader, "COLMI set time.hour")
        let minute = try COLMIBCD.read(&reader, "COLMI set time.minute")
        let second = try COLMIBCD.read(&reader, "COLMI set time.second")
        language = try reader.readUInt8("COLMI set time.language")
        dateTime = COLMIDateTime(year: 2000 + year, month: month, day: day, hour: hour, minute: minute, second: second)
    }

    public func encode(to writer: inout ByteWriter) {
        for value in [dateTime.year - 2000, dateTime.month, dateTime.day, dateTime.hour, dateTime.minute, dateTime.second] {
            writer.write(COLMIBCD.encode(value))
        }
        writer.write(language)
    }
}

/// The set-time reply (opcode 0x01 from the ring): a map of what the ring supports.
///
/// Layout (byte indexes in the packet): `[1]` temperature, `[2]` "plate", `[3]` menstruation,
/// `[4]` flags1, `[5-6]` screen width, `[7-8]` screen height (u16 LE; byte order unverified),
/// `[9]` new sleep protocol, `[10]` max watch faces, `[11]` flags2, `[12]` flags3,
/// `[13]` max contacts (0 → 20, else ×10), `[14]` flags4.
public struct COLMICapabilities: GATTCodable, Hashable, Sendable, Encodable {
    /// Byte 1: 1 = temperature sensor present.
    public var temperatureRaw: UInt8
    /// Byte 2: "plate" (meaning unknown).
    public var plate: UInt8
    /// Byte 3: menstruation tracking.
    public var menstruationRaw: UInt8
    /// Byte 4 flags: b0 custom wallpaper, b1 SpO2, b2 blood pressure, b3 feature, b4 one-key check,
    /// b5 weather, b6 WeChat (0 means supported), b7 avatar.
    public var flags1: UInt8
    /// Bytes 5-6: screen width in pixels.
    public var screenWidth: UInt16
    /// Bytes 7-8: screen height in pixels.
    public var screenHeight: UInt16
    /// Byte 9: 1 = use big-data (V2) sleep; otherwise the legacy 0x44 command.
    public var newSleepProtocolRaw: UInt8
    /// Byte 10: maximum watch faces.
    public var maxWatchFaces: UInt8
    /// Byte 11 flags: b0 contacts, b1 lyrics, b2 album, b3 GPS, b4 JieLi music.
    public var flags2: UInt8
    /// Byte 12 flags: b0 manual HR, b1 e-card, b2 location, b4 music, b5 RTK MCU, b6 e-book, b7 blood sugar.
    public var flags3: UInt8
    /// Byte 13: contacts capacity code (0 means 20, otherwise ×10).
    public var maxContactsRaw: UInt8
    /// Byte 14 flags: b1 BP settings, b2 4G, b3 navigation picture, b4 stress, b5 HRV.
    public var flags4: UInt8

    public init(
        temperatureRaw: UInt8 = 0, plate: UInt8 = 0, menstruationRaw: UInt8 = 0, flags1: UInt8 = 0,
        screenWidth: UInt16 = 0, screenHeight: UInt16 = 0, newSleepProtocolRaw: UInt8 = 0, maxWatchFaces: UInt8 = 0,
        flags2: UInt8 = 0, flags3: UInt8 = 0, maxContactsRaw: UInt8 = 0, flags4: UInt8 = 0
    ) {
        self.temperatureRaw = temperatureRaw
        self.plate = plate
        self.menstruationRaw = menstruationRaw
        self.flags1 = flags1
        self.screenWidth = screenWidth
        self.screenHeight = screenHeight
        self.newSleepProtocolRaw = newSleepProtocolRaw
        self.maxWatchFaces = maxWatchFaces
        self.flags2 = flags2
        self.flags3 = flags3
        self.maxContactsRaw = maxContactsRaw
        self.flags4 = flags4
    }

    /// Temperature sensor present.
    public var supportsTemperature: Bool { temperatureRaw == 1 }
    /// SpO2 supported (flags1 b1).
    public var supportsSpO2: Bool { flags1 & 0x02 != 0 }
    /// Blood pressure supported (flags1 b2).
    public var supportsBloodPressure: Bool { flags1 & 0x04 != 0 }
    /// Weather supported (flags1 b5).
    public var supportsWeather: Bool { flags1 & 0x20 != 0 }
    /// Sleep history comes over big data (V2, id 0x27).
    public var usesNewSleepProtocol: Bool { newSleepProtocolRaw == 1 }
    /// Manual (on-demand) heart rate (flags3 b0).
    public var supportsManualHeartRate: Bool { flags3 & 0x01 != 0 }
    /// Blood sugar (flags3 b7).
    public var supportsBloodSugar: Bool { flags3 & 0x80 != 0 }
    /// Stress ("pressure") measurement (flags4 b4).
    public var supportsStress: Bool { flags4 & 0x10 != 0 }
    /// HRV measurement (flags4 b5).
    public var supportsHRV: Bool { flags4 & 0x20 != 0 }
    /// Contacts capacity: 20 when the byte is 0, else byte × 10.
    public var maxContacts: Int { maxContactsRaw == 0 ? 20 : Int(maxContactsRaw) * 10 }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        temperatureRaw = try reader.readUInt8("COLMI capabilities.temperature")
        plate = try reader.readUInt8("COLMI capabilities.plate")
        menstruationRaw = try reader.readUInt8("COLMI capabilities.menstruation")
        flags1 = try reader.readUInt8("COLMI capabilities.flags1")
        screenWidth = try reader.read(UInt16.self, "COLMI capabilities.screen width")
        screenHeight = try reader.read(UInt16.self, "COLMI capabilities.screen height")
        newSleepProtocolRaw = try reader.readUInt8("COLMI capabilities.new sleep protocol")
        maxWatchFaces = try reader.readUInt8("COLMI capabilities.max watch faces")
        flags2 = try reader.readUInt8("COLMI capabilities.flags2")
        flags3 = try reader.readUInt8("COLMI capabilities.flags3")
        maxContactsRaw = try reader.readUInt8("COLMI capabilities.max contacts")
        flags4 = try reader.readUInt8("COLMI capabilities.flags4")
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(temperatureRaw); writer.write(plate); writer.write(menstruationRaw); writer.write(flags1)
        writer.write(screenWidth); writer.write(screenHeight); writer.write(newSleepProtocolRaw)
        writer.write(maxWatchFaces); writer.write(flags2); writer.write(flags3); writer.write(maxContactsRaw)
        writer.write(flags4)
    }

    private enum CodingKeys: String, CodingKey {
        case temperatureRaw, plate, menstruationRaw, flags1, screenWidth, screenHeight, newSleepProtocolRaw
        case maxWatchFaces, flags2, flags3, maxContactsRaw, flags4
        case supportsTemperature, supportsSpO2, supportsBloodPressure, supportsWeather, usesNewSleepProtocol
        case supportsManualHeartRate, supportsBloodSugar, supportsStress, supportsHRV, maxContacts
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(temperatureRaw, forKey: .temperatureRaw); try c.encode(plate, forKey: .plate)
        try c.encode(menstruationRaw, forKey: .menstruationRaw); try c.encode(flags1, forKey: .flags1)
        try c.encode(screenWidth, forKey: .screenWidth); try c.encode(screenHeight, forKey: .screenHeight)
        try c.encode(newSleepProtocolRaw, forKey: .newSleepProtocolRaw); try c.encode(maxWatchFaces, forKey: .maxWatchFaces)
        try c.encode(flags2, forKey: .flags2); try c.encode(flags3, forKey: .flags3)
        try c.encode(maxContactsRaw, forKey: .maxContactsRaw); try c.encode(flags4, forKey: .flags4)
        try c.encode(supportsTemperature, forKey: .supportsTemperature); try c.encode(supportsSpO2, forKey: .supportsSpO2)
        try c.encode(supportsBloodPressure, forKey: .supportsBloodPressure); try c.encode(supportsWeather, forKey: .supportsWeather)
        try c.encode(usesNewSleepProtocol, forKey: .usesNewSleepProtocol)
        try c.encode(supportsManualHeartRate, forKey: .supportsManualHeartRate)
        try c.encode(supportsBloodSugar, forKey: .supportsBloodSugar); try c.encode(supportsStress, forKey: .supportsStress)
        try c.encode(supportsHRV, forKey: .supportsHRV); try c.encode(maxContacts, forKey: .maxContacts)
    }
}
