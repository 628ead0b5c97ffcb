import BluetideBase

/// Cycling Power Measurement (0x2A63), notified by a power meter about once a second.
///
/// Layout: flags (uint16), instantaneous power (**sint16**, W), then optional fields in a fixed
/// order, each present only if its flag is set: pedal power balance (b0), accumulated torque
/// (b2), wheel data (b4, time in **1/2048 s**), crank data (b5, 1/1024 s), extreme force
/// magnitudes (b6), extreme torque magnitudes (b7), extreme angles (b8), top (b9) and bottom
/// (b10) dead spot angles, accumulated energy (b11). Flags b1 (balance reference), b3 (torque
/// source) and b12 (offset compensation indicator) carry no field. Encoding derives the
/// field-present flags from which fields are set.
public struct CyclingPowerMeasurement: Equatable, Hashable, Sendable, Encodable, GATTCodable {
    /// Which pedal the balance refers to (flag bit 1).
    public enum BalanceReference: String, Sendable, Hashable, Encodable {
        /// Bit 1 clear: unknown.
        case unknown
        /// Bit 1 set: the balance is the left pedal's share.
        case left
    }

    /// What the accumulated torque is measured on (flag bit 3).
    public enum TorqueSource: String, Sendable, Hashable, Encodable {
        /// Bit 3 clear.
        case wheelBased
        /// Bit 3 set.
        case crankBased
    }

    /// Maximum and minimum force magnitudes (sint16 each, newtons).
    public struct ExtremeForceMagnitudes: Equatable, Hashable, Sendable, Encodable {
        public var maximumNewtons: Int16
        public var minimumNewtons: Int16
        public init(maximumNewtons: Int16, minimumNewtons: Int16) {
            self.maximumNewtons = maximumNewtons
            self.minimumNewtons = minimumNewtons
        }
    }

    /// Maximum and minimum torque magnitudes (sint16 each, 1/32 N·m).
    public struct ExtremeTorqueMagnitudes: Equatable, Hashable, Sendable, Encodable {
        /// Maximum torque, 1/32 N·m.
        public var maximum32ndsNewtonMetre: Int16
        /// Minimum torque, 1/32 N·m.
        public var minimum32ndsNewtonMetre: Int16
        public init(maximum32ndsNewtonMetre: Int16, minimum32ndsNewtonMetre: Int16) {
            self.maximum32ndsNewtonMetre = maximum32ndsNewtonMetre
            self.minimum32ndsNewtonMetre = minimum32ndsNewtonMetre
        }
        /// Maximum torque, N·m.
        public var maximumNewtonMetres: Double { Double(maximum32ndsNewtonMetre) / 32 }
        /// Minimum torque, N·m.
        public var minimumNewtonMetres: Double { Double(minimum32ndsNewtonMetre) / 32 }
    }

    /// Crank angles at which the extreme magnitudes occurred: two 12-bit values in 3 bytes
    /// (maximum in the low 12 bits, minimum in the next 12), degrees.
    public struct ExtremeAngles: Equatable, Hashable, Sendable, Encodable {
        /// Angle of the maximum, degrees (0-4095; 12 bits).
        public var maximumDegrees: UInt16
        /// Angle of the minimum, degrees (0-4095; 12 bits).
        public var minimumDegrees: UInt16
        /// Values are truncated to 12 bits.
        public init(maximumDegrees: UInt16, minimumDegrees: UInt16) {
            self.maximumDegrees = maximumDegrees & 0x0FFF
            self.minimumDegrees = minimumDegrees & 0x0FFF
        }
        /// The packed 24-bit field.
        var packed: UInt32 { UInt32(maximumDegrees & 0x0FFF) | UInt32(minimumDegrees & 0x0FFF) << 12 }
        init(packed: UInt32) {
            self.init(maximumDegrees: UInt16(packed & 0x0FFF), minimumDegrees: UInt16((packed >> 12) & 0x0FFF))
        }
    }

    /// Instantaneous power, watts (signed: a trainer braking or a sensor offset reads negative).
    public var instantaneousPowerWatts: Int16
    /// Pedal power balance in 1/2 % (flag bit 0); see ``pedalPowerBalancePercent``.
    public var pedalPowerBalanceHalfPercent: UInt8?
    /// Which pedal the balance refers to (flag bit 1, meaningful when a balance is present).
    public var balanceReference: BalanceReference
    /// Accumulated torque in 1/32 N·m, wrapping at 2^16 (flag bit 2).
    public var accumulatedTorque32ndsNewtonMetre: UInt16?
    /// Where the accumulated torque is measured (flag bit 3).
    public var accumulatedTorqueSource: TorqueSource
    /// Wheel revolutions and last wheel event time in **1/2048 s** (flag bit 4).
    public var wheel: WheelRevolutionData?
    /// Crank revolutions and last crank event time in 1/1024 s (flag bit 5).
    public var crank: CrankRevolutionData?
    /// Extreme force magnitudes (flag bit 6).
    public var extremeForceMagnitudes: ExtremeForceMagnitudes?
    /// Extreme torque magnitudes (flag bit 7).
    public var extremeTorqueMagnitudes: ExtremeTorqueMagnitudes?
    /// Extreme angles (flag bit 8).
    public var extremeAngles: ExtremeAngles?
    /// Top dead spot angle, degrees (flag bit 9).
    public var topDeadSpotAngleDegrees: UInt16?
    /// Bottom dead spot angle, degrees (flag bit 10).
    public var bottomDeadSpotAngleDegrees: UInt16?
    /// Accumulated energy, kilojoules, wrapping at 2^16 (flag bit 11).
    public var accumulatedEnergyKilojoules: UInt16?
    /// Offset compensation indicator (flag bit 12, status only).
    public var offsetCompensationIndicator: Bool

