import BluetideBase

/// Heart Rate Measurement (0x2A37), notified by a heart-rate sensor about once a second.
///
/// Layout: flags (uint8), heart rate (uint8 or uint16 by flag bit 0), energy expended (uint16 kJ,
/// flag bit 3), then RR intervals (uint16, 1/1024 s, flag bit 4) up to the end of the packet; an
/// odd trailing byte is ignored. Encoding derives the flags from which fields are present.
public struct HeartRateMeasurement: Equatable, Sendable, Encodable, GATTCodable {
    /// Sensor contact status from flag bits 1-2: `(flags >> 1) & 3`.
    public enum SensorContact: String, Sendable, Encodable {
        /// Values 0 and 1: the sensor cannot tell whether it touches skin.
        case notSupported
        /// Value 2: the sensor can tell, and there is **no** contact.
        case notDetected
        /// Value 3: the sensor can tell, and contact is detected.
        case detected

        /// Reads bits 1-2 of the flags.
        public init(flags: UInt8) {
            switch (flags >> 1) & 0x03 {
            case 3: self = .detected
            case 2: self = .notDetected
            default: self = .notSupported
            }
        }

        /// The flag bits 1-2 this status encodes to (`notSupported` as 0).
        public var flagBits: UInt8 {
            switch self {
            case .notSupported: return 0
            case .notDetected: return 0b100
            case .detected: return 0b110
            }
        }
    }

    /// Heart rate in beats per minute.
    public var beatsPerMinute: UInt16
    /// True when the value travels as uint16 (flag bit 0); encoding also uses uint16 above 255 bpm.
    public var usesUInt16Value: Bool
    /// Whether the sensor touches skin, if it can tell.
    public var sensorContact: SensorContact
    /// Energy expended since the last reset, in kilojoules (0xFFFF once saturated); nil when absent.
    public var energyExpendedKilojoules: UInt16?
    /// RR intervals in 1/1024 s, oldest first; nil when flag bit 4 is clear, possibly empty when set.
    public var rrIntervals1024: [UInt16]?

    public init(
        beatsPerMinute: UInt16, usesUInt16Value: Bool = false, sensorContact: SensorContact = .notSupported,
        energyExpendedKilojoules: UInt16? = nil, rrIntervals1024: [UInt16]? = nil
    ) {
        self.beatsPerMinute = beatsPerMinute
        self.usesUInt16Value = usesUInt16Value
        self.sensorContact = sensorContact
        self.energyExpendedKilojoules = energyExpendedKilojoules
        self.rrIntervals1024 = rrIntervals1024
    }

    /// True when energy expended reads 0xFFFF: saturated, it stays there until a reset
    /// (``HeartRateControlPoint/resetEnergyExpended``).
    public var isEnergyExpendedSaturated: Bool { energyExpendedKilojoules == 0xFFFF }

    /// RR intervals in seconds (raw / 1024), oldest first; empty when none were sent.
    public var rrIntervalSeconds: [Double] { (rrIntervals1024 ?? []).map { Double($0) / 1024 } }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        do throws(DecodingError) {
            let flags = try reader.readUInt8("flags")
            usesUInt16Value = flags & 0x01 != 0
            if usesUInt16Value {
                beatsPerMinute = try reader.read(UInt16.self, "heart rate (uint16)")
            } else {
                beatsPerMinute = UInt16(try reader.readUInt8("heart rate (uint8)"))
            }
            sensorContact = SensorContact(flags: flags)
            energyExpendedKilojoules = flags & 0x08 != 0 ? try reader.read(UInt16.self, "energy expended") : nil
            if flags & 0x10 != 0 {
                var intervals: [UInt16] = []
                while reader.remaining >= 2 { intervals.append(try reader.read(UInt16.self, "RR interval")) }
                _ = reader.readRemaining()  // an odd trailing byte carries no interval
                rrIntervals1024 = intervals
            } else {
                rrIntervals1024 = nil
            }
        } catch {
            throw error.within("Heart Rate Measurement")
        }
    }

    public func encode(to writer: inout ByteWriter) {
        let wide = usesUInt16Value || beatsPerMinute > 0xFF
        var flags: UInt8 = wide ? 0x01 : 0
        flags |= sensorContact.flagBits
        if energyExpendedKilojoules != nil { flags |= 0x08 }
        if rrIntervals1024 != nil { flags |= 0x10 }
        writer.write(flags)
        if wide { writer.write(beatsPerMinute) } else { writer.write(UInt8(beatsPerMinute)) }
        if let energyExpendedKilojoules { writer.write(energyExpendedKilojoules) }
        for interval in rrIntervals1024 ?? [] { writer.write(interval) }
    }

    /// One line, e.g. `78 bpm, contact detected, RR 0.777 s 0.738 s`.
    public var summary: String {
        var parts = ["\(beatsPerMinute) bpm"]
        switch sensorContact {
        case .detected: parts.append("contact detected")
        case .notDetected: parts.append("no contact")
        case .notSupported: break
        }
        if let energyExpendedKilojoules {
            parts.append("energy \(energyExpendedKilojoules) kJ" + (isEnergyExpendedSaturated ? " (saturated)" : ""))
        }
        let rr = rrIntervalSeconds
        if !rr.isEmpty { parts.append("RR " + rr.map { FitnessFormat.fixed($0, 3) + " s" }.joined(separator: " ")) }
        return parts.joined(separator: ", ")
    }

    private enum CodingKeys: String, CodingKey {
        case beatsPerMinute, usesUInt16Value, sensorContact, energyExpendedKilojoules, rrIntervals1024, rrIntervalSeconds
    }

    /// JSON: the fields above plus `rrIntervalSeconds`.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(beatsPerMinute, forKey: .beatsPerMinute)
        try c.encode(usesUInt16Value, forKey: .usesUInt16Value)
        try c.encode(sensorContact, forKey: .sensorContact)
        try c.encodeIfPresent(energyExpendedKilojoules, forKey: .energyExpendedKilojoules)
        try c.encodeIfPresent(rrIntervals1024, forKey: .rrIntervals1024)
        if rrIntervals1024 != nil { try c.encode(rrIntervalSeconds, forKey: .rrIntervalSeconds) }
    }
}

