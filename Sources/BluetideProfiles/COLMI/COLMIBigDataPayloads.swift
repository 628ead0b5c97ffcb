import BluetideBase

/// A sleep stage in big-data sleep records.
public struct COLMISleepStage: RawRepresentable, Hashable, Sendable, Encodable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// 0: no data.
    public static let noData = Self(rawValue: 0)
    /// 1: error.
    public static let error = Self(rawValue: 1)
    /// 2: light sleep.
    public static let light = Self(rawValue: 2)
    /// 3: deep sleep.
    public static let deep = Self(rawValue: 3)
    /// 4: REM.
    public static let rem = Self(rawValue: 4)
    /// 5: awake.
    public static let awake = Self(rawValue: 5)

    public var description: String {
        ["no data", "error", "light", "deep", "REM", "awake"].indices.contains(Int(rawValue))
            ? ["no data", "error", "light", "deep", "REM", "awake"][Int(rawValue)] : "stage \(rawValue)"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}

/// One stretch of a single sleep stage.
public struct COLMISleepPeriod: Hashable, Sendable, Encodable {
    /// The stage.
    public var stage: COLMISleepStage
    /// Its length in minutes.
    public var minutes: UInt8

    public init(stage: COLMISleepStage, minutes: UInt8) {
        self.stage = stage
        self.minutes = minutes
    }
}

/// One night of big-data sleep: `daysAgo`, `len` (= 4 + 2·periods), `start` and `end` (u16 LE, minutes
/// after midnight; start > end means sleep began the previous evening), then (stage, minutes) pairs laid
/// end to end from `start`.
public struct COLMISleepDay: GATTCodable, Hashable, Sendable, Encodable {
    /// 0 = last night.
    public var daysAgo: UInt8
    /// Sleep start, minutes after midnight (of the previous day when greater than ``endMinute``).
    public var startMinute: UInt16
    /// Wake-up, minutes after midnight.
    public var endMinute: UInt16
    /// The stages in order.
    public var periods: [COLMISleepPeriod]

    public init(daysAgo: UInt8, startMinute: UInt16, endMinute: UInt16, periods: [COLMISleepPeriod]) {
        self.daysAgo = daysAgo
        self.startMinute = startMinute
        self.endMinute = endMinute
        self.periods = periods
    }

    /// Minutes over all periods.
    public var totalMinutes: Int { periods.reduce(0) { $0 + Int($1.minutes) } }

    /// Minutes in one stage.
    public func minutes(in stage: COLMISleepStage) -> Int {
        periods.filter { $0.stage == stage }.reduce(0) { $0 + Int($1.minutes) }
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        daysAgo = try reader.readUInt8("COLMI sleep.days ago")
        let lengthAt = reader.offset
        let length = try reader.readUInt8("COLMI sleep.record length")
        guard length >= 4, length % 2 == 0 else {
            throw .invalid("COLMI sleep.record length", expected: "4 + 2 × periods (even, ≥ 4)", found: "\(length)", at: lengthAt)
        }
        startMinute = try reader.read(UInt16.self, "COLMI sleep.start")
        endMinute = try reader.read(UInt16.self, "COLMI sleep.end")
        var periods: [COLMISleepPeriod] = []
        for _ in 0..<(Int(length) - 4) / 2 {
            let stage = COLMISleepStage(rawValue: try reader.readUInt8("COLMI sleep.stage"))
            periods.append(COLMISleepPeriod(stage: stage, minutes: try reader.readUInt8("COLMI sleep.minutes")))
        }
        self.periods = periods
    }

    /// Writes the record; more than 125 periods are cut to fit the one-byte length.
    public func encode(to writer: inout ByteWriter) {
        let kept = periods.prefix(125)
        writer.write(daysAgo)
        writer.write(UInt8(4 + 2 * kept.count))
        writer.write(startMinute)
        writer.write(endMinute)
        for p in kept { writer.write(p.stage.rawValue); writer.write(p.minutes) }
    }

