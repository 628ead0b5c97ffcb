import BluetideBase
import BluetideProfiles

/// The metrics one value gave (nil: this value did not carry it).
public struct DeviceMetrics: Sendable, Hashable {
    /// Speed, km/h.
    public var speedKmh: Double?
    /// Cadence, rpm.
    public var cadenceRpm: Double?
    /// Power, W.
    public var powerWatts: Int?
    /// Heart rate, bpm.
    public var heartRateBpm: Int?

    /// Metrics with these values.
    public init(speedKmh: Double? = nil, cadenceRpm: Double? = nil, powerWatts: Int? = nil, heartRateBpm: Int? = nil) {
        self.speedKmh = speedKmh
        self.cadenceRpm = cadenceRpm
        self.powerWatts = powerWatts
        self.heartRateBpm = heartRateBpm
    }

    /// The value of `metric` as a Double.
    public subscript(metric: RideMetric) -> Double? {
        switch metric {
        case .speed: speedKmh
        case .cadence: cadenceRpm
        case .power: powerWatts.map(Double.init)
        case .heartRate: heartRateBpm.map(Double.init)
        }
    }
}

/// Decodes one device's values into metrics, keeping the state that speeds and cadences need
/// (revolution counters, FE-C rollovers). One per device; time is passed in.
public struct DeviceDecoder: Sendable {
    /// The role the values are decoded for.
    public let role: RideDeviceRole
    private var csc: CSCCalculator
    private var power: CyclingPowerCalculator
    private var fec: FECAccumulator

    /// A decoder for `role`, with the wheel circumference in metres (CSC and power-meter speed).
    public init(role: RideDeviceRole, wheelCircumferenceMeters: Double) {
        self.role = role
        csc = CSCCalculator(wheelCircumferenceMetres: wheelCircumferenceMeters)
        power = CyclingPowerCalculator(wheelCircumferenceMetres: wheelCircumferenceMeters)
        fec = FECAccumulator(wheelCircumferenceMeters: wheelCircumferenceMeters)
    }

    /// The metrics in `bytes` received at `time`; throws when the value does not decode (the
    /// value is then skipped, the state kept).
    public mutating func decode(_ bytes: [UInt8], characteristic: BluetoothUUID, at time: Double) throws -> DeviceMetrics {
        guard characteristic == role.dataCharacteristic else { return DeviceMetrics() }
        switch role {
        case .ftmsTrainer:
            // A record split over packets (More Data) gives each field in the packet carrying it.
            let data = try IndoorBikeData(bytes: bytes)
            return DeviceMetrics(
                speedKmh: data.instantaneousSpeedKmh, cadenceRpm: data.instantaneousCadenceRpm,
                powerWatts: data.instantaneousPowerWatts.map(Int.init), heartRateBpm: data.heartRateBpm.map(Int.init))
        case .fecTrainer:
            let frame = try FECFrame(bytes: bytes)
            fec.add(frame, at: time)
            switch frame.page {
            case let .generalData(page):
                return DeviceMetrics(speedKmh: page.speedKmh, heartRateBpm: page.heartRate.map(Int.init))
            case let .trainerData(page):
                return DeviceMetrics(cadenceRpm: page.cadence.map(Double.init), powerWatts: page.power.map(Int.init))
            default:
                return DeviceMetrics()
            }
        case .speedCadence:
            let motion = csc.update(try CSCMeasurement(bytes: bytes), at: time)
            return DeviceMetrics(speedKmh: motion.speedKilometresPerHour, cadenceRpm: motion.cadenceRPM)
        case .power:
            let measurement = try CyclingPowerMeasurement(bytes: bytes)
            let motion = power.update(measurement, at: time)
            return DeviceMetrics(
                speedKmh: motion.speedKilometresPerHour, cadenceRpm: motion.cadenceRPM,
                powerWatts: Int(measurement.instantaneousPowerWatts))
        case .heartRate:
            return DeviceMetrics(heartRateBpm: Int(try HeartRateMeasurement(bytes: bytes).beatsPerMinute))
        }
    }
}
