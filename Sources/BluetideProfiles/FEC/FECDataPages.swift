import BluetideBase

/// Page 16 (0x10) General FE Data, trainer → app, about 1 Hz.
///
/// Elapsed time (0.25 s) and distance (1 m) are one-byte rolling counters that wrap at 64 s
/// and 256 m: use ``FECAccumulator`` for session totals.
public struct FECGeneralData: GATTCodable, Equatable, Sendable, Encodable, CustomStringConvertible {
    public static let pageNumber: UInt8 = 16
    /// Equipment type (byte 1, bits 0-4); 25 = trainer.
    public var equipmentType: FECEquipmentType
    /// Elapsed time, 0.25 s units, wraps at 256 (64 s).
    public var elapsedTimeQuarterSeconds: UInt8
    /// Distance travelled, m, wraps at 256 (valid when ``distanceTraveledEnabled``).
    public var distanceTraveledMeters: UInt8
    /// Speed, 0.001 m/s units; 0xFFFF = invalid.
    public var speedMillimetersPerSecond: UInt16
    /// Heart rate, bpm; 0xFF = invalid.
    public var heartRateBpm: UInt8
    /// Where the heart rate comes from (byte 7, bits 0-1).
    public var heartRateSource: FECHeartRateSource
    /// Byte 7 bit 2: the distance field is valid.
    public var distanceTraveledEnabled: Bool
    /// Byte 7 bit 3: the speed is virtual (computed by the trainer), not measured.
    public var virtualSpeed: Bool
    /// FE state (byte 7, bits 4-6).
    public var state: FEState
    /// Lap toggle (byte 7, bit 7).
    public var lapToggle: Bool

    public init(
        equipmentType: FECEquipmentType = .trainer, elapsedTimeQuarterSeconds: UInt8, distanceTraveledMeters: UInt8,
        speedMillimetersPerSecond: UInt16, heartRateBpm: UInt8 = 0xFF, heartRateSource: FECHeartRateSource = .invalid,
        distanceTraveledEnabled: Bool = true, virtualSpeed: Bool = false, state: FEState, lapToggle: Bool = false
    ) {
        self.equipmentType = equipmentType
        self.elapsedTimeQuarterSeconds = elapsedTimeQuarterSeconds
        self.distanceTraveledMeters = distanceTraveledMeters
        self.speedMillimetersPerSecond = speedMillimetersPerSecond
        self.heartRateBpm = heartRateBpm
        self.heartRateSource = heartRateSource
        self.distanceTraveledEnabled = distanceTraveledEnabled
        self.virtualSpeed = virtualSpeed
        self.state = state
        self.lapToggle = lapToggle
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        let name = "FE-C page 16"
        try readFECPageNumber(Self.pageNumber, name, from: &reader)
        equipmentType = FECEquipmentType(rawValue: try reader.readUInt8("\(name).equipment type") & 0x1F)
        elapsedTimeQuarterSeconds = try reader.readUInt8("\(name).elapsed time")
        distanceTraveledMeters = try reader.readUInt8("\(name).distance traveled")
        speedMillimetersPerSecond = try reader.read(UInt16.self, "\(name).speed")
        heartRateBpm = try reader.readUInt8("\(name).heart rate")
        let bits = try reader.readUInt8("\(name).capabilities and state")
        heartRateSource = FECHeartRateSource(rawValue: bits & 0x03)
        distanceTraveledEnabled = bits & 0x04 != 0
        virtualSpeed = bits & 0x08 != 0
        (state, lapToggle) = fecStateNibble(bits)
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(Self.pageNumber)
        writer.write(equipmentType.rawValue & 0x1F)
        writer.write(elapsedTimeQuarterSeconds)
        writer.write(distanceTraveledMeters)
        writer.write(speedMillimetersPerSecond)
        writer.write(heartRateBpm)
        writer.write(
            (heartRateSource.rawValue & 0x03) | (distanceTraveledEnabled ? 0x04 : 0) | (virtualSpeed ? 0x08 : 0)
                | fecStateNibble(state, lapToggle))
    }

