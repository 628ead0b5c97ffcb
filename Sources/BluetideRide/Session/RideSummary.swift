/// What a ride (or the part of it a workout took) came to: time, distance and the averages of
/// its once-a-second samples. Missing values (a gap, a device that gives no such metric) count
/// for nothing; a metric never present is nil. No I/O: feed it samples.
public struct RideSummary: Sendable, Hashable {
    /// Seconds from the first to the last tick sample.
    public private(set) var durationSeconds = 0.0
    /// Distance at the last sample minus the first, metres.
    public private(set) var distanceMeters = 0.0
    /// Average power over the samples that had one, W.
    public var averagePowerWatts: Double? { power.average }
    /// Highest power, W.
    public private(set) var maximumPowerWatts: Int?
    /// Average speed over the samples that had one, km/h.
    public var averageSpeedKmh: Double? { speed.average }
    /// Average cadence, rpm.
    public var averageCadenceRpm: Double? { cadence.average }
    /// Average heart rate, bpm.
    public var averageHeartRateBpm: Double? { heartRate.average }
    /// Highest heart rate, bpm.
    public private(set) var maximumHeartRateBpm: Int?

    private struct Mean: Sendable, Hashable {
        var sum = 0.0
        var count = 0
        mutating func add(_ value: Double?) {
            guard let value, value.isFinite else { return }
            sum += value
            count += 1
        }
        var average: Double? { count > 0 ? sum / Double(count) : nil }
    }
    private var power = Mean()
    private var speed = Mean()
    private var cadence = Mean()
    private var heartRate = Mean()
    private var firstTime: Double?
    private var firstDistance = 0.0

    /// An empty summary.
    public init() {}

    /// Adds a sample; only tick samples (once a second) count.
    public mutating func add(_ sample: RideSample) {
        guard sample.trigger == .tick else { return }
        if firstTime == nil {
            firstTime = sample.time
            firstDistance = sample.distanceMeters
        }
        durationSeconds = sample.time - (firstTime ?? sample.time)
        distanceMeters = sample.distanceMeters - firstDistance
        power.add(sample.powerWatts.map(Double.init))
        speed.add(sample.speedKmh)
        cadence.add(sample.cadenceRpm)
        heartRate.add(sample.heartRateBpm.map(Double.init))
        if let watts = sample.powerWatts { maximumPowerWatts = max(maximumPowerWatts ?? watts, watts) }
        if let bpm = sample.heartRateBpm { maximumHeartRateBpm = max(maximumHeartRateBpm ?? bpm, bpm) }
    }

    /// `10:00, 5.20 km, 201 W average (max 250 W), 30.1 km/h, 89 rpm, 140 bpm (max 152 bpm)`:
    /// metrics never present are left out.
    public var text: String {
        var parts = [RideFormat.clock(durationSeconds), "\(RideFormat.fixed(distanceMeters / 1000, 2)) km"]
        if let watts = averagePowerWatts {
            parts.append("\(RideFormat.fixed(watts, 0)) W average" + (maximumPowerWatts.map { " (max \($0) W)" } ?? ""))
        }
        if let kmh = averageSpeedKmh { parts.append("\(RideFormat.fixed(kmh, 1)) km/h") }
        if let rpm = averageCadenceRpm { parts.append("\(RideFormat.fixed(rpm, 0)) rpm") }
        if let bpm = averageHeartRateBpm {
            parts.append("\(RideFormat.fixed(bpm, 0)) bpm" + (maximumHeartRateBpm.map { " (max \($0) bpm)" } ?? ""))
        }
        return parts.joined(separator: ", ")
    }
}
