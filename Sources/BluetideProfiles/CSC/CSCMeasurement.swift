import BluetideBase

/// CSC Measurement (0x2A5B), notified about once a second by a speed and/or cadence sensor.
///
/// Layout: flags (uint8: bit 0 wheel data, bit 1 crank data), then wheel data (uint32 revolutions,
/// uint16 event time in 1/1024 s), then crank data (uint16 revolutions, uint16 event time in
/// 1/1024 s). With crank data only, the crank block starts at offset 1. Speed and cadence are
/// not sent; ``CSCCalculator`` derives them from successive measurements.
public struct CSCMeasurement: Equatable, Hashable, Sendable, Encodable, GATTCodable {
    /// Wheel revolutions and last wheel event time (1/1024 s), when flag bit 0 is set.
    public var wheel: WheelRevolutionData?
    /// Crank revolutions and last crank event time (1/1024 s), when flag bit 1 is set.
    public var crank: CrankRevolutionData?

    public init(wheel: WheelRevolutionData? = nil, crank: CrankRevolutionData? = nil) {
        self.wheel = wheel
        self.crank = crank
    }

    /// Last wheel event time in seconds (ticks / 1024).
    public var lastWheelEventTimeSeconds: Double? { wheel.map { Double($0.lastEventTimeTicks) / 1024 } }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        do throws(DecodingError) {
            let flags = try reader.readUInt8("flags")
            if flags & 0x01 != 0 {
                wheel = WheelRevolutionData(
                    cumulativeRevolutions: try reader.read(UInt32.self, "cumulative wheel revolutions"),
                    lastEventTimeTicks: try reader.read(UInt16.self, "last wheel event time"))
            } else {
                wheel = nil
            }
            if flags & 0x02 != 0 {
                crank = CrankRevolutionData(
                    cumulativeRevolutions: try reader.read(UInt16.self, "cumulative crank revolutions"),
                    lastEventTimeTicks: try reader.read(UInt16.self, "last crank event time"))
            } else {
                crank = nil
            }
        } catch {
            throw error.within("CSC Measurement")
        }
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(UInt8((wheel == nil ? 0 : 0x01) | (crank == nil ? 0 : 0x02)))
        if let wheel {
            writer.write(wheel.cumulativeRevolutions)
            writer.write(wheel.lastEventTimeTicks)
        }
        if let crank {
            writer.write(crank.cumulativeRevolutions)
            writer.write(crank.lastEventTimeTicks)
        }
    }

    private enum CodingKeys: String, CodingKey { case wheel, crank, lastWheelEventTimeSeconds, lastCrankEventTimeSeconds }

    /// JSON: the wheel and crank blocks (raw ticks) plus their event times in seconds.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(wheel, forKey: .wheel)
        try c.encodeIfPresent(crank, forKey: .crank)
        try c.encodeIfPresent(lastWheelEventTimeSeconds, forKey: .lastWheelEventTimeSeconds)
        try c.encodeIfPresent(crank?.lastEventTimeSeconds, forKey: .lastCrankEventTimeSeconds)
    }

    /// One line, e.g. `wheel 89762 rev @ 3.606 s, crank 25419 rev @ 31.896 s`.
    public var summary: String {
        var parts: [String] = []
        if let wheel, let seconds = lastWheelEventTimeSeconds {
            parts.append("wheel \(wheel.cumulativeRevolutions) rev @ \(FitnessFormat.fixed(seconds, 3)) s")
        }
        if let crank {
            parts.append("crank \(crank.cumulativeRevolutions) rev @ \(FitnessFormat.fixed(crank.lastEventTimeSeconds, 3)) s")
        }
        return parts.isEmpty ? "no wheel or crank data" : parts.joined(separator: ", ")
    }
}

/// CSC Feature (0x2A5C, uint16): what a speed and cadence sensor supports.
public struct CSCFeature: OptionSet, Hashable, Sendable, Encodable, GATTCodable {
    /// The 16 bits as sent.
    public let rawValue: UInt16
    /// Wraps the bits as sent.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// Bit 0: wheel revolution data.
    public static let wheelRevolutionData = CSCFeature(rawValue: 1 << 0)
    /// Bit 1: crank revolution data.
    public static let crankRevolutionData = CSCFeature(rawValue: 1 << 1)
    /// Bit 2: multiple sensor locations (Sensor Location 0x2A5D exists).
    public static let multipleSensorLocations = CSCFeature(rawValue: 1 << 2)

    static let names: [(CSCFeature, String)] = [
        (.wheelRevolutionData, "wheelRevolutionData"), (.crankRevolutionData, "crankRevolutionData"),
        (.multipleSensorLocations, "multipleSensorLocations"),
    ]

    /// Names of the supported features, in bit order.
    public var featureNames: [String] { Self.names.filter { contains($0.0) }.map(\.1) }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        self.init(rawValue: try reader.read(UInt16.self, "CSC Feature"))
    }

    public func encode(to writer: inout ByteWriter) { writer.write(rawValue) }

    /// One line, e.g. `wheelRevolutionData, crankRevolutionData`.
    public var summary: String {
        let names = featureNames
        return names.isEmpty ? "no features" : names.joined(separator: ", ")
    }

    private enum CodingKeys: String, CodingKey { case rawValue, features }

    /// JSON: `{"rawValue": 7, "features": ["wheelRevolutionData", …]}`.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(rawValue, forKey: .rawValue)
        try c.encode(featureNames, forKey: .features)
    }
}
