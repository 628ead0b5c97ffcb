import BluetideBase

/// Phone name request payload (opcode 0x04): `[1]` client major, `[2]` client minor, `[3..]` ASCII name (≤ 12 bytes).
public struct COLMIPhoneName: GATTCodable, Hashable, Sendable, Encodable {
    /// Client app major version (Gadgetbridge sends 2, imitating QRing 2.10).
    public let majorVersion: UInt8
    /// Client app minor version.
    public let minorVersion: UInt8
    /// Phone or app name, at most 12 bytes of UTF-8 (ASCII in practice).
    public let name: String

    /// Throws when the name is longer than 12 bytes.
    public init(majorVersion: UInt8 = 2, minorVersion: UInt8 = 10, name: String) throws(COLMIEncodingError) {
        guard name.utf8.count <= 12 else {
            throw COLMIEncodingError(field: "COLMI phone name.name", expected: "at most 12 bytes", found: "\(name.utf8.count) bytes")
        }
        self.majorVersion = majorVersion
        self.minorVersion = minorVersion
        self.name = name
    }

    /// Reads the rest of the payload; trailing zero padding is dropped from the name.
    public init(from reader: inout ByteReader) throws(DecodingError) {
        majorVersion = try reader.readUInt8("COLMI phone name.major")
        minorVersion = try reader.readUInt8("COLMI phone name.minor")
        name = try reader.readLenientString(min(reader.remaining, 12), "COLMI phone name.name")
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(majorVersion); writer.write(minorVersion); writer.write(bytes: name.utf8.prefix(12))
    }
}

/// User preferences (opcode 0x0A write, after the action byte `02`).
public struct COLMIUserPreferences: GATTCodable, Hashable, Sendable, Encodable {
    /// Clock format: 0 = 24 h, 1 = 12 h.
    public var timeFormat: UInt8
    /// Units: 0 = metric, 1 = imperial.
    public var units: UInt8
    /// 0 male, 1 female, 2 other.
    public var gender: UInt8
    /// Age in years.
    public var ageYears: UInt8
    /// Height in centimetres.
    public var heightCentimeters: UInt8
    /// Weight in kilograms.
    public var weightKilograms: UInt8
    /// Systolic blood pressure, mmHg.
    public var systolicMmHg: UInt8
    /// Diastolic blood pressure, mmHg.
    public var diastolicMmHg: UInt8
    /// Heart-rate warning threshold in bpm (0 = unset).
    public var heartRateWarningBPM: UInt8

    public init(
        timeFormat: UInt8 = 0, units: UInt8 = 0, gender: UInt8 = 2, ageYears: UInt8, heightCentimeters: UInt8,
        weightKilograms: UInt8, systolicMmHg: UInt8 = 0, diastolicMmHg: UInt8 = 0, heartRateWarningBPM: UInt8 = 0
    ) {
        self.timeFormat = timeFormat
        self.units = units
        self.gender = gender
        self.ageYears = ageYears
        self.heightCentimeters = heightCentimeters
        self.weightKilograms = weightKilograms
        self.systolicMmHg = systolicMmHg
        self.diastolicMmHg = diastolicMmHg
        self.heartRateWarningBPM = heartRateWarningBPM
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        timeFormat = try reader.readUInt8("COLMI preferences.time format")
        units = try reader.readUInt8("COLMI preferences.units")
        gender = try reader.readUInt8("COLMI preferences.gender")
        ageYears = try reader.readUInt8("COLMI preferences.age")
        heightCentimeters = try reader.readUInt8("COLMI preferences.height")
        weightKilograms = try reader.readUInt8("COLMI preferences.weight")
        systolicMmHg = try reader.readUInt8("COLMI preferences.systolic")
        diastolicMmHg = try reader.readUInt8("COLMI preferences.diastolic")
        heartRateWarningBPM = try reader.readUInt8("COLMI preferences.HR warning")
    }

    public func encode(to writer: inout ByteWriter) {
        for b in [timeFormat, units, gender, ageYears, heightCentimeters, weightKilograms, systolicMmHg, diastolicMmHg, heartRateWarningBPM] {
            writer.write(b)
        }
    }
}