    /// Elapsed time of the rolling counter in seconds (0 to 63.75).
    public var elapsedSeconds: Double { Double(elapsedTimeQuarterSeconds) / 4 }
    /// Speed in m/s, nil when invalid.
    public var speedMetersPerSecond: Double? {
        speedMillimetersPerSecond == 0xFFFF ? nil : Double(speedMillimetersPerSecond) / 1000
    }
    /// Speed in km/h, nil when invalid.
    public var speedKmh: Double? { speedMetersPerSecond.map { $0 * 3.6 } }
    /// Heart rate, nil when invalid.
    public var heartRate: UInt8? { heartRateBpm == 0xFF ? nil : heartRateBpm }

    public var description: String {
        let speed = speedKmh.map { "\(trainerFormat($0, decimals: 2)) km/h" } ?? "speed invalid"
        let hr = heartRate.map { "HR \($0)" } ?? "HR invalid"
        return "page 16 general: \(equipmentType), elapsed \(trainerFormat(elapsedSeconds, decimals: 2)) s (rolling), "
            + "distance \(distanceTraveledEnabled ? "\(distanceTraveledMeters) m (rolling)" : "disabled"), \(speed)"
            + "\(virtualSpeed ? " (virtual)" : ""), \(hr), \(state)"
    }
}

/// Page 17 (0x11) General Settings, trainer → app.
public struct FECGeneralSettings: GATTCodable, Equatable, Sendable, Encodable, CustomStringConvertible {
    public static let pageNumber: UInt8 = 17
    /// Cycle length (wheel circumference for a trainer), 0.01 m units; 0xFF = invalid.
    public var cycleLengthCentimeters: UInt8
    /// Incline, sint16, 0.01 % units; 0x7FFF = invalid.
    public var inclineHundredthPercent: Int16
    /// Resistance level, 0.5 % of the maximum.
    public var resistanceLevelHalfPercent: UInt8
    /// FE state (byte 7, bits 4-6).
    public var state: FEState
    /// Lap toggle (byte 7, bit 7).
    public var lapToggle: Bool

    public init(
        cycleLengthCentimeters: UInt8 = 0xFF, inclineHundredthPercent: Int16 = 0x7FFF, resistanceLevelHalfPercent: UInt8,
        state: FEState, lapToggle: Bool = false
    ) {
        self.cycleLengthCentimeters = cycleLengthCentimeters
        self.inclineHundredthPercent = inclineHundredthPercent
        self.resistanceLevelHalfPercent = resistanceLevelHalfPercent
        self.state = state
        self.lapToggle = lapToggle
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        let name = "FE-C page 17"
        try readFECPageNumber(Self.pageNumber, name, from: &reader)
        try reader.skip(2, "\(name).reserved")
        cycleLengthCentimeters = try reader.readUInt8("\(name).cycle length")
        inclineHundredthPercent = try reader.read(Int16.self, "\(name).incline")
        resistanceLevelHalfPercent = try reader.readUInt8("\(name).resistance level")
        (state, lapToggle) = fecStateNibble(try reader.readUInt8("\(name).state"))
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(Self.pageNumber)
        writer.write(bytes: [0xFF, 0xFF])
        writer.write(cycleLengthCentimeters)
        writer.write(inclineHundredthPercent)
        writer.write(resistanceLevelHalfPercent)
        writer.write(fecStateNibble(state, lapToggle))
    }

    /// Cycle length in metres, nil when invalid.
    public var cycleLengthMeters: Double? { cycleLengthCentimeters == 0xFF ? nil : Double(cycleLengthCentimeters) / 100 }
    /// Incline in percent, nil when invalid.
    public var inclinePercent: Double? { inclineHundredthPercent == 0x7FFF ? nil : Double(inclineHundredthPercent) / 100 }
    /// Resistance level in percent of the maximum.
    public var resistancePercent: Double { Double(resistanceLevelHalfPercent) / 2 }