    private enum CodingKeys: String, CodingKey { case daysAgo, startMinute, endMinute, start, end, totalMinutes, periods }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(daysAgo, forKey: .daysAgo)
        try c.encode(startMinute, forKey: .startMinute)
        try c.encode(endMinute, forKey: .endMinute)
        try c.encode(COLMIDateTime.clock(minuteOfDay: Int(startMinute)), forKey: .start)
        try c.encode(COLMIDateTime.clock(minuteOfDay: Int(endMinute)), forKey: .end)
        try c.encode(totalMinutes, forKey: .totalMinutes)
        try c.encode(periods, forKey: .periods)
    }
}

/// Big-data sleep payload (id 0x27): a day count then that many ``COLMISleepDay`` records.
/// An empty payload, or `00`, means nothing stored.
public struct COLMISleepHistory: GATTCodable, Hashable, Sendable, Encodable {
    /// The nights, as sent.
    public var days: [COLMISleepDay]

    public init(days: [COLMISleepDay]) { self.days = days }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        guard !reader.isAtEnd else {
            days = []
            return
        }
        let count = try reader.readUInt8("COLMI sleep.day count")
        var days: [COLMISleepDay] = []
        for _ in 0..<count { days.append(try COLMISleepDay(from: &reader)) }
        self.days = days
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(UInt8(clamping: days.count))
        for d in days.prefix(255) { d.encode(to: &writer) }
    }
}

/// One day of hourly SpO2 (big data id 0x2A): `daysAgo` then 24 × (min %, max %); 0/0 = no reading.
public struct COLMISpO2Day: GATTCodable, Hashable, Sendable, Encodable {
    /// 0 = today.
    public var daysAgo: UInt8
    /// Lowest SpO2 per hour 0...23, percent (0 = none).
    public var minimumPercentByHour: [UInt8]
    /// Highest SpO2 per hour 0...23, percent (0 = none).
    public var maximumPercentByHour: [UInt8]

    public init(daysAgo: UInt8, minimumPercentByHour: [UInt8], maximumPercentByHour: [UInt8]) {
        self.daysAgo = daysAgo
        self.minimumPercentByHour = minimumPercentByHour
        self.maximumPercentByHour = maximumPercentByHour
    }

    /// Per hour, round((min + max) / 2) as Gadgetbridge stores it; nil when there is no reading.
    public var averagePercentByHour: [Int?] {
        zip(minimumPercentByHour, maximumPercentByHour).map { (lo: UInt8, hi: UInt8) -> Int? in
            if lo == 0 && hi == 0 { return nil }
            let sum = Int(lo) + Int(hi)
            return (sum + 1) / 2
        }
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        daysAgo = try reader.readUInt8("COLMI SpO2.days ago")
        var lows: [UInt8] = [], highs: [UInt8] = []
        for hour in 0..<24 {
            lows.append(try reader.readUInt8("COLMI SpO2.hour \(hour) min"))
            highs.append(try reader.readUInt8("COLMI SpO2.hour \(hour) max"))
        }
        minimumPercentByHour = lows
        maximumPercentByHour = highs
    }

    /// Writes 49 bytes (hour arrays are cut or zero padded to 24).
    public func encode(to writer: inout ByteWriter) {
        writer.write(daysAgo)
        for hour in 0..<24 {
            writer.write(hour < minimumPercentByHour.count ? minimumPercentByHour[hour] : 0)
            writer.write(hour < maximumPercentByHour.count ? maximumPercentByHour[hour] : 0)
        }
    }
}

/// Big-data SpO2 payload: day blocks, oldest first, up to the block with daysAgo 0 (later bytes ignored).
public struct COLMISpO2History: GATTCodable, Hashable, Sendable, Encodable {
    /// The days, as sent.
    public var days: [COLMISpO2Day]