/// Every V1 request the host writes to the ring (and an emulator reads back).
///
/// ``packet`` encodes; ``init(packet:)`` decodes, falling back to ``other(_:)`` for anything it does not
/// recognise (never an error). Bytes a command does not use are written as zeros and ignored on decode.
public enum COLMIRequest: GATTCodable, Hashable, Sendable, Encodable {
    /// `01`: set the ring's clock (see ``COLMISetTime`` for the time-zone convention).
    case setTime(COLMISetTime)
    /// `02 <mode>`: camera mode: 4 enter / gesture feedback, 5 keep screen on, 6 finish.
    case camera(mode: UInt8)
    /// `03`: battery level.
    case battery
    /// `04`: phone name and client version.
    case phoneName(COLMIPhoneName)
    /// `08 01`: power off (reboot on some firmware).
    case powerOff
    /// `0A 01`: read user preferences.
    case readUserPreferences
    /// `0A 02 …`: write user preferences.
    case writeUserPreferences(COLMIUserPreferences)
    /// `10`: blink the LED twice.
    case blinkTwice
    /// `15 <uint32 LE>`: the HR log of the day starting at this time (seconds since 1970, ring time base).
    case heartRateLog(dayStart: UInt32)
    /// `16 01`: read HR-log settings.
    case readHeartRateLogSettings
    /// `16 02 …`: write HR-log settings.
    case writeHeartRateLogSettings(COLMIHeartRateLogSettingsWrite)
    /// `1E <action>`: continuous HR stream: 1 enable, 2 disable, 3 continue (send every ~30 readings).
    case continuousHeartRate(action: UInt8)
    /// `21 01`: read goals.
    case readGoals
    /// `21 02 …`: write goals (same layout as the read reply, colmi-docs "Health Targets").
    case writeGoals(COLMIGoals)
    /// `05 04 …`: write the display settings of a ring with a screen (newer Gadgetbridge).
    case writeDisplay(COLMIDisplaySettings)
    /// `op 01` (temperature `3A 03 01`): read an automatic-measurement toggle.
    case readAutoMeasurement(COLMIAutoMeasurementKind)
    /// `op 02 <0|1>` (temperature `3A 03 02 <0|1>`): write one.
    case writeAutoMeasurement(COLMIAutoMeasurementKind, enabled: Bool)
    /// `37 <day>`: stress history (Gadgetbridge sends day 0).
    case stressHistory(dayIndex: UInt8)
    /// `39 <uint32 LE days ago>`: HRV history.
    case hrvHistory(daysAgo: UInt32)
    /// `3C`: device-support flags.
    case deviceSupport
    /// `43 <dayOffset> 0F 00 5F 01`: sport detail for today (0) or days back.
    case sportDetail(dayOffset: UInt8)
    /// `50 55 AA`: flash the LED for about 10 s.
    case findDevice
    /// `69 <type> <action>`: start, continue (3) or one-shot (0) a real-time measurement.
    case realTimeStart(COLMIRealTimeType, COLMIRealTimeAction)
    /// `6A <type> 00 00`: stop a real-time measurement.
    case realTimeStop(COLMIRealTimeType)
    /// `A1 04 <mode>`: start the raw sensor stream (mode 0 tahnok, 4 atc1441).
    case rawSensorStart(mode: UInt8)
    /// `A1 02`: stop the raw sensor stream.
    case rawSensorStop
    /// `FF 66 66`: factory reset (erases the ring).
    case factoryReset
    /// Any other packet, kept as is.
    case other(COLMIPacket)

    /// The HR-log request for the day containing `secondsSince1970` (Unix seconds), in the ring
    /// time base given by `utcOffsetSeconds` (0 when the ring clock is UTC, Bluetide's convention).
    public static func heartRateLog(dayContaining secondsSince1970: Int64, utcOffsetSeconds: Int = 0) -> COLMIRequest {
        let ring = secondsSince1970 &+ Int64(utcOffsetSeconds)
        let midnight = ring &- ((ring % 86_400) + 86_400) % 86_400
        return .heartRateLog(dayStart: UInt32(clamping: midnight))
    }

