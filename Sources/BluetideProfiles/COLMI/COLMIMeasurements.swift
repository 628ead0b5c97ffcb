import BluetideBase

/// Battery reply (opcode 0x03; also pushed as device notification `73 0C`): `[1]` level %, `[2]` charging.
public struct COLMIBattery: GATTCodable, Hashable, Sendable, Encodable {
    /// Charge level in percent (0...100).
    public var levelPercent: UInt8
    /// True while on the charger (byte value 1).
    public var isCharging: Bool

    public init(levelPercent: UInt8, isCharging: Bool) {
        self.levelPercent = levelPercent
        self.isCharging = isCharging
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        levelPercent = try reader.readUInt8("COLMI battery.level")
        isCharging = try reader.readUInt8("COLMI battery.charging") == 1
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(levelPercent)
        writer.write(UInt8(isCharging ? 1 : 0))
    }
}

/// What a real-time measurement (0x69/0x6A) measures. An open set: unknown codes are kept.
public struct COLMIRealTimeType: RawRepresentable, Hashable, Sendable, Encodable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Heart rate (value in bpm).
    public static let heartRate = Self(rawValue: 1)
    /// Blood pressure.
    public static let bloodPressure = Self(rawValue: 2)
    /// Blood oxygen (value in %).
    public static let spo2 = Self(rawValue: 3)
    /// Fatigue.
    public static let fatigue = Self(rawValue: 4)
    /// Health check.
    public static let healthCheck = Self(rawValue: 5)
    /// Real-time heart rate.
    public static let realTimeHeartRate = Self(rawValue: 6)
    /// ECG.
    public static let ecg = Self(rawValue: 7)
    /// Pressure (stress).
    public static let stress = Self(rawValue: 8)
    /// Blood sugar.
    public static let bloodSugar = Self(rawValue: 9)
    /// Heart-rate variability.
    public static let hrv = Self(rawValue: 10)

    public var description: String {
        let names = ["", "HR", "blood pressure", "SpO2", "fatigue", "health check", "real-time HR", "ECG", "stress",
                     "blood sugar", "HRV"]
        return Int(rawValue) < names.count && rawValue > 0 ? names[Int(rawValue)] : "type \(rawValue)"
    }

    /// Unit of the reading's value: `bpm`, `%`, or empty when unknown.
    public var unit: String { self == .heartRate || self == .realTimeHeartRate ? "bpm" : self == .spo2 ? "%" : "" }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}

/// Action byte of a real-time start/continue request (`69 <type> <action>`).
public struct COLMIRealTimeAction: RawRepresentable, Hashable, Sendable, Encodable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// Gadgetbridge's one-shot form (`69 01 00`).
    public static let oneShot = Self(rawValue: 0)
    /// Start measuring.
    public static let start = Self(rawValue: 1)
    /// Pause.
    public static let pause = Self(rawValue: 2)
    /// Keep a running measurement alive.
    public static let `continue` = Self(rawValue: 3)
    /// Stop (the 0x6A stop request is the usual way).
    public static let stop = Self(rawValue: 4)
}

/// One real-time reading (`69 <type> <err> <value>`): sent about once per measurement step.
public struct COLMIRealTimeReading: GATTCodable, Hashable, Sendable, Encodable {
    /// What is measured.
    public var type: COLMIRealTimeType
    /// 0 OK; 1 not on finger / worn incorrectly; 2 temporary error or missing data; others are errors too.
    public var errorCode: UInt8
    /// The value: bpm for heart rate, % for SpO2; 0 while the ring is still measuring.
    public var value: UInt8

    public init(type: COLMIRealTimeType, errorCode: UInt8 = 0, value: UInt8) {
        self.type = type
        self.errorCode = errorCode
        self.value = value
    }

    /// True when the error byte is non-zero.
    public var isError: Bool { errorCode != 0 }
    /// True for a valid, non-zero value (a zero means "please wait").
    public var hasValue: Bool { errorCode == 0 && value != 0 }

    /// A readable meaning of ``errorCode``.
    public var errorDescription: String? {
        switch errorCode {
        case 0: return nil
        case 1: return "not on finger or worn incorrectly"
        case 2: return "temporary error or missing data"
        default: return "error code \(errorCode)"
        }
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        type = COLMIRealTimeType(rawValue: try reader.readUInt8("COLMI real-time reading.type"))
        errorCode = try reader.readUInt8("COLMI real-time reading.error")
        value = try reader.readUInt8("COLMI real-time reading.value")
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(type.rawValue); writer.write(errorCode); writer.write(value)
    }

