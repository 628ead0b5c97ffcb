import BluetideBase

/// Supported Speed Range (0x2AD4): minimum, maximum and increment, each uint16 in 0.01 km/h.
public struct SupportedSpeedRange: GATTCodable, Equatable, Sendable, Encodable, CustomStringConvertible {
    /// Minimum speed, 0.01 km/h units.
    public var minimumHundredthKmh: UInt16
    /// Maximum speed, 0.01 km/h units.
    public var maximumHundredthKmh: UInt16
    /// Smallest step, 0.01 km/h units.
    public var incrementHundredthKmh: UInt16

    public init(minimumHundredthKmh: UInt16, maximumHundredthKmh: UInt16, incrementHundredthKmh: UInt16) {
        self.minimumHundredthKmh = minimumHundredthKmh
        self.maximumHundredthKmh = maximumHundredthKmh
        self.incrementHundredthKmh = incrementHundredthKmh
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        minimumHundredthKmh = try reader.read(UInt16.self, "Supported Speed Range.minimum")
        maximumHundredthKmh = try reader.read(UInt16.self, "Supported Speed Range.maximum")
        incrementHundredthKmh = try reader.read(UInt16.self, "Supported Speed Range.increment")
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(minimumHundredthKmh)
        writer.write(maximumHundredthKmh)
        writer.write(incrementHundredthKmh)
    }

    /// Minimum, maximum and increment in km/h.
    public var kmh: (minimum: Double, maximum: Double, increment: Double) {
        (Double(minimumHundredthKmh) / 100, Double(maximumHundredthKmh) / 100, Double(incrementHundredthKmh) / 100)
    }

    public var description: String {
        let v = kmh
        return "speed \(trainerFormat(v.minimum, decimals: 2)) to \(trainerFormat(v.maximum, decimals: 2)) km/h, "
            + "step \(trainerFormat(v.increment, decimals: 2))"
    }
}

/// Supported Inclination Range (0x2AD5): minimum and maximum sint16, increment uint16, in 0.1 %.
public struct SupportedInclinationRange: GATTCodable, Equatable, Sendable, Encodable, CustomStringConvertible {
    /// Minimum inclination, 0.1 % units.
    public var minimumTenthPercent: Int16
    /// Maximum inclination, 0.1 % units.
    public var maximumTenthPercent: Int16
    /// Smallest step, 0.1 % units.
    public var incrementTenthPercent: UInt16

    public init(minimumTenthPercent: Int16, maximumTenthPercent: Int16, incrementTenthPercent: UInt16) {
        self.minimumTenthPercent = minimumTenthPercent
        self.maximumTenthPercent = maximumTenthPercent
        self.incrementTenthPercent = incrementTenthPercent
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        minimumTenthPercent = try reader.read(Int16.self, "Supported Inclination Range.minimum")
        maximumTenthPercent = try reader.read(Int16.self, "Supported Inclination Range.maximum")
        incrementTenthPercent = try reader.read(UInt16.self, "Supported Inclination Range.increment")
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(minimumTenthPercent)
        writer.write(maximumTenthPercent)
        writer.write(incrementTenthPercent)
    }

    /// Minimum, maximum and increment in percent.
    public var percent: (minimum: Double, maximum: Double, increment: Double) {
        (Double(minimumTenthPercent) / 10, Double(maximumTenthPercent) / 10, Double(incrementTenthPercent) / 10)
    }

    public var description: String {
        let v = percent
        return "inclination \(trainerFormat(v.minimum, decimals: 1)) to \(trainerFormat(v.maximum, decimals: 1)) %, "
            + "step \(trainerFormat(v.increment, decimals: 1))"
    }
}

/// Supported Resistance Level Range (0x2AD6), in one of two layouts told apart by length.
///
/// FTMS 1.0: minimum sint16, maximum sint16, increment uint16, all × 0.1 (6 bytes; `00 00 C8 00
/// 01 00` = 0.0 to 20.0, step 0.1). Newer supplement text: three uint8 values × 10 (3 bytes).
/// A value of exactly 3 bytes is read as the uint8 layout, anything else as FTMS 1.0.
public struct SupportedResistanceLevelRange: GATTCodable, Equatable, Sendable, Encodable, CustomStringConvertible {
    /// Minimum level in the layout's units (0.1 for FTMS 1.0, 10 for the uint8 layout).
    public var minimumRaw: Int16
    /// Maximum level in the layout's units.
    public var maximumRaw: Int16
    /// Smallest step in the layout's units.
    public var incrementRaw: UInt16
    /// Which wire layout the raw values use.
    public var layout: Layout