    /// The 16-byte packet.
    public var packet: COLMIPacket {
        func p(_ op: UInt8, _ payload: [UInt8] = []) -> COLMIPacket { COLMIPacket(opcode: op, truncating: payload) }
        switch self {
        case let .setTime(t): return p(COLMIOpcode.setTime, t.bytes)
        case let .camera(mode): return p(COLMIOpcode.camera, [mode])
        case .battery: return p(COLMIOpcode.battery)
        case let .phoneName(n): return p(COLMIOpcode.phoneName, n.bytes)
        case .powerOff: return p(COLMIOpcode.powerOff, [0x01])
        case .readUserPreferences: return p(COLMIOpcode.userPreferences, [0x01])
        case let .writeUserPreferences(u): return p(COLMIOpcode.userPreferences, [0x02] + u.bytes)
        case .blinkTwice: return p(COLMIOpcode.blinkTwice)
        case let .heartRateLog(day): return p(COLMIOpcode.heartRateLog, day.bytes)
        case .readHeartRateLogSettings: return p(COLMIOpcode.heartRateLogSettings, [0x01])
        case let .writeHeartRateLogSettings(s): return p(COLMIOpcode.heartRateLogSettings, [0x02] + s.bytes)
        case let .continuousHeartRate(action): return p(COLMIOpcode.continuousHeartRate, [action])
        case .readGoals: return p(COLMIOpcode.goals, [0x01])
        case let .writeGoals(g):
            var goals = g
            goals.action = 0x02
            return p(COLMIOpcode.goals, goals.bytes)
        case let .writeDisplay(d): return p(COLMIOpcode.display, d.bytes)
        case let .readAutoMeasurement(kind):
            return p(kind.rawValue, kind == .temperature ? [0x03, 0x01] : [0x01])
        case let .writeAutoMeasurement(kind, on):
            let body: [UInt8] = [0x02, on ? 1 : 0]
            return p(kind.rawValue, kind == .temperature ? [0x03] + body : body)
        case let .stressHistory(day): return p(COLMIOpcode.stressHistory, [day])
        case let .hrvHistory(days): return p(COLMIOpcode.hrvHistory, days.bytes)
        case .deviceSupport: return p(COLMIOpcode.deviceSupport)
        case let .sportDetail(day): return p(COLMIOpcode.sportDetail, [day, 0x0F, 0x00, 0x5F, 0x01])
        case .findDevice: return p(COLMIOpcode.findDevice, [0x55, 0xAA])
        case let .realTimeStart(type, action): return p(COLMIOpcode.realTimeStart, [type.rawValue, action.rawValue])
        case let .realTimeStop(type): return p(COLMIOpcode.realTimeStop, [type.rawValue, 0, 0])
        case let .rawSensorStart(mode): return p(COLMIOpcode.rawSensor, [0x04, mode])
        case .rawSensorStop: return p(COLMIOpcode.rawSensor, [0x02])
        case .factoryReset: return p(COLMIOpcode.factoryReset, [0x66, 0x66])
        case let .other(packet): return packet
        }
    }

    /// Recognises a request packet; unknown ones (and malformed fields, e.g. bad BCD) become ``other(_:)``.
    public init(packet: COLMIPacket) {
        let b = packet.payload
        func u32() -> UInt32 { (try? UInt32(bytes: b)) ?? 0 }
        switch packet.opcode {
        case COLMIOpcode.setTime:
            if let t = try? COLMISetTime(bytes: b) { self = .setTime(t); return }
        case COLMIOpcode.camera: self = .camera(mode: packet[1]); return
        case COLMIOpcode.battery: self = .battery; return
        case COLMIOpcode.phoneName:
            if let n = try? COLMIPhoneName(bytes: b) { self = .phoneName(n); return }
        case COLMIOpcode.powerOff where packet[1] == 0x01: self = .powerOff; return
        case COLMIOpcode.userPreferences where packet[1] == 0x01: self = .readUserPreferences; return
        case COLMIOpcode.userPreferences where packet[1] == 0x02:
            if let u = try? COLMIUserPreferences(bytes: b.dropFirst()) { self = .writeUserPreferences(u); return }
        case COLMIOpcode.blinkTwice: self = .blinkTwice; return
        case COLMIOpcode.heartRateLog: self = .heartRateLog(dayStart: u32()); return
        case COLMIOpcode.heartRateLogSettings where packet[1] == 0x01: self = .readHeartRateLogSettings; return
        case COLMIOpcode.heartRateLogSettings where packet[1] == 0x02:
            if let s = try? COLMIHeartRateLogSettingsWrite(bytes: b.dropFirst()) { self = .writeHeartRateLogSettings(s); return }
        case COLMIOpcode.continuousHeartRate: self = .continuousHeartRate(action: packet[1]); return
        case COLMIOpcode.goals where packet[1] == 0x01: self = .readGoals; return
        case COLMIOpcode.goals where packet[1] == 0x02:
            if let g = try? COLMIGoals(bytes: b) { self = .writeGoals(g); return }
        case COLMIOpcode.display where packet[1] == COLMIDisplaySettings.writeTag:
            if let d = try? COLMIDisplaySettings(bytes: b) { self = .writeDisplay(d); return }
        case COLMIOpcode.autoTemperature where packet[1] == 0x03 && packet[2] == 0x01: self = .readAutoMeasurement(.temperature); return
        case COLMIOpcode.autoTemperature where packet[1] == 0x03 && packet[2] == 0x02:
            self = .writeAutoMeasurement(.temperature, enabled: packet[3] != 0); return
        case COLMIOpcode.autoSpO2, COLMIOpcode.autoStress, COLMIOpcode.autoHRV:
            if let kind = COLMIAutoMeasurementKind(rawValue: packet.opcode) {
                if packet[1] == 0x01 { self = .readAutoMeasurement(kind); return }
                if packet[1] == 0x02 { self = .writeAutoMeasurement(kind, enabled: packet[2] != 0); return }
            }
        case COLMIOpcode.stressHistory: self = .stressHistory(dayIndex: packet[1]); return
        case COLMIOpcode.hrvHistory: self = .hrvHistory(daysAgo: u32()); return
        case COLMIOpcode.deviceSupport: self = .deviceSupport; return
        case COLMIOpcode.sportDetail: self = .sportDetail(dayOffset: packet[1]); return
        case COLMIOpcode.findDevice where packet[1] == 0x55 && packet[2] == 0xAA: self = .findDevice; return
        case COLMIOpcode.realTimeStart:
            self = .realTimeStart(COLMIRealTimeType(rawValue: packet[1]), COLMIRealTimeAction(rawValue: packet[2])); return
        case COLMIOpcode.realTimeStop: self = .realTimeStop(COLMIRealTimeType(rawValue: packet[1])); return
        case COLMIOpcode.rawSensor where packet[1] == 0x04: self = .rawSensorStart(mode: packet[2]); return
        case COLMIOpcode.rawSensor where packet[1] == 0x02: self = .rawSensorStop; return
        case COLMIOpcode.factoryReset where packet[1] == 0x66 && packet[2] == 0x66: self = .factoryReset; return
        default: break
        }
        self = .other(packet)
    }