    private enum CodingKeys: String, CodingKey { case type, errorCode, error, value, unit }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(type, forKey: .type)
        try c.encode(errorCode, forKey: .errorCode)
        try c.encodeIfPresent(errorDescription, forKey: .error)
        try c.encode(value, forKey: .value)
        try c.encode(type.unit, forKey: .unit)
    }
}

/// HR-log settings reply (opcode 0x16): `[1]` action (1 read, 2 write echo), `[2]` enabled (1 on,
/// 2 off), `[3]` interval in minutes.
public struct COLMIHeartRateLogSettings: GATTCodable, Hashable, Sendable, Encodable {
    /// 1 for a read reply, 2 for the echo of a write.
    public var action: UInt8
    /// Whether the ring samples heart rate by itself (wire value 1; 2 means off).
    public var enabled: Bool
    /// Sampling interval in minutes.
    public var intervalMinutes: UInt8

    public init(action: UInt8 = 1, enabled: Bool, intervalMinutes: UInt8) {
        self.action = action
        self.enabled = enabled
        self.intervalMinutes = intervalMinutes
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        action = try reader.readUInt8("COLMI HR-log settings.action")
        enabled = try reader.readUInt8("COLMI HR-log settings.enabled") == 1
        intervalMinutes = try reader.readUInt8("COLMI HR-log settings.interval")
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(action); writer.write(UInt8(enabled ? 1 : 2)); writer.write(intervalMinutes)
    }
}

/// HR-log settings write (`16 02 <en> <interval> <hrStart> <tooLow> <tooHigh> <alarm>`). The full
/// seven-field form is what newer firmware needs and is safe on the R02; with the last four fields
/// zero it is byte-identical to the short form.
public struct COLMIHeartRateLogSettingsWrite: GATTCodable, Hashable, Sendable, Encodable {
    /// Turn automatic sampling on (1) or off (2).
    public var enabled: Bool
    /// Sampling interval in minutes (clients use 5...60, multiples of 5).
    public var intervalMinutes: UInt8
    /// Newer-firmware field "hrStart" (0 is fine).
    public var heartRateStart: UInt8
    /// Low-HR alarm threshold in bpm (0 = unset).
    public var tooLowBPM: UInt8
    /// High-HR alarm threshold in bpm (0 = unset).
    public var tooHighBPM: UInt8
    /// Alarm switch (0 = off).
    public var alarmSwitch: UInt8

    public init(
        enabled: Bool, intervalMinutes: UInt8, heartRateStart: UInt8 = 0, tooLowBPM: UInt8 = 0, tooHighBPM: UInt8 = 0,
        alarmSwitch: UInt8 = 0
    ) {
        self.enabled = enabled
        self.intervalMinutes = intervalMinutes
        self.heartRateStart = heartRateStart
        self.tooLowBPM = tooLowBPM
        self.tooHighBPM = tooHighBPM
        self.alarmSwitch = alarmSwitch
    }

    /// Reads from the byte after the action byte (`02`).
    public init(from reader: inout ByteReader) throws(DecodingError) {
        enabled = try reader.readUInt8("COLMI HR-log settings write.enabled") == 1
        intervalMinutes = try reader.readUInt8("COLMI HR-log settings write.interval")
        heartRateStart = try reader.readUInt8("COLMI HR-log settings write.hrStart")
        tooLowBPM = try reader.readUInt8("COLMI HR-log settings write.too low")
        tooHighBPM = try reader.readUInt8("COLMI HR-log settings write.too high")
        alarmSwitch = try reader.readUInt8("COLMI HR-log settings write.alarm switch")
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(UInt8(enabled ? 1 : 2)); writer.write(intervalMinutes); writer.write(heartRateStart)
        writer.write(tooLowBPM); writer.write(tooHighBPM); writer.write(alarmSwitch)
    }
}

