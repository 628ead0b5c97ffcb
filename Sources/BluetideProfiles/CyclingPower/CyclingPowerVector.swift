import BluetideBase

/// Cycling Power Vector (0x2A64): force or torque samples around the crank revolution.
///
/// Layout: flags (uint8: b0 crank data, b1 first crank measurement angle, b2 force array, b3
/// torque array, b4-5 measurement direction), then crank revolutions (uint16) + last crank event
/// time (uint16, 1/1024 s), first angle (uint16, degrees), then sint16 magnitudes filling the
/// rest of the packet (an odd trailing byte is ignored).
public struct CyclingPowerVector: Equatable, Hashable, Sendable, Encodable, GATTCodable {
    /// Direction of the instantaneous measurements (flag bits 4-5).
    public enum MeasurementDirection: String, Sendable, Hashable, Encodable {
        /// Wire values 0-3, in this order.
        case unknown, tangential, radial, lateral
        init(bits: UInt8) {
            switch bits & 0x03 {
            case 1: self = .tangential
            case 2: self = .radial
            case 3: self = .lateral
            default: self = .unknown
            }
        }
        var bits: UInt8 {
            switch self {
            case .unknown: return 0
            case .tangential: return 1
            case .radial: return 2
            case .lateral: return 3
            }
        }
    }

    /// The magnitude array and its unit.
    public enum Magnitudes: Equatable, Hashable, Sendable, Encodable {
        /// Force magnitudes, newtons (flag bit 2).
        case forceNewtons([Int16])
        /// Torque magnitudes, 1/32 N·m (flag bit 3).
        case torque32ndsNewtonMetre([Int16])
    }

    /// Crank revolutions and last crank event time (1/1024 s), when flag bit 0 is set.
    public var crank: CrankRevolutionData?
    /// Angle of the first magnitude, degrees (flag bit 1).
    public var firstCrankMeasurementAngleDegrees: UInt16?
    /// The magnitudes (flag bit 2 or 3), or nil when neither is set.
    public var magnitudes: Magnitudes?
    /// Direction of the measurements.
    public var measurementDirection: MeasurementDirection

    public init(
        crank: CrankRevolutionData? = nil, firstCrankMeasurementAngleDegrees: UInt16? = nil,
        magnitudes: Magnitudes? = nil, measurementDirection: MeasurementDirection = .unknown
    ) {
        self.crank = crank
        self.firstCrankMeasurementAngleDegrees = firstCrankMeasurementAngleDegrees
        self.magnitudes = magnitudes
        self.measurementDirection = measurementDirection
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        do throws(DecodingError) {
            let flags = try reader.readUInt8("flags")
            if flags & 0x0C == 0x0C {
                throw DecodingError.invalid(
                    "flags", expected: "force or torque array, not both", found: FitnessFormat.hex(flags), at: 0)
            }
            if flags & 0x01 != 0 {
                crank = CrankRevolutionData(
                    cumulativeRevolutions: try reader.read(UInt16.self, "cumulative crank revolutions"),
                    lastEventTimeTicks: try reader.read(UInt16.self, "last crank event time"))
            } else {
                crank = nil
            }
            firstCrankMeasurementAngleDegrees =
                flags & 0x02 != 0 ? try reader.read(UInt16.self, "first crank measurement angle") : nil
            measurementDirection = MeasurementDirection(bits: flags >> 4)
            var values: [Int16] = []
            if flags & 0x0C != 0 {
                while reader.remaining >= 2 { values.append(try reader.read(Int16.self, "magnitude")) }
            }
            _ = reader.readRemaining()
            if flags & 0x04 != 0 {
                magnitudes = .forceNewtons(values)
            } else if flags & 0x08 != 0 {
                magnitudes = .torque32ndsNewtonMetre(values)
            } else {
                magnitudes = nil
            }
        } catch {
            throw error.within("Cycling Power Vector")
        }
    }

    public func encode(to writer: inout ByteWriter) {
        var flags: UInt8 = measurementDirection.bits << 4
        if crank != nil { flags |= 0x01 }
        if firstCrankMeasurementAngleDegrees != nil { flags |= 0x02 }
        switch magnitudes {
        case .forceNewtons: flags |= 0x04
        case .torque32ndsNewtonMetre: flags |= 0x08
        case nil: break
        }
        writer.write(flags)
        if let crank {
            writer.write(crank.cumulativeRevolutions)
            writer.write(crank.lastEventTimeTicks)
        }
        if let firstCrankMeasurementAngleDegrees { writer.write(firstCrankMeasurementAngleDegrees) }
        switch magnitudes {
        case let .forceNewtons(values), let .torque32ndsNewtonMetre(values):
            for value in values { writer.write(value) }
        case nil: break
        }
    }

    /// One line, e.g. `crank 12 rev @ 1.000 s, first angle 90°, force 10 20 N (tangential)`.
    public var summary: String {
        var parts: [String] = []
        if let crank {
            parts.append("crank \(crank.cumulativeRevolutions) rev @ \(FitnessFormat.fixed(crank.lastEventTimeSeconds, 3)) s")
        }
        if let angle = firstCrankMeasurementAngleDegrees { parts.append("first angle \(angle)°") }
        switch magnitudes {
        case let .forceNewtons(values):
            parts.append("force " + values.map(String.init).joined(separator: " ") + " N")
        case let .torque32ndsNewtonMetre(values):
            parts.append("torque " + values.map { FitnessFormat.fixed(Double($0) / 32, 2) }.joined(separator: " ") + " N·m")
        case nil: break
        }
        parts.append(measurementDirection.rawValue)
        return parts.joined(separator: ", ")
    }
}
