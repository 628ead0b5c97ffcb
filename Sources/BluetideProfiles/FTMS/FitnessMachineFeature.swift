import BluetideBase

/// Fitness Machine Feature (0x2ACC): what the machine measures and which targets it accepts.
///
/// Two little-endian uint32 bit fields, 8 bytes in all. Example (an Elite trainer):
/// `86 50 00 00 0C E0 00 00` = cadence, distance, resistance level, elapsed time, power;
/// targets resistance, power (ERG), simulation (SIM), wheel circumference, spin-down.
public struct FitnessMachineFeature: GATTCodable, Equatable, Sendable, Encodable, CustomStringConvertible {
    /// Measurements the machine reports (first uint32).
    public var machineFeatures: MachineFeatures
    /// Targets the machine accepts through the control point (second uint32).
    public var targetSettingFeatures: TargetSettingFeatures

    public init(machineFeatures: MachineFeatures, targetSettingFeatures: TargetSettingFeatures) {
        self.machineFeatures = machineFeatures
        self.targetSettingFeatures = targetSettingFeatures
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        machineFeatures = MachineFeatures(rawValue: try reader.read(UInt32.self, "Fitness Machine Feature.machine features"))
        targetSettingFeatures = TargetSettingFeatures(
            rawValue: try reader.read(UInt32.self, "Fitness Machine Feature.target setting features"))
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(machineFeatures.rawValue)
        writer.write(targetSettingFeatures.rawValue)
    }

    public var description: String {
        "measures: \(machineFeatures); targets: \(targetSettingFeatures)"
    }

    /// Machine feature bits (Fitness Machine Feature, first uint32). Bits 17-31 are reserved.
    public struct MachineFeatures: TrainerNamedFlags {
        public var rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let averageSpeed = Self(rawValue: 1 << 0)
        public static let cadence = Self(rawValue: 1 << 1)
        public static let totalDistance = Self(rawValue: 1 << 2)
        public static let inclination = Self(rawValue: 1 << 3)
        public static let elevationGain = Self(rawValue: 1 << 4)
        public static let pace = Self(rawValue: 1 << 5)
        public static let stepCount = Self(rawValue: 1 << 6)
        public static let resistanceLevel = Self(rawValue: 1 << 7)
        public static let strideCount = Self(rawValue: 1 << 8)
        public static let expendedEnergy = Self(rawValue: 1 << 9)
        public static let heartRateMeasurement = Self(rawValue: 1 << 10)
        public static let metabolicEquivalent = Self(rawValue: 1 << 11)
        public static let elapsedTime = Self(rawValue: 1 << 12)
        public static let remainingTime = Self(rawValue: 1 << 13)
        public static let powerMeasurement = Self(rawValue: 1 << 14)
        public static let forceOnBeltAndPowerOutput = Self(rawValue: 1 << 15)
        public static let userDataRetention = Self(rawValue: 1 << 16)
        public static let bitNames: [Int: String] = [
            0: "average speed", 1: "cadence", 2: "total distance", 3: "inclination", 4: "elevation gain",
            5: "pace", 6: "step count", 7: "resistance level", 8: "stride count", 9: "expended energy",
            10: "heart rate measurement", 11: "metabolic equivalent", 12: "elapsed time", 13: "remaining time",
            14: "power measurement", 15: "force on belt and power output", 16: "user data retention",
        ]
    }

    /// Target setting feature bits (Fitness Machine Feature, second uint32). Bits 17-31 are reserved.
    public struct TargetSettingFeatures: TrainerNamedFlags {
        public var rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let speed = Self(rawValue: 1 << 0)
        public static let inclination = Self(rawValue: 1 << 1)
        public static let resistanceLevel = Self(rawValue: 1 << 2)
        /// ERG mode.
        public static let power = Self(rawValue: 1 << 3)
        public static let heartRate = Self(rawValue: 1 << 4)
        public static let targetedExpendedEnergy = Self(rawValue: 1 << 5)
        public static let targetedStepNumber = Self(rawValue: 1 << 6)
        public static let targetedStrideNumber = Self(rawValue: 1 << 7)
        public static let targetedDistance = Self(rawValue: 1 << 8)
        public static let targetedTrainingTime = Self(rawValue: 1 << 9)
        public static let targetedTimeInTwoHeartRateZones = Self(rawValue: 1 << 10)
        public static let targetedTimeInThreeHeartRateZones = Self(rawValue: 1 << 11)
        public static let targetedTimeInFiveHeartRateZones = Self(rawValue: 1 << 12)
        /// SIM mode (wind, grade, rolling resistance, wind resistance).
        public static let indoorBikeSimulation = Self(rawValue: 1 << 13)
        public static let wheelCircumference = Self(rawValue: 1 << 14)
        public static let spinDownControl = Self(rawValue: 1 << 15)
        public static let targetedCadence = Self(rawValue: 1 << 16)
        public static let bitNames: [Int: String] = [
            0: "speed", 1: "inclination", 2: "resistance level", 3: "power", 4: "heart rate",
            5: "targeted expended energy", 6: "targeted steps", 7: "targeted strides", 8: "targeted distance",
            9: "targeted training time", 10: "time in 2 HR zones", 11: "time in 3 HR zones",
            12: "time in 5 HR zones", 13: "indoor bike simulation", 14: "wheel circumference",
            15: "spin-down control", 16: "targeted cadence",
        ]
    }
}