/// Goals reply (opcode 0x21): `[1]` action, `[2..4]` steps, `[5..7]` calories, `[8..10]` distance
/// (uint24 LE each), `[11..12]` sport minutes, `[13..14]` sleep minutes (u16 LE).
public struct COLMIGoals: GATTCodable, Hashable, Sendable, Encodable {
    /// Action byte (1 = read reply).
    public var action: UInt8
    /// Daily step goal.
    public var steps: UInt32
    /// Daily calorie goal (unit as the ring keeps it, probably kcal).
    public var calories: UInt32
    /// Daily distance goal in metres.
    public var distanceMeters: UInt32
    /// Daily sport goal in minutes.
    public var sportMinutes: UInt16
    /// Nightly sleep goal in minutes.
    public var sleepMinutes: UInt16

    public init(action: UInt8 = 1, steps: UInt32, calories: UInt32, distanceMeters: UInt32, sportMinutes: UInt16, sleepMinutes: UInt16) {
        self.action = action
        self.steps = steps
        self.calories = calories
        self.distanceMeters = distanceMeters
        self.sportMinutes = sportMinutes
        self.sleepMinutes = sleepMinutes
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        action = try reader.readUInt8("COLMI goals.action")
        steps = try reader.readUInt24("COLMI goals.steps")
        calories = try reader.readUInt24("COLMI goals.calories")
        distanceMeters = try reader.readUInt24("COLMI goals.distance")
        sportMinutes = try reader.read(UInt16.self, "COLMI goals.sport minutes")
        sleepMinutes = try reader.read(UInt16.self, "COLMI goals.sleep minutes")
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(action); writer.writeUInt24(steps); writer.writeUInt24(calories); writer.writeUInt24(distanceMeters)
        writer.write(sportMinutes); writer.write(sleepMinutes)
    }
}

/// Which automatic measurement a toggle command controls; the value is the opcode.
public enum COLMIAutoMeasurementKind: UInt8, CaseIterable, Hashable, Sendable, Encodable {
    /// 0x2C automatic SpO2.
    case spo2 = 0x2C
    /// 0x36 automatic stress.
    case stress = 0x36
    /// 0x38 automatic HRV.
    case hrv = 0x38
    /// 0x3A automatic temperature (its packets carry an extra `03` before the action byte).
    case temperature = 0x3A
}

/// Reply to an automatic-measurement read or write: `op <action> <enabled>`, or for temperature
/// `3A 03 <action> <enabled>`.
public struct COLMIAutoMeasurementSetting: Hashable, Sendable, Encodable {
    /// Which measurement.
    public var kind: COLMIAutoMeasurementKind
    /// 1 read, 2 write.
    public var action: UInt8
    /// Whether automatic measurement is on.
    public var enabled: Bool

    public init(kind: COLMIAutoMeasurementKind, action: UInt8 = 1, enabled: Bool) {
        self.kind = kind
        self.action = action
        self.enabled = enabled
    }

    /// Decodes a packet whose opcode is one of ``COLMIAutoMeasurementKind``; nil for other opcodes.
    public init?(packet: COLMIPacket) {
        guard let kind = COLMIAutoMeasurementKind(rawValue: packet.opcode) else { return nil }
        self.kind = kind
        if kind == .temperature {
            action = packet[2]
            enabled = packet[3] == 1
        } else {
            action = packet[1]
            enabled = packet[2] == 1
        }
    }

    /// The packet the ring sends.
    public var packet: COLMIPacket {
        let body: [UInt8] = [action, enabled ? 1 : 0]
        return COLMIPacket(opcode: kind.rawValue, truncating: kind == .temperature ? [0x03] + body : body)
    }
}

/// Camera / gesture events the ring sends (`02 <code>`): 1 camera UI entered, 2 take photo, 3 finished.
public struct COLMICameraEvent: RawRepresentable, GATTCodable, Hashable, Sendable, Encodable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// Camera UI entered.
    public static let entered = Self(rawValue: 1)
    /// The wearer gestured "take a photo".
    public static let takePhoto = Self(rawValue: 2)
    /// Camera mode finished.
    public static let finished = Self(rawValue: 3)

    public init(from reader: inout ByteReader) throws(DecodingError) {
        rawValue = try reader.readUInt8("COLMI camera.event")
    }
    public func encode(to writer: inout ByteWriter) { writer.write(rawValue) }
}

/// Live activity totals for today (device notification `73 12`): three uint24 **big-endian** values.
public struct COLMILiveActivity: GATTCodable, Hashable, Sendable, Encodable {
    /// Steps today.
    public var steps: UInt32
    /// Calories as sent (unit unsettled: Gadgetbridge divides by 10 for kcal, atc1441 by 1000).
    public var caloriesRaw: UInt32
    /// Distance today in metres.
    public var distanceMeters: UInt32