    public var description: String {
        let cycle = cycleLengthMeters.map { "cycle length \(trainerFormat($0, decimals: 2)) m" } ?? "cycle length invalid"
        let incline = inclinePercent.map { "incline \(trainerFormat($0, decimals: 2)) %" } ?? "incline invalid"
        return "page 17 settings: \(cycle), \(incline), resistance \(trainerFormat(resistancePercent, decimals: 1)) %, \(state)"
    }
}

/// Page 25 (0x19) Specific Trainer / Stationary Bike Data, trainer → app, about 4 Hz.
///
/// Average power over an interval = Δ accumulated power (mod 65536) / Δ event count (mod 256).
public struct FECTrainerData: GATTCodable, Equatable, Sendable, Encodable, CustomStringConvertible {
    public static let pageNumber: UInt8 = 25
    /// Update event count, wraps at 256.
    public var eventCount: UInt8
    /// Instantaneous cadence, rpm; 0xFF = invalid.
    public var cadenceRpm: UInt8
    /// Accumulated power, W (sum of each event's power), wraps at 65536.
    public var accumulatedPowerWatts: UInt16
    /// Instantaneous power, W, 12 bits; 0xFFF = invalid.
    public var instantaneousPowerWatts: UInt16
    /// Trainer status bits (byte 6, bits 4-7).
    public var trainerStatus: TrainerStatus
    /// Target power limits (byte 7, bits 0-1).
    public var targetPowerLimits: TargetPowerLimits
    /// FE state (byte 7, bits 4-6).
    public var state: FEState
    /// Lap toggle (byte 7, bit 7).
    public var lapToggle: Bool

    /// Trainer status bits: which calibrations or settings the trainer asks for.
    public struct TrainerStatus: TrainerNamedFlags {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let bicyclePowerCalibrationRequired = Self(rawValue: 1 << 0)
        public static let resistanceCalibrationRequired = Self(rawValue: 1 << 1)
        public static let userConfigurationRequired = Self(rawValue: 1 << 2)
        public static let bitNames: [Int: String] = [
            0: "bicycle power calibration required", 1: "resistance calibration required",
            2: "user configuration required",
        ]
    }

    /// Whether the trainer can hold the target power.
    public struct TargetPowerLimits: TrainerNamedCode {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let atTarget = Self(rawValue: 0)
        public static let speedTooLow = Self(rawValue: 1)
        public static let speedTooHigh = Self(rawValue: 2)
        public static let limitReached = Self(rawValue: 3)
        public static let names: [UInt8: String] = [
            0: "at target", 1: "speed too low", 2: "speed too high", 3: "undetermined or limit reached",
        ]
    }

    public init(
        eventCount: UInt8, cadenceRpm: UInt8, accumulatedPowerWatts: UInt16, instantaneousPowerWatts: UInt16,
        trainerStatus: TrainerStatus = [], targetPowerLimits: TargetPowerLimits = .atTarget, state: FEState,
        lapToggle: Bool = false
    ) {
        self.eventCount = eventCount
        self.cadenceRpm = cadenceRpm
        self.accumulatedPowerWatts = accumulatedPowerWatts
        self.instantaneousPowerWatts = instantaneousPowerWatts & 0x0FFF
        self.trainerStatus = trainerStatus
        self.targetPowerLimits = targetPowerLimits
        self.state = state
        self.lapToggle = lapToggle
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        let name = "FE-C page 25"
        try readFECPageNumber(Self.pageNumber, name, from: &reader)
        eventCount = try reader.readUInt8("\(name).event count")
        cadenceRpm = try reader.readUInt8("\(name).cadence")
        accumulatedPowerWatts = try reader.read(UInt16.self, "\(name).accumulated power")
        let low = try reader.readUInt8("\(name).instantaneous power")
        let high = try reader.readUInt8("\(name).instantaneous power and trainer status")
        instantaneousPowerWatts = UInt16(low) | UInt16(high & 0x0F) << 8
        trainerStatus = TrainerStatus(rawValue: high >> 4)
        let bits = try reader.readUInt8("\(name).flags and state")
        targetPowerLimits = TargetPowerLimits(rawValue: bits & 0x03)
        (state, lapToggle) = fecStateNibble(bits)
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(Self.pageNumber)
        writer.write(eventCount)
        writer.write(cadenceRpm)
        writer.write(accumulatedPowerWatts)
        writer.write(UInt8(truncatingIfNeeded: instantaneousPowerWatts))
        writer.write(UInt8(truncatingIfNeeded: (instantaneousPowerWatts >> 8) & 0x0F) | (trainerStatus.rawValue & 0x0F) << 4)
        writer.write((targetPowerLimits.rawValue & 0x03) | fecStateNibble(state, lapToggle))
    }

