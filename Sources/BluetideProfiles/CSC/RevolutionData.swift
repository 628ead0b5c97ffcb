import BluetideBase

/// Wheel revolution data as CSC and Cycling Power send it: a uint32 revolution count and the
/// time of the most recent revolution.
///
/// The event time unit differs by profile: **1/1024 s** in CSC Measurement, **1/2048 s** in
/// Cycling Power Measurement. It wraps at 2^16.
public struct WheelRevolutionData: Equatable, Hashable, Sendable, Encodable {
    /// Cumulative wheel revolutions (wraps at 2^32; jumps when the sensor is reset).
    public var cumulativeRevolutions: UInt32
    /// Time of the last wheel revolution in ticks (1/1024 s for CSC, 1/2048 s for Cycling Power).
    public var lastEventTimeTicks: UInt16

    public init(cumulativeRevolutions: UInt32, lastEventTimeTicks: UInt16) {
        self.cumulativeRevolutions = cumulativeRevolutions
        self.lastEventTimeTicks = lastEventTimeTicks
    }
}

/// Crank revolution data: a uint16 revolution count and the time of the most recent revolution
/// in 1/1024 s (both CSC and Cycling Power). Both fields wrap at 2^16.
public struct CrankRevolutionData: Equatable, Hashable, Sendable, Encodable {
    /// Cumulative crank revolutions (wraps at 65536).
    public var cumulativeRevolutions: UInt16
    /// Time of the last crank revolution in 1/1024 s.
    public var lastEventTimeTicks: UInt16

    public init(cumulativeRevolutions: UInt16, lastEventTimeTicks: UInt16) {
        self.cumulativeRevolutions = cumulativeRevolutions
        self.lastEventTimeTicks = lastEventTimeTicks
    }

    /// ``lastEventTimeTicks`` in seconds.
    public var lastEventTimeSeconds: Double { Double(lastEventTimeTicks) / 1024 }
}

/// Result code in the response to a CSC (SC) or Cycling Power control point request.
public enum CyclingControlPointResult: Equatable, Hashable, Sendable, Encodable, CustomStringConvertible {
    /// 1.
    case success
    /// 2.
    case opCodeNotSupported
    /// 3.
    case invalidParameter
    /// 4.
    case operationFailed
    /// Any other value (reserved).
    case reserved(UInt8)

    public init(rawValue: UInt8) {
        switch rawValue {
        case 1: self = .success
        case 2: self = .opCodeNotSupported
        case 3: self = .invalidParameter
        case 4: self = .operationFailed
        default: self = .reserved(rawValue)
        }
    }

    public var rawValue: UInt8 {
        switch self {
        case .success: return 1
        case .opCodeNotSupported: return 2
        case .invalidParameter: return 3
        case .operationFailed: return 4
        case let .reserved(value): return value
        }
    }

    /// Readable name, e.g. `success`, `op code not supported`.
    public var description: String {
        switch self {
        case .success: return "success"
        case .opCodeNotSupported: return "op code not supported"
        case .invalidParameter: return "invalid parameter"
        case .operationFailed: return "operation failed"
        case let .reserved(value): return "reserved result \(FitnessFormat.hex(value))"
        }
    }

    /// JSON: the readable name.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}
