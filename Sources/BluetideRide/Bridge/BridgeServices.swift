import Bluetide

/// The Fitness Machine service (0x1826) the bridge serves, as an indoor bike: Feature, Indoor
/// Bike Data, Training Status, the supported inclination, resistance and power ranges, the
/// Control Point (write, answered by indications) and Fitness Machine Status.
final class FitnessMachineBridgeService: GATTService, Sendable {
    static let uuid = BluetoothUUID.fitnessMachine

    let feature = Characteristic(.fitnessMachineFeature, [.read], value: FTMSBridgeCore.feature)
    let indoorBikeData = Characteristic(.indoorBikeData, [.notify], value: IndoorBikeData())
    let trainingStatus = Characteristic(.trainingStatus, [.read, .notify], value: TrainingStatus(status: .idle))
    let inclinationRange = Characteristic(.supportedInclinationRange, [.read], value: FTMSBridgeCore.inclinationRange)
    let resistanceRange = Characteristic(.supportedResistanceLevelRange, [.read], value: FTMSBridgeCore.resistanceRange)
    let powerRange = Characteristic(.supportedPowerRange, [.read], value: FTMSBridgeCore.powerRange)
    let controlPoint = Characteristic(.fitnessMachineControlPoint, [.write, .indicate], value: [UInt8](), maximumLength: 20)
    let status = Characteristic(.fitnessMachineStatus, [.notify], value: [UInt8]())
}

/// The Cycling Power service (0x1818): measurement (power and crank revolutions), feature
/// (crank revolution data) and sensor location (rear hub: a trainer).
final class CyclingPowerBridgeService: GATTService, Sendable {
    static let uuid = BluetoothUUID.cyclingPower

    let measurement = Characteristic(.cyclingPowerMeasurement, [.notify], value: CyclingPowerMeasurement(instantaneousPowerWatts: 0))
    let feature = Characteristic(.cyclingPowerFeature, [.read], value: CyclingPowerFeature.crankRevolutionData)
    /// Sensor Location 13: rear hub.
    let location = Characteristic(.sensorLocation, [.read], value: UInt8(13))
}

/// The Heart Rate service (0x180D): the ride's heart rate, whichever device gave it.
final class HeartRateBridgeService: GATTService, Sendable {
    static let uuid = BluetoothUUID.heartRate

    let measurement = Characteristic(.heartRateMeasurement, [.notify], value: HeartRateMeasurement(beatsPerMinute: 0))
}
