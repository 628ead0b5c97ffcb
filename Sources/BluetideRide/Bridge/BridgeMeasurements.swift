import BluetideBase
import BluetideProfiles

/// What ``RideBridge`` serves for one merged ride sample: the Indoor Bike Data an FTMS app
/// reads, and the Cycling Power and Heart Rate measurements apps that speak those profiles read.
/// No I/O: samples in, values out.
///
/// Missing metrics stay missing: Indoor Bike Data leaves out a field (speed through the More
/// Data flag), no Cycling Power Measurement is made without power and no Heart Rate Measurement
/// without a heart rate. Crank revolutions for the power measurement are counted from the
/// cadence over time (cumulative count wrapping at 65 536, event time in 1/1024 s wrapping at
/// 64 s), so apps that derive cadence from crank events get the ride's cadence.
public struct BridgeMeasurements: Sendable {
    /// The values for one sample.
    public struct Values: Sendable, Equatable {
        /// Indoor Bike Data (0x2AD2).
        public var indoorBikeData: IndoorBikeData
        /// Cycling Power Measurement (0x2A63), when the sample has power.
        public var cyclingPower: CyclingPowerMeasurement?
        /// Heart Rate Measurement (0x2A37), when the sample has a heart rate.
        public var heartRate: HeartRateMeasurement?
    }

    private var crankRevolutions = 0.0
    private var lastCrankEventSeconds = 0.0
    private var lastTime: Double?
    private var energyJoules = 0.0

    /// A converter with no revolutions counted yet.
    public init() {}

    /// The values for `sample` (call with samples in time order).
    public mutating func values(for sample: RideSample) -> Values {
        let elapsed = lastTime.map { max(sample.time - $0, 0) } ?? 0
        lastTime = sample.time
        if let power = sample.powerWatts { energyJoules += Double(power) * elapsed }
        if let cadence = sample.cadenceRpm, cadence > 0 {
            let before = crankRevolutions.rounded(.down)
            crankRevolutions += cadence / 60 * elapsed
            let whole = crankRevolutions.rounded(.down)
            if whole > before {
                // The last whole revolution happened this long before the sample.
                let secondsPerRevolution = 60 / cadence
                lastCrankEventSeconds = sample.time - (crankRevolutions - whole) * secondsPerRevolution
            }
        }
        var data = IndoorBikeData()
        data.instantaneousSpeedHundredthKmh = sample.speedKmh.map { UInt16(clamping: Int(($0 * 100).rounded())) }
        data.instantaneousCadenceHalfRpm = sample.cadenceRpm.map { UInt16(clamping: Int(($0 * 2).rounded())) }
        data.totalDistanceMeters = UInt32(clamping: min(Int(sample.distanceMeters), 0xFF_FFFF))
        data.instantaneousPowerWatts = sample.powerWatts.map { Int16(clamping: $0) }
        data.heartRateBpm = sample.heartRateBpm.map { UInt8(clamping: $0) }
        data.elapsedTimeSeconds = UInt16(clamping: Int(sample.time))
        var power: CyclingPowerMeasurement?
        if let watts = sample.powerWatts {
            let crank = CrankRevolutionData(
                cumulativeRevolutions: UInt16(truncatingIfNeeded: Int(crankRevolutions)),
                lastEventTimeTicks: UInt16(truncatingIfNeeded: Int((lastCrankEventSeconds * 1024).rounded())))
            power = CyclingPowerMeasurement(
                instantaneousPowerWatts: Int16(clamping: watts), crank: sample.cadenceRpm == nil && crankRevolutions == 0 ? nil : crank)
        }
        let heart = sample.heartRateBpm.map { HeartRateMeasurement(beatsPerMinute: UInt16(clamping: $0), usesUInt16Value: $0 > 255) }
        return Values(indoorBikeData: data, cyclingPower: power, heartRate: heart)
    }

    /// Energy from the power so far, kJ.
    public var energyKilojoules: Double { energyJoules / 1000 }
}