    public init(steps: UInt32, caloriesRaw: UInt32, distanceMeters: UInt32) {
        self.steps = steps
        self.caloriesRaw = caloriesRaw
        self.distanceMeters = distanceMeters
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        steps = try reader.readUInt24("COLMI live activity.steps", .big)
        caloriesRaw = try reader.readUInt24("COLMI live activity.calories", .big)
        distanceMeters = try reader.readUInt24("COLMI live activity.distance", .big)
    }

    public func encode(to writer: inout ByteWriter) {
        writer.writeUInt24(steps, .big); writer.writeUInt24(caloriesRaw, .big); writer.writeUInt24(distanceMeters, .big)
    }
}

/// Unsolicited device notification (opcode 0x73), selected by byte 1.
public enum COLMIDeviceNotification: Hashable, Sendable, Encodable {
    /// `73 0C <level> <charging>`: battery update.
    case battery(COLMIBattery)
    /// `73 12 …`: live activity totals for today.
    case liveActivity(COLMILiveActivity)
    /// Any other subtype (new HR/SpO2/step data available, …) with bytes 2...14.
    case event(subtype: UInt8, data: [UInt8])

    /// Subtype byte for a battery update.
    public static let batterySubtype: UInt8 = 0x0C
    /// Subtype byte for live activity.
    public static let liveActivitySubtype: UInt8 = 0x12

    /// Meaning of a subtype byte, e.g. `new HR log data`.
    public static func name(ofSubtype subtype: UInt8) -> String {
        switch subtype {
        case 0x01: return "new HR log data"
        case 0x02: return "blood pressure"
        case 0x03: return "new SpO2 data"
        case 0x04: return "new step data"
        case 0x05: return "temperature"
        case 0x06: return "today's sport"
        case 0x07: return "sport ended"
        case 0x0C: return "battery"
        case 0x0D: return "blood sugar"
        case 0x10: return "target-setting response"
        case 0x12: return "live activity"
        default: return "subtype 0x\([subtype].hexString)"
        }
    }

    /// Decodes bytes 1...14 of a 0x73 packet.
    public init(payload: [UInt8]) throws(DecodingError) {
        var reader = ByteReader(payload)
        let subtype = try reader.readUInt8("COLMI device notification.subtype")
        switch subtype {
        case Self.batterySubtype: self = .battery(try COLMIBattery(from: &reader))
        case Self.liveActivitySubtype: self = .liveActivity(try COLMILiveActivity(from: &reader))
        default: self = .event(subtype: subtype, data: reader.readRemaining())
        }
    }

    /// Bytes 1...14 (before padding).
    public var payload: [UInt8] {
        switch self {
        case let .battery(b): return [Self.batterySubtype] + b.bytes
        case let .liveActivity(a): return [Self.liveActivitySubtype] + a.bytes
        case let .event(subtype, data): return [subtype] + data
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case let .battery(b): try COLMITaggedEncoding.encode(encoder, kind: "battery", value: b)
        case let .liveActivity(a): try COLMITaggedEncoding.encode(encoder, kind: "liveActivity", value: a)
        case let .event(subtype, data):
            struct Event: Encodable { let subtype: UInt8; let meaning: String; let dataHex: String }
            try COLMITaggedEncoding.encode(
                encoder, kind: "event",
                value: Event(subtype: subtype, meaning: Self.name(ofSubtype: subtype), dataHex: data.hexString))
        }
    }
}

/// One sample of the raw sensor stream (opcode 0xA1), selected by byte 1. Values are big-endian.
public enum COLMIRawSensorSample: Hashable, Sendable, Encodable {
    /// `A1 01`: SpO2 raw: `[2..3]` raw (BE), `[5]` max, `[7]` min, `[9]` diff.
    case spo2(raw: UInt16, max: UInt8, min: UInt8, diff: UInt8)
    /// `A1 02`: PPG: `[2..3]` raw, `[4..5]` max, `[6..7]` min, `[8..9]` diff (u16 BE).
    case ppg(raw: UInt16, max: UInt16, min: UInt16, diff: UInt16)
    /// `A1 03`: accelerometer: three 12-bit values `(hi << 4) | (lo & 0x0F)` from byte pairs
    /// [2,3], [4,5], [6,7], kept unsigned (axis naming differs between sources; see ``signed12``).
    case accelerometer(first: UInt16, second: UInt16, third: UInt16)
    /// Another subtype, with bytes 2...14.
    case other(subtype: UInt8, data: [UInt8])

