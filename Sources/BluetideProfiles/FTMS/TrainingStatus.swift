import BluetideBase

/// Training Status (0x2AD3): what phase of training the machine is in.
///
/// Flags uint8 (bit 0: status string present, bit 1: extended string, to be fetched with Read
/// Long), the status byte (always present, whatever the flags say), then the optional UTF-8
/// string to the end. Examples: `00 01` = idle; `01 0C 45 52 47` = watt control, "ERG".
public struct TrainingStatus: GATTCodable, Equatable, Sendable, Encodable, CustomStringConvertible {
    /// The training phase.
    public var status: Code
    /// The status string when flags bit 0 is set (decoded leniently: UTF-8, Latin-1 fallback).
    public var statusString: String?
    /// Flags bit 1: the string continues beyond this value (read the rest with Read Long).
    public var extendedString: Bool

    public init(status: Code, statusString: String? = nil, extendedString: Bool = false) {
        self.status = status
        self.statusString = statusString
        self.extendedString = extendedString
    }

    /// Flags byte as sent: bit 0 string present, bit 1 extended string.
    public var flags: UInt8 { (statusString != nil ? 1 : 0) | (extendedString ? 2 : 0) }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        let flags = try reader.readUInt8("Training Status.flags")
        status = Code(rawValue: try reader.readUInt8("Training Status.status"))
        extendedString = flags & 0x02 != 0
        statusString = flags & 0x01 != 0 ? try reader.readLenientString(nil, "Training Status.status string") : nil
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(flags)
        writer.write(status.rawValue)
        if let statusString { writer.write(string: statusString) }
    }

    public var description: String {
        var text = status.name
        if let statusString { text += " \"\(statusString)\"" }
        if extendedString { text += " (string continues: read long)" }
        return text
    }

    /// Training status values (0x10-0xFF reserved).
    public struct Code: TrainerNamedCode {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let other = Self(rawValue: 0x00)
        public static let idle = Self(rawValue: 0x01)
        public static let warmingUp = Self(rawValue: 0x02)
        public static let lowIntensityInterval = Self(rawValue: 0x03)
        public static let highIntensityInterval = Self(rawValue: 0x04)
        public static let recoveryInterval = Self(rawValue: 0x05)
        public static let isometric = Self(rawValue: 0x06)
        public static let heartRateControl = Self(rawValue: 0x07)
        public static let fitnessTest = Self(rawValue: 0x08)
        public static let speedTooLowToControl = Self(rawValue: 0x09)
        public static let speedTooHighToControl = Self(rawValue: 0x0A)
        public static let coolDown = Self(rawValue: 0x0B)
        public static let wattControl = Self(rawValue: 0x0C)
        public static let manualMode = Self(rawValue: 0x0D)
        public static let preWorkout = Self(rawValue: 0x0E)
        public static let postWorkout = Self(rawValue: 0x0F)
        public static let names: [UInt8: String] = [
            0x00: "other", 0x01: "idle", 0x02: "warming up", 0x03: "low-intensity interval",
            0x04: "high-intensity interval", 0x05: "recovery interval", 0x06: "isometric",
            0x07: "heart-rate control", 0x08: "fitness test", 0x09: "speed too low to control",
            0x0A: "speed too high to control", 0x0B: "cool down", 0x0C: "watt control",
            0x0D: "manual mode (quick start)", 0x0E: "pre-workout", 0x0F: "post-workout",
        ]
    }
}