    /// Reads a 16-byte packet (checksum checked) and recognises it.
    public init(from reader: inout ByteReader) throws(DecodingError) {
        self.init(packet: try COLMIPacket(from: &reader))
    }

    public func encode(to writer: inout ByteWriter) { packet.encode(to: &writer) }

    /// One readable line, e.g. `request: set time 2024-01-01 00:00:00`.
    public var summary: String {
        switch self {
        case let .setTime(t): return "set time \(t.dateTime)"
        case let .camera(mode): return "camera mode \(mode)"
        case .battery: return "battery?"
        case let .phoneName(n): return "phone name \"\(n.name)\" v\(n.majorVersion).\(n.minorVersion)"
        case .powerOff: return "power off"
        case .readUserPreferences: return "read preferences"
        case .writeUserPreferences: return "write preferences"
        case .blinkTwice: return "blink twice"
        case let .heartRateLog(day): return "HR log for \(COLMIDateTime(secondsSince1970: Int64(day)))"
        case .readHeartRateLogSettings: return "read HR-log settings"
        case let .writeHeartRateLogSettings(s): return "write HR-log settings \(s.enabled ? "on" : "off"), \(s.intervalMinutes) min"
        case let .continuousHeartRate(a): return "continuous HR action \(a)"
        case .readGoals: return "read goals"
        case let .writeGoals(g): return "write goals \(g.steps) steps, \(g.calories) kcal, \(g.distanceMeters) m, \(g.sportMinutes) min sport, \(g.sleepMinutes) min sleep"
        case let .writeDisplay(d): return "write display \(d.enabled ? "on" : "off"), brightness \(d.brightness)"
        case let .readAutoMeasurement(k): return "read auto \(k)"
        case let .writeAutoMeasurement(k, on): return "auto \(k) \(on ? "on" : "off")"
        case let .stressHistory(d): return "stress history day \(d)"
        case let .hrvHistory(d): return "HRV history \(d) days ago"
        case .deviceSupport: return "device support?"
        case let .sportDetail(d): return "sport detail day -\(d)"
        case .findDevice: return "find device"
        case let .realTimeStart(t, a): return "real-time \(t) action \(a.rawValue)"
        case let .realTimeStop(t): return "stop real-time \(t)"
        case let .rawSensorStart(m): return "raw sensor start mode \(m)"
        case .rawSensorStop: return "raw sensor stop"
        case .factoryReset: return "factory reset"
        case let .other(p): return "\(COLMIOpcode.name(p.opcode)) \(p.payload.hexString)"
        }
    }

    public func encode(to encoder: any Encoder) throws {
        struct Body: Encodable { let summary: String; let packetHex: String }
        try COLMITaggedEncoding.encode(encoder, kind: "request", value: Body(summary: summary, packetHex: packet.bytes.hexString))
    }
}