    public init(
        instantaneousPowerWatts: Int16, pedalPowerBalanceHalfPercent: UInt8? = nil,
        balanceReference: BalanceReference = .unknown, accumulatedTorque32ndsNewtonMetre: UInt16? = nil,
        accumulatedTorqueSource: TorqueSource = .wheelBased, wheel: WheelRevolutionData? = nil,
        crank: CrankRevolutionData? = nil, extremeForceMagnitudes: ExtremeForceMagnitudes? = nil,
        extremeTorqueMagnitudes: ExtremeTorqueMagnitudes? = nil, extremeAngles: ExtremeAngles? = nil,
        topDeadSpotAngleDegrees: UInt16? = nil, bottomDeadSpotAngleDegrees: UInt16? = nil,
        accumulatedEnergyKilojoules: UInt16? = nil, offsetCompensationIndicator: Bool = false
    ) {
        self.instantaneousPowerWatts = instantaneousPowerWatts
        self.pedalPowerBalanceHalfPercent = pedalPowerBalanceHalfPercent
        self.balanceReference = balanceReference
        self.accumulatedTorque32ndsNewtonMetre = accumulatedTorque32ndsNewtonMetre
        self.accumulatedTorqueSource = accumulatedTorqueSource
        self.wheel = wheel
        self.crank = crank
        self.extremeForceMagnitudes = extremeForceMagnitudes
        self.extremeTorqueMagnitudes = extremeTorqueMagnitudes
        self.extremeAngles = extremeAngles
        self.topDeadSpotAngleDegrees = topDeadSpotAngleDegrees
        self.bottomDeadSpotAngleDegrees = bottomDeadSpotAngleDegrees
        self.accumulatedEnergyKilojoules = accumulatedEnergyKilojoules
        self.offsetCompensationIndicator = offsetCompensationIndicator
    }

    /// Pedal power balance in percent (raw × 0.5).
    public var pedalPowerBalancePercent: Double? { pedalPowerBalanceHalfPercent.map { Double($0) / 2 } }
    /// Accumulated torque in N·m (raw / 32).
    public var accumulatedTorqueNewtonMetres: Double? { accumulatedTorque32ndsNewtonMetre.map { Double($0) / 32 } }
    /// Last wheel event time in seconds (ticks / 2048).
    public var lastWheelEventTimeSeconds: Double? { wheel.map { Double($0.lastEventTimeTicks) / 2048 } }