/// Body Sensor Location (0x2A38): where a heart-rate sensor is worn (uint8).
public enum BodySensorLocation: Equatable, Hashable, Sendable, Encodable, GATTCodable, CustomStringConvertible {
    /// Wire values 0-6, in this order.
    case other, chest, wrist, finger, hand, earLobe, foot
    /// Values 7-255, reserved by the specification; kept so nothing is lost.
    case reserved(UInt8)

    /// Maps the wire value.
    public init(rawValue: UInt8) {
        switch rawValue {
        case 0: self = .other
        case 1: self = .chest
        case 2: self = .wrist
        case 3: self = .finger
        case 4: self = .hand
        case 5: self = .earLobe
        case 6: self = .foot
        default: self = .reserved(rawValue)
        }
    }

    /// The wire value.
    public var rawValue: UInt8 {
        switch self {
        case .other: return 0
        case .chest: return 1
        case .wrist: return 2
        case .finger: return 3
        case .hand: return 4
        case .earLobe: return 5
        case .foot: return 6
        case let .reserved(value): return value
        }
    }

    /// Readable name, e.g. `chest`, `ear lobe`, `reserved (9)`.
    public var description: String {
        switch self {
        case .other: return "other"
        case .chest: return "chest"
        case .wrist: return "wrist"
        case .finger: return "finger"
        case .hand: return "hand"
        case .earLobe: return "ear lobe"
        case .foot: return "foot"
        case let .reserved(value): return "reserved (\(value))"
        }
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        self.init(rawValue: try reader.readUInt8("Body Sensor Location"))
    }

    public func encode(to writer: inout ByteWriter) { writer.write(rawValue) }

    /// JSON: the readable name.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}

/// Heart Rate Control Point (0x2A39): written by the client; `01` resets Energy Expended to 0.
/// Any other value makes the server answer ATT error 0x80 (Control Point Not Supported).
public enum HeartRateControlPoint: Equatable, Sendable, Encodable, GATTCodable {
    /// `01`: reset Energy Expended.
    case resetEnergyExpended
    /// Any other command byte (not supported by the specification).
    case unsupported(UInt8)

    /// ATT error a server returns for an unsupported command: Control Point Not Supported.
    public static let controlPointNotSupportedError: UInt8 = 0x80

    public init(from reader: inout ByteReader) throws(DecodingError) {
        let value = try reader.readUInt8("Heart Rate Control Point.command")
        self = value == 0x01 ? .resetEnergyExpended : .unsupported(value)
    }

    public func encode(to writer: inout ByteWriter) {
        switch self {
        case .resetEnergyExpended: writer.write(UInt8(0x01))
        case let .unsupported(value): writer.write(value)
        }
    }

    /// One line, e.g. `reset energy expended`.
    public var summary: String {
        switch self {
        case .resetEnergyExpended: return "reset energy expended"
        case let .unsupported(value): return "unsupported command \(FitnessFormat.hex(value))"
        }
    }

    /// JSON: `"resetEnergyExpended"` or `"unsupported(0x02)"`.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .resetEnergyExpended: try c.encode("resetEnergyExpended")
        case let .unsupported(value): try c.encode("unsupported(\(FitnessFormat.hex(value)))")
        }
    }
}