    /// Cadence, nil when invalid.
    public var cadence: UInt8? { cadenceRpm == 0xFF ? nil : cadenceRpm }
    /// Instantaneous power, nil when invalid.
    public var power: UInt16? { instantaneousPowerWatts == 0xFFF ? nil : instantaneousPowerWatts }

    public var description: String {
        let cadence = self.cadence.map { "\($0) rpm" } ?? "cadence invalid"
        let power = self.power.map { "\($0) W" } ?? "power invalid"
        var text = "page 25 trainer: event \(eventCount), \(cadence), \(power), accumulated \(accumulatedPowerWatts) W, "
            + "\(targetPowerLimits), \(state)"
        if !trainerStatus.isEmpty { text += ", \(trainerStatus)" }
        return text
    }
}

/// Page 26 (0x1A) Specific Trainer Torque Data, trainer → app.
///
/// Over an interval: angular velocity = 2π·Δevents / (Δperiod / 2048) rad/s, torque =
/// Δtorque / (32·Δevents) N·m, power = torque × angular velocity, speed = C·Δevents / (Δperiod / 2048).
public struct FECTrainerTorqueData: GATTCodable, Equatable, Sendable, Encodable, CustomStringConvertible {
    public static let pageNumber: UInt8 = 26
    /// Update event count, wraps at 256.
    public var eventCount: UInt8
    /// Wheel ticks (revolutions), wraps at 256.
    public var wheelTicks: UInt8
    /// Accumulated wheel period, 1/2048 s units, wraps at 65536.
    public var accumulatedWheelPeriod2048ths: UInt16
    /// Accumulated torque, 1/32 N·m units, wraps at 65536.
    public var accumulatedTorque32ndsNewtonMeter: UInt16
    /// FE state (byte 7, bits 4-6).
    public var state: FEState
    /// Lap toggle (byte 7, bit 7).
    public var lapToggle: Bool

    public init(
        eventCount: UInt8, wheelTicks: UInt8, accumulatedWheelPeriod2048ths: UInt16,
        accumulatedTorque32ndsNewtonMeter: UInt16, state: FEState, lapToggle: Bool = false
    ) {
        self.eventCount = eventCount
        self.wheelTicks = wheelTicks
        self.accumulatedWheelPeriod2048ths = accumulatedWheelPeriod2048ths
        self.accumulatedTorque32ndsNewtonMeter = accumulatedTorque32ndsNewtonMeter
        self.state = state
        self.lapToggle = lapToggle
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        let name = "FE-C page 26"
        try readFECPageNumber(Self.pageNumber, name, from: &reader)
        eventCount = try reader.readUInt8("\(name).event count")
        wheelTicks = try reader.readUInt8("\(name).wheel ticks")
        accumulatedWheelPeriod2048ths = try reader.read(UInt16.self, "\(name).accumulated wheel period")
        accumulatedTorque32ndsNewtonMeter = try reader.read(UInt16.self, "\(name).accumulated torque")
        (state, lapToggle) = fecStateNibble(try reader.readUInt8("\(name).state"))
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(Self.pageNumber)
        writer.write(eventCount)
        writer.write(wheelTicks)
        writer.write(accumulatedWheelPeriod2048ths)
        writer.write(accumulatedTorque32ndsNewtonMeter)
        writer.write(fecStateNibble(state, lapToggle))
    }

    public var description: String {
        "page 26 torque: event \(eventCount), wheel ticks \(wheelTicks), period \(accumulatedWheelPeriod2048ths)/2048 s, "
            + "torque \(accumulatedTorque32ndsNewtonMeter)/32 N·m (accumulated), \(state)"
    }
}
