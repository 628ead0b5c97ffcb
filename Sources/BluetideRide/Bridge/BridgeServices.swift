import Bluetide

/// The Fitness Machine service (0x1826) the bridge serves, as an indoor bike: Feature, Indoor
/// Bike Data, Training Status, the supported inclination, resistance and power ranges, the
/// Control Point (write, answered by indications) and Fitness Machine Status.
final class FitnessMachineBridgeService: GATTService {
    static let uuid = BluetoothUUID.fitnessMachine

    @Characteristic(.fitnessMachineFeature, [.read]) var feature = FTMSBridgeCore.feature
    @Characteristic(.indoorBikeData, [.notify]) var indoorBikeData = IndoorBikeData()
    @Characteristic(.trainingStatus, [.read, .notify]) var trainingStatus = TrainingStatus(status: .idle)
    @Characteristic(.supportedInclinationRange, [.read]) var inclinationRange = FTMSBridgeCore.inclinationRange
    @Characteristic(.supportedResistanceLevelRange, [.read]) var resistanceRange = FTMSBridgeCore.resistanceRange
    @Characteristic(.supportedPowerRange, [.read]) var powerRange = FTMSBridgeCore.powerRange
    @Characteristic(.fitnessMachineControlPoint, [.write, .indicate], maximumLength: 20) var controlPoint: [UInt8] = []
    @Characteristic(.fitnessMachineStatus, [.notify]) var status: [UInt8] = []
}

/// The Cycling Power service (0x1818): measurement (power and crank revolutions), feature
/// (crank revolution data) and sensor location (rear hub: a trainer).
final class CyclingPowerBridgeService: GATTService {
    static let uuid = BluetoothUUID.cyclingPower

    @Characteristic(.cyclingPowerMeasurement, [.notify]) var measurement = CyclingPowerMeasurement(instantaneousPowerWatts: 0)
    @Characteristic(.cyclingPowerFeature, [.read]) var feature = CyclingPowerFeature.crankRevolutionData
    /// Sensor Location 13: rear hub.
    @Characteristic(.sensorLocation, [.read]) var location: UInt8 = 13
}

/// The Heart Rate service (0x180D): the ride's heart rate, whichever device gave it.
final class HeartRateBridgeService: GATTService {
    static let uuid = BluetoothUUID.heartRate

    @Characteristic(.heartRateMeasurement, [.notify]) var measurement = HeartRateMeasurement(beatsPerMinute: 0)
}

// Safe to share across tasks: each class holds only `@Characteristic` boxes, each a `Sendable`
// value guarded by its own mutex (see GATTService).
extension FitnessMachineBridgeService: @unchecked Sendable {}
extension CyclingPowerBridgeService: @unchecked Sendable {}
extension HeartRateBridgeService: @unchecked Sendable {}