    /// The flags this value encodes with.
    public var flags: UInt16 {
        var flags: UInt16 = 0
        if pedalPowerBalanceHalfPercent != nil { flags |= 1 << 0 }
        if balanceReference == .left { flags |= 1 << 1 }
        if accumulatedTorque32ndsNewtonMetre != nil { flags |= 1 << 2 }
        if accumulatedTorqueSource == .crankBased { flags |= 1 << 3 }
        if wheel != nil { flags |= 1 << 4 }
        if crank != nil { flags |= 1 << 5 }
        if extremeForceMagnitudes != nil { flags |= 1 << 6 }
        if extremeTorqueMagnitudes != nil { flags |= 1 << 7 }
        if extremeAngles != nil { flags |= 1 << 8 }
        if topDeadSpotAngleDegrees != nil { flags |= 1 << 9 }
        if bottomDeadSpotAngleDegrees != nil { flags |= 1 << 10 }
        if accumulatedEnergyKilojoules != nil { flags |= 1 << 11 }
        if offsetCompensationIndicator { flags |= 1 << 12 }
        return flags
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        do throws(DecodingError) {
            let flags = try reader.read(UInt16.self, "flags")
            func has(_ bit: UInt16) -> Bool { flags & (1 << bit) != 0 }
            instantaneousPowerWatts = try reader.read(Int16.self, "instantaneous power")
            pedalPowerBalanceHalfPercent = has(0) ? try reader.readUInt8("pedal power balance") : nil
            balanceReference = has(1) ? .left : .unknown
            accumulatedTorque32ndsNewtonMetre = has(2) ? try reader.read(UInt16.self, "accumulated torque") : nil
            accumulatedTorqueSource = has(3) ? .crankBased : .wheelBased
            if has(4) {
                wheel = WheelRevolutionData(
                    cumulativeRevolutions: try reader.read(UInt32.self, "cumulative wheel revolutions"),
                    lastEventTimeTicks: try reader.read(UInt16.self, "last wheel event time"))
            } else {
                wheel = nil
            }
            if has(5) {
                crank = CrankRevolutionData(
                    cumulativeRevolutions: try reader.read(UInt16.self, "cumulative crank revolutions"),
                    lastEventTimeTicks: try reader.read(UInt16.self, "last crank event time"))
            } else {
                crank = nil
            }
            if has(6) {
                extremeForceMagnitudes = ExtremeForceMagnitudes(
                    maximumNewtons: try reader.read(Int16.self, "maximum force magnitude"),
                    minimumNewtons: try reader.read(Int16.self, "minimum force magnitude"))
            } else {
                extremeForceMagnitudes = nil
            }
            if has(7) {
                extremeTorqueMagnitudes = ExtremeTorqueMagnitudes(
                    maximum32ndsNewtonMetre: try reader.read(Int16.self, "maximum torque magnitude"),
                    minimum32ndsNewtonMetre: try reader.read(Int16.self, "minimum torque magnitude"))
            } else {
                extremeTorqueMagnitudes = nil
            }
            extremeAngles = has(8) ? ExtremeAngles(packed: try reader.readUInt24("extreme angles")) : nil
            topDeadSpotAngleDegrees = has(9) ? try reader.read(UInt16.self, "top dead spot angle") : nil
            bottomDeadSpotAngleDegrees = has(10) ? try reader.read(UInt16.self, "bottom dead spot angle") : nil
            accumulatedEnergyKilojoules = has(11) ? try reader.read(UInt16.self, "accumulated energy") : nil
            offsetCompensationIndicator = has(12)
        } catch {
            throw error.within("Cycling Power Measurement")
        }
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(flags)
        writer.write(instantaneousPowerWatts)
        if let pedalPowerBalanceHalfPercent { writer.write(pedalPowerBalanceHalfPercent) }
        if let accumulatedTorque32ndsNewtonMetre { writer.write(accumulatedTorque32ndsNewtonMetre) }
        if let wheel {
            writer.write(wheel.cumulativeRevolutions)
            writer.write(wheel.lastEventTimeTicks)
        }
        if let crank {
            writer.write(crank.cumulativeRevolutions)
            writer.write(crank.lastEventTimeTicks)
        }
        if let extremeForceMagnitudes {
            writer.write(extremeForceMagnitudes.maximumNewtons)
            writer.write(extremeForceMagnitudes.minimumNewtons)
        }
        if let extremeTorqueMagnitudes {
            writer.write(extremeTorqueMagnitudes.maximum32ndsNewtonMetre)
            writer.write(extremeTorqueMagnitudes.minimum32ndsNewtonMetre)
        }
        if let extremeAngles { writer.writeUInt24(extremeAngles.packed) }
        if let topDeadSpotAngleDegrees { writer.write(topDeadSpotAngleDegrees) }
        if let bottomDeadSpotAngleDegrees { writer.write(bottomDeadSpotAngleDegrees) }
        if let accumulatedEnergyKilojoules { writer.write(accumulatedEnergyKilojoules) }
    }

    /// One line, e.g. `250 W, balance 50.0 % left, crank 1024 rev @ 32.000 s, energy 150 kJ`.
    public var summary: String {
        var parts = ["\(instantaneousPowerWatts) W"]
        if let percent = pedalPowerBalancePercent {
            parts.append("balance \(FitnessFormat.fixed(percent, 1)) %" + (balanceReference == .left ? " left" : ""))
        }
        if let torque = accumulatedTorqueNewtonMetres {
            parts.append("torque \(FitnessFormat.fixed(torque, 2)) N·m (\(accumulatedTorqueSource == .crankBased ? "crank" : "wheel"))")
        }
        if let wheel, let seconds = lastWheelEventTimeSeconds {
            parts.append("wheel \(wheel.cumulativeRevolutions) rev @ \(FitnessFormat.fixed(seconds, 3)) s")
        }
        if let crank {
            parts.append("crank \(crank.cumulativeRevolutions) rev @ \(FitnessFormat.fixed(crank.lastEventTimeSeconds, 3)) s")
        }
        if let f = extremeForceMagnitudes { parts.append("force \(f.minimumNewtons)…\(f.maximumNewtons) N") }
        if let t = extremeTorqueMagnitudes {
            parts.append("torque \(FitnessFormat.fixed(t.minimumNewtonMetres, 2))…\(FitnessFormat.fixed(t.maximumNewtonMetres, 2)) N·m")
        }
        if let a = extremeAngles { parts.append("angles max \(a.maximumDegrees)° min \(a.minimumDegrees)°") }
        if let top = topDeadSpotAngleDegrees { parts.append("top dead spot \(top)°") }
        if let bottom = bottomDeadSpotAngleDegrees { parts.append("bottom dead spot \(bottom)°") }
        if let energy = accumulatedEnergyKilojoules { parts.append("energy \(energy) kJ") }
        if offsetCompensationIndicator { parts.append("offset compensation") }
        return parts.joined(separator: ", ")
    }
}