    public init(days: [COLMISpO2Day]) { self.days = days }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        var days: [COLMISpO2Day] = []
        while !reader.isAtEnd {
            let day = try COLMISpO2Day(from: &reader)
            days.append(day)
            if day.daysAgo == 0 { break }
        }
        self.days = days
    }

    public func encode(to writer: inout ByteWriter) {
        for d in days { d.encode(to: &writer) }
    }
}

/// One day of temperature (big data id 0x25): 50 bytes: `daysAgo`, an unknown byte (0x1E so far),
/// then 24 × (value at hh:00, value at hh:30). °C = raw / 10 + 20, raw read **unsigned**; 0 = none.
public struct COLMITemperatureDay: GATTCodable, Hashable, Sendable, Encodable {
    /// Bytes per day block.
    public static let size = 50

    /// 0 = today.
    public var daysAgo: UInt8
    /// The second byte (meaning unknown; 0x1E observed).
    public var unknown: UInt8
    /// Raw values per half hour from 00:00 (48; 0 = no reading).
    public var rawByHalfHour: [UInt8]

    public init(daysAgo: UInt8, unknown: UInt8 = 0x1E, rawByHalfHour: [UInt8]) {
        self.daysAgo = daysAgo
        self.unknown = unknown
        self.rawByHalfHour = rawByHalfHour
    }

    /// Degrees Celsius for a raw value; nil for 0 (no reading).
    public static func celsius(raw: UInt8) -> Double? { raw == 0 ? nil : Double(raw) / 10 + 20 }

    /// Raw value for a temperature in °C (20.1...45.5), rounded to 0.1 °C; nil outside the range.
    public static func raw(celsius: Double) -> UInt8? {
        let r = ((celsius - 20) * 10).rounded()
        return r >= 1 && r <= 255 ? UInt8(r) : nil
    }

    /// Degrees Celsius per half hour (nil = no reading).
    public var celsiusByHalfHour: [Double?] { rawByHalfHour.map(Self.celsius(raw:)) }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        daysAgo = try reader.readUInt8("COLMI temperature.days ago")
        unknown = try reader.readUInt8("COLMI temperature.unknown")
        rawByHalfHour = try reader.readBytes(48, "COLMI temperature.values")
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(daysAgo); writer.write(unknown)
        for i in 0..<48 { writer.write(i < rawByHalfHour.count ? rawByHalfHour[i] : 0) }
    }

    private enum CodingKeys: String, CodingKey { case daysAgo, unknown, rawByHalfHour, celsiusByHalfHour }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(daysAgo, forKey: .daysAgo)
        try c.encode(unknown, forKey: .unknown)
        try c.encode(rawByHalfHour, forKey: .rawByHalfHour)
        try c.encode(celsiusByHalfHour, forKey: .celsiusByHalfHour)
    }
}

/// Big-data temperature payload: 50-byte day blocks. A payload shorter than one block (e.g. a status
/// byte) holds no days, as Gadgetbridge reads it; a partial block after whole ones throws truncated.
public struct COLMITemperatureHistory: GATTCodable, Hashable, Sendable, Encodable {
    /// The days, as sent.
    public var days: [COLMITemperatureDay]

    public init(days: [COLMITemperatureDay]) { self.days = days }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        var days: [COLMITemperatureDay] = []
        if reader.remaining >= COLMITemperatureDay.size {
            while !reader.isAtEnd { days.append(try COLMITemperatureDay(from: &reader)) }
        } else {
            _ = reader.readRemaining()
        }
        self.days = days
    }

    public func encode(to writer: inout ByteWriter) {
        for d in days { d.encode(to: &writer) }
    }
}

/// A big-data frame's payload, decoded by data id.
public enum COLMIBigDataPayload: Hashable, Sendable, Encodable {
    /// id 0x27.
    case sleep(COLMISleepHistory)
    /// id 0x2A.
    case spo2(COLMISpO2History)
    /// id 0x25.
    case temperature(COLMITemperatureHistory)
    /// OTA ids 0x01...0x05 with a one-byte status (0 OK, 2 failure).
    case otaStatus(step: UInt8, status: UInt8)
    /// Anything else (requests, undocumented ids), the payload as is.
    case other(dataID: UInt8, payload: [UInt8])

