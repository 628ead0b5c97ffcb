import BluetideBase

/// Requests built from physical units (rounded to the wire resolution, clamped to the field's range).
extension FitnessMachineControlPointRequest {
    /// Set Target Speed in km/h (0.01 km/h resolution).
    public static func targetSpeed(kmh: Double) -> Self {
        .setTargetSpeed(hundredthKmh: trainerScaled(kmh, resolution: 0.01))
    }

    /// Set Target Inclination in percent (0.1 % resolution).
    public static func targetInclination(percent: Double) -> Self {
        .setTargetInclination(tenthPercent: trainerScaled(percent, resolution: 0.1))
    }

    /// Set Target Resistance Level (0.1 resolution): the specification's uint8 form, or with
    /// `wide` the sint16 form some trainers (a Tacx Flux) need after answering 0x03 to the first.
    public static func targetResistance(level: Double, wide: Bool = false) -> Self {
        wide
            ? .setTargetResistanceLevelWide(tenths: trainerScaled(level, resolution: 0.1))
            : .setTargetResistanceLevel(tenths: trainerScaled(level, resolution: 0.1))
    }

    /// Set Targeted Cadence in rpm (0.5 rpm resolution).
    public static func targetedCadence(rpm: Double) -> Self {
        .setTargetedCadence(halfRpm: trainerScaled(rpm, resolution: 0.5))
    }

    /// Set Wheel Circumference in millimetres (0.1 mm resolution).
    public static func wheelCircumference(millimeters: Double) -> Self {
        .setWheelCircumference(tenthMillimeters: trainerScaled(millimeters, resolution: 0.1))
    }

    /// Set Indoor Bike Simulation Parameters from physical units (SIM mode).
    public static func simulation(
        gradePercent: Double, windSpeedMetersPerSecond: Double = 0, rollingResistance: Double = 0.004,
        windResistanceKgPerMeter: Double = 0.51
    ) -> Self {
        .setIndoorBikeSimulation(
            parameters: IndoorBikeSimulationParameters(
                windSpeedMillimetersPerSecond: trainerScaled(windSpeedMetersPerSecond, resolution: 0.001),
                gradeHundredthPercent: trainerScaled(gradePercent, resolution: 0.01),
                rollingResistanceTenThousandths: trainerScaled(rollingResistance, resolution: 0.0001),
                windResistanceHundredthKgPerMeter: trainerScaled(windResistanceKgPerMeter, resolution: 0.01)))
    }
}
