import BluetideBase

/// Cycling Power Feature (0x2A65, uint32): what a power meter supports.
///
/// Bits 0-19 are single features; bits 20-21 are the two-bit ``distributedSystemSupport``
/// field; bits 22-31 are reserved.
public struct CyclingPowerFeature: OptionSet, Hashable, Sendable, Encodable, GATTCodable {
    /// The 32 bits as sent.
    public let rawValue: UInt32
    /// Wraps the bits as sent.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Bit 0.
    public static let pedalPowerBalance = Self(rawValue: 1 << 0)
    /// Bit 1.
    public static let accumulatedTorque = Self(rawValue: 1 << 1)
    /// Bit 2.
    public static let wheelRevolutionData = Self(rawValue: 1 << 2)
    /// Bit 3.
    public static let crankRevolutionData = Self(rawValue: 1 << 3)
    /// Bit 4.
    public static let extremeMagnitudes = Self(rawValue: 1 << 4)
    /// Bit 5.
    public static let extremeAngles = Self(rawValue: 1 << 5)
    /// Bit 6.
    public static let topAndBottomDeadSpotAngles = Self(rawValue: 1 << 6)
    /// Bit 7.
    public static let accumulatedEnergy = Self(rawValue: 1 << 7)
    /// Bit 8.
    public static let offsetCompensationIndicator = Self(rawValue: 1 << 8)
    /// Bit 9.
    public static let offsetCompensation = Self(rawValue: 1 << 9)
    /// Bit 10.
    public static let measurementContentMasking = Self(rawValue: 1 << 10)
    /// Bit 11.
    public static let multipleSensorLocations = Self(rawValue: 1 << 11)
    /// Bit 12.
    public static let crankLengthAdjustment = Self(rawValue: 1 << 12)
    /// Bit 13.
    public static let chainLengthAdjustment = Self(rawValue: 1 << 13)
    /// Bit 14.
    public static let chainWeightAdjustment = Self(rawValue: 1 << 14)
    /// Bit 15.
    public static let spanLengthAdjustment = Self(rawValue: 1 << 15)
    /// Bit 16: sensor measurement context; set = torque based, clear = force based.
    public static let torqueBasedMeasurementContext = Self(rawValue: 1 << 16)
    /// Bit 17.
    public static let instantaneousMeasurementDirection = Self(rawValue: 1 << 17)
    /// Bit 18.
    public static let factoryCalibrationDate = Self(rawValue: 1 << 18)
    /// Bit 19.
    public static let enhancedOffsetCompensation = Self(rawValue: 1 << 19)

    /// Bits 20-21: whether the sensor may be one of several in a distributed system.
    public enum DistributedSystemSupport: String, Sendable, Hashable, Encodable {
        /// 0: legacy sensor, unspecified.
        case unspecified
        /// 1: not for use in a distributed system.
        case notForDistributedSystem
        /// 2: can be used in a distributed system.
        case forDistributedSystem
        /// 3: reserved.
        case reserved
    }

    /// Bits 20-21 read as ``DistributedSystemSupport``.
    public var distributedSystemSupport: DistributedSystemSupport {
        switch (rawValue >> 20) & 0x03 {
        case 0: return .unspecified
        case 1: return .notForDistributedSystem
        case 2: return .forDistributedSystem
        default: return .reserved
        }
    }

    /// The same features with bits 20-21 set to `support`.
    public func with(distributedSystemSupport support: DistributedSystemSupport) -> Self {
        let code: UInt32
        switch support {
        case .unspecified: code = 0
        case .notForDistributedSystem: code = 1
        case .forDistributedSystem: code = 2
        case .reserved: code = 3
        }
        return Self(rawValue: rawValue & ~(0x03 << 20) | code << 20)
    }

    static let names: [(Self, String)] = [
        (.pedalPowerBalance, "pedalPowerBalance"), (.accumulatedTorque, "accumulatedTorque"),
        (.wheelRevolutionData, "wheelRevolutionData"), (.crankRevolutionData, "crankRevolutionData"),
        (.extremeMagnitudes, "extremeMagnitudes"), (.extremeAngles, "extremeAngles"),
        (.topAndBottomDeadSpotAngles, "topAndBottomDeadSpotAngles"), (.accumulatedEnergy, "accumulatedEnergy"),
        (.offsetCompensationIndicator, "offsetCompensationIndicator"), (.offsetCompensation, "offsetCompensation"),
        (.measurementContentMasking, "measurementContentMasking"),
        (.multipleSensorLocations, "multipleSensorLocations"), (.crankLengthAdjustment, "crankLengthAdjustment"),
        (.chainLengthAdjustment, "chainLengthAdjustment"), (.chainWeightAdjustment, "chainWeightAdjustment"),
        (.spanLengthAdjustment, "spanLengthAdjustment"),
        (.torqueBasedMeasurementContext, "torqueBasedMeasurementContext"),
        (.instantaneousMeasurementDirection, "instantaneousMeasurementDirection"),
        (.factoryCalibrationDate, "factoryCalibrationDate"), (.enhancedOffsetCompensation, "enhancedOffsetCompensation"),
    ]

    /// Names of the single-bit features that are set, in bit order.
    public var featureNames: [String] { Self.names.filter { contains($0.0) }.map(\.1) }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        self.init(rawValue: try reader.read(UInt32.self, "Cycling Power Feature"))
    }

    public func encode(to writer: inout ByteWriter) { writer.write(rawValue) }

    /// One line: the feature names and the distributed-system support.
    public var summary: String {
        let names = featureNames
        return (names.isEmpty ? "no features" : names.joined(separator: ", "))
            + "; distributed system: \(distributedSystemSupport.rawValue)"
    }

    private enum CodingKeys: String, CodingKey { case rawValue, features, distributedSystemSupport }

    /// JSON: raw value, feature names and distributed-system support.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(rawValue, forKey: .rawValue)
        try c.encode(featureNames, forKey: .features)
        try c.encode(distributedSystemSupport, forKey: .distributedSystemSupport)
    }
}