    /// Wire layout of the resistance range.
    public enum Layout: String, Sendable, Equatable, Encodable {
        /// sint16, sint16, uint16, resolution 0.1 (6 bytes).
        case ftms10
        /// uint8 × 3, resolution 10 (3 bytes).
        case uint8
        /// Multiplier from raw value to resistance level.
        public var resolution: Double { self == .ftms10 ? 0.1 : 10 }
    }

    public init(minimumRaw: Int16, maximumRaw: Int16, incrementRaw: UInt16, layout: Layout = .ftms10) {
        self.minimumRaw = minimumRaw
        self.maximumRaw = maximumRaw
        self.incrementRaw = incrementRaw
        self.layout = layout
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        let context = "Supported Resistance Level Range"
        if reader.remaining == 3 {
            layout = .uint8
            minimumRaw = Int16(try reader.readUInt8("\(context).minimum"))
            maximumRaw = Int16(try reader.readUInt8("\(context).maximum"))
            incrementRaw = UInt16(try reader.readUInt8("\(context).increment"))
        } else {
            layout = .ftms10
            minimumRaw = try reader.read(Int16.self, "\(context).minimum")
            maximumRaw = try reader.read(Int16.self, "\(context).maximum")
            incrementRaw = try reader.read(UInt16.self, "\(context).increment")
        }
    }

    public func encode(to writer: inout ByteWriter) {
        switch layout {
        case .ftms10:
            writer.write(minimumRaw)
            writer.write(maximumRaw)
            writer.write(incrementRaw)
        case .uint8:
            writer.write(UInt8(truncatingIfNeeded: minimumRaw))
            writer.write(UInt8(truncatingIfNeeded: maximumRaw))
            writer.write(UInt8(truncatingIfNeeded: incrementRaw))
        }
    }

    /// Minimum, maximum and increment as resistance levels (raw × the layout's resolution).
    public var levels: (minimum: Double, maximum: Double, increment: Double) {
        let r = layout.resolution
        return (Double(minimumRaw) * r, Double(maximumRaw) * r, Double(incrementRaw) * r)
    }

    public var description: String {
        let v = levels
        return "resistance \(trainerFormat(v.minimum, decimals: 1)) to \(trainerFormat(v.maximum, decimals: 1)), "
            + "step \(trainerFormat(v.increment, decimals: 1))\(layout == .uint8 ? " (uint8 layout)" : "")"
    }
}

/// Supported Heart Rate Range (0x2AD7): minimum, maximum and increment, uint8 bpm each.
public struct SupportedHeartRateRange: GATTCodable, Equatable, Sendable, Encodable, CustomStringConvertible {
    /// Minimum heart rate, bpm.
    public var minimumBpm: UInt8
    /// Maximum heart rate, bpm.
    public var maximumBpm: UInt8
    /// Smallest step, bpm.
    public var incrementBpm: UInt8

    public init(minimumBpm: UInt8, maximumBpm: UInt8, incrementBpm: UInt8) {
        self.minimumBpm = minimumBpm
        self.maximumBpm = maximumBpm
        self.incrementBpm = incrementBpm
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        minimumBpm = try reader.readUInt8("Supported Heart Rate Range.minimum")
        maximumBpm = try reader.readUInt8("Supported Heart Rate Range.maximum")
        incrementBpm = try reader.readUInt8("Supported Heart Rate Range.increment")
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(minimumBpm)
        writer.write(maximumBpm)
        writer.write(incrementBpm)
    }

    public var description: String { "heart rate \(minimumBpm) to \(maximumBpm) bpm, step \(incrementBpm)" }
}

/// Supported Power Range (0x2AD8): minimum and maximum sint16 W, increment uint16 W.
/// `00 00 A0 0F 01 00` = 0 to 4000 W, step 1.
public struct SupportedPowerRange: GATTCodable, Equatable, Sendable, Encodable, CustomStringConvertible {
    /// Minimum power, W.
    public var minimumWatts: Int16
    /// Maximum power, W.
    public var maximumWatts: Int16
    /// Smallest step, W.
    public var incrementWatts: UInt16

    public init(minimumWatts: Int16, maximumWatts: Int16, incrementWatts: UInt16) {
        self.minimumWatts = minimumWatts
        self.maximumWatts = maximumWatts
        self.incrementWatts = incrementWatts
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        minimumWatts = try reader.read(Int16.self, "Supported Power Range.minimum")
        maximumWatts = try reader.read(Int16.self, "Supported Power Range.maximum")
        incrementWatts = try reader.read(UInt16.self, "Supported Power Range.increment")
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(minimumWatts)
        writer.write(maximumWatts)
        writer.write(incrementWatts)
    }

    public var description: String { "power \(minimumWatts) to \(maximumWatts) W, step \(incrementWatts)" }
}