    /// A 12-bit two's complement reading (subtract 4096 when bit 11 is set; the STK8321's format).
    public static func signed12(_ raw: UInt16) -> Int16 {
        let v = Int16(raw & 0x0FFF)
        return v & 0x0800 != 0 ? v - 4096 : v
    }

    /// Decodes bytes 1...14 of a 0xA1 packet (always 14 bytes in a packet; shorter input throws truncated).
    public init(payload: [UInt8]) throws(DecodingError) {
        var r = ByteReader(payload)
        let subtype = try r.readUInt8("COLMI raw sensor.subtype")
        switch subtype {
        case 1:
            let raw = try r.read(UInt16.self, "COLMI raw SpO2.raw", .big)
            try r.skip(1, "COLMI raw SpO2.reserved")
            let max = try r.readUInt8("COLMI raw SpO2.max")
            try r.skip(1, "COLMI raw SpO2.reserved")
            let min = try r.readUInt8("COLMI raw SpO2.min")
            try r.skip(1, "COLMI raw SpO2.reserved")
            let diff = try r.readUInt8("COLMI raw SpO2.diff")
            self = .spo2(raw: raw, max: max, min: min, diff: diff)
        case 2:
            self = .ppg(
                raw: try r.read(UInt16.self, "COLMI raw PPG.raw", .big), max: try r.read(UInt16.self, "COLMI raw PPG.max", .big),
                min: try r.read(UInt16.self, "COLMI raw PPG.min", .big), diff: try r.read(UInt16.self, "COLMI raw PPG.diff", .big))
        case 3:
            var values: [UInt16] = []
            for axis in ["first", "second", "third"] {
                let hi = try r.readUInt8("COLMI raw accelerometer.\(axis) high")
                let lo = try r.readUInt8("COLMI raw accelerometer.\(axis) low")
                values.append(UInt16(hi) << 4 | UInt16(lo & 0x0F))
            }
            self = .accelerometer(first: values[0], second: values[1], third: values[2])
        default:
            self = .other(subtype: subtype, data: r.readRemaining())
        }
    }

    /// Bytes 1...14 (before padding).
    public var payload: [UInt8] {
        var w = ByteWriter()
        switch self {
        case let .spo2(raw, max, min, diff):
            w.write(UInt8(1)); w.write(raw, .big); w.write(UInt8(0)); w.write(max); w.write(UInt8(0)); w.write(min)
            w.write(UInt8(0)); w.write(diff)
        case let .ppg(raw, max, min, diff):
            w.write(UInt8(2)); w.write(raw, .big); w.write(max, .big); w.write(min, .big); w.write(diff, .big)
        case let .accelerometer(a, b, c):
            w.write(UInt8(3))
            for v in [a, b, c] { w.write(UInt8(truncatingIfNeeded: (v & 0x0FFF) >> 4)); w.write(UInt8(v & 0x0F)) }
        case let .other(subtype, data):
            w.write(subtype); w.write(bytes: data)
        }
        return w.bytes
    }

    public func encode(to encoder: any Encoder) throws {
        struct SpO2: Encodable { let raw: UInt16; let max: UInt8; let min: UInt8; let diff: UInt8 }
        struct PPG: Encodable { let raw: UInt16; let max: UInt16; let min: UInt16; let diff: UInt16 }
        struct Accel: Encodable { let raw12: [UInt16]; let signed12: [Int16] }
        struct Other: Encodable { let subtype: UInt8; let dataHex: String }
        switch self {
        case let .spo2(raw, max, min, diff):
            try COLMITaggedEncoding.encode(encoder, kind: "spo2", value: SpO2(raw: raw, max: max, min: min, diff: diff))
        case let .ppg(raw, max, min, diff):
            try COLMITaggedEncoding.encode(encoder, kind: "ppg", value: PPG(raw: raw, max: max, min: min, diff: diff))
        case let .accelerometer(a, b, c):
            try COLMITaggedEncoding.encode(
                encoder, kind: "accelerometer", value: Accel(raw12: [a, b, c], signed12: [a, b, c].map(Self.signed12)))
        case let .other(subtype, data):
            try COLMITaggedEncoding.encode(encoder, kind: "other", value: Other(subtype: subtype, dataHex: data.hexString))
        }
    }
}