    /// Decodes a reply frame's payload (frames are read as the ring's replies, not host requests).
    public init(frame: COLMIBigDataFrame) throws(DecodingError) {
        do {
            switch frame.dataID {
            case COLMIBigDataID.sleep: self = .sleep(try COLMISleepHistory(exactly: frame.payload))
            case COLMIBigDataID.spo2: self = .spo2(try COLMISpO2History(bytes: frame.payload))
            case COLMIBigDataID.temperature: self = .temperature(try COLMITemperatureHistory(exactly: frame.payload))
            case 0x01...0x05 where frame.payload.count == 1:
                self = .otaStatus(step: frame.dataID, status: frame.payload[0])
            default: self = .other(dataID: frame.dataID, payload: frame.payload)
            }
        } catch {
            var shifted = error
            shifted.offset = error.offset.map { $0 + COLMIBigDataFrame.headerSize }
            throw shifted
        }
    }

    /// The frame the ring sends for this payload.
    public var frame: COLMIBigDataFrame {
        switch self {
        case let .sleep(s): return COLMIBigDataFrame(dataID: COLMIBigDataID.sleep, truncating: s.bytes)
        case let .spo2(s): return COLMIBigDataFrame(dataID: COLMIBigDataID.spo2, truncating: s.bytes)
        case let .temperature(t): return COLMIBigDataFrame(dataID: COLMIBigDataID.temperature, truncating: t.bytes)
        case let .otaStatus(step, status): return COLMIBigDataFrame(dataID: step, truncating: [status])
        case let .other(id, payload): return COLMIBigDataFrame(dataID: id, truncating: payload)
        }
    }

    /// One readable line.
    public var summary: String {
        switch self {
        case let .sleep(s):
            guard !s.days.isEmpty else { return "sleep: no data" }
            return "sleep: " + s.days.map { d in
                "\(d.daysAgo) days ago \(COLMIDateTime.clock(minuteOfDay: Int(d.startMinute)))-\(COLMIDateTime.clock(minuteOfDay: Int(d.endMinute))), \(d.totalMinutes) min (deep \(d.minutes(in: .deep)), light \(d.minutes(in: .light)), REM \(d.minutes(in: .rem)), awake \(d.minutes(in: .awake)))"
            }.joined(separator: "; ")
        case let .spo2(s): return s.days.isEmpty ? "SpO2: no data" : "SpO2: \(s.days.count) days"
        case let .temperature(t): return t.days.isEmpty ? "temperature: no data" : "temperature: \(t.days.count) days"
        case let .otaStatus(step, status): return "OTA step \(step): status \(status)\(status == 0 ? " (ok)" : " (failure)")"
        case let .other(id, payload): return "big data \(COLMIBigDataID.name(id)): \(payload.count) bytes"
        }
    }

    public func encode(to encoder: any Encoder) throws {
        struct OTA: Encodable { let step: UInt8; let status: UInt8 }
        struct Other: Encodable { let dataID: UInt8; let payloadHex: String }
        switch self {
        case let .sleep(v): try COLMITaggedEncoding.encode(encoder, kind: "sleep", value: v)
        case let .spo2(v): try COLMITaggedEncoding.encode(encoder, kind: "spo2", value: v)
        case let .temperature(v): try COLMITaggedEncoding.encode(encoder, kind: "temperature", value: v)
        case let .otaStatus(s, st): try COLMITaggedEncoding.encode(encoder, kind: "otaStatus", value: OTA(step: s, status: st))
        case let .other(id, p): try COLMITaggedEncoding.encode(encoder, kind: "other", value: Other(dataID: id, payloadHex: p.hexString))
        }
    }
}
