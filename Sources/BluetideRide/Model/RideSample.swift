/// The quantities a ride measures.
public enum RideMetric: String, Sendable, Hashable, Codable, CaseIterable {
    /// Speed, km/h.
    case speed
    /// Pedalling cadence, rpm.
    case cadence
    /// Power at the pedals (or the trainer's brake), W.
    case power
    /// Heart rate, beats per minute.
    case heartRate
}

/// Why a sample was made.
public enum RideSampleTrigger: String, Sendable, Hashable, Codable {
    /// A device sent a value.
    case update
    /// A whole second of ride time passed.
    case tick
}

/// What the trainer is asked to do.
public enum RideTarget: Sendable, Hashable, Codable, CustomStringConvertible {
    /// ERG: hold this power, W.
    case power(watts: Int)
    /// Simulation: ride this grade, %.
    case grade(percent: Double)
    /// Basic resistance, % of the trainer's range.
    case resistance(percent: Double)

    /// `200 W`, `4.5 %`, `resistance 30 %`.
    public var description: String {
        switch self {
        case let .power(watts): "\(watts) W"
        case let .grade(percent): "\(RideFormat.fixed(percent, 1)) %"
        case let .resistance(percent): "resistance \(RideFormat.fixed(percent, 0)) %"
        }
    }
}

/// Where a workout stands at a sample.
public struct WorkoutPosition: Sendable, Hashable, Codable {
    /// Index of the current step, 0-based.
    public var stepIndex: Int
    /// Number of steps.
    public var stepCount: Int
    /// Seconds into the current step.
    public var stepElapsedSeconds: Double
    /// Length of the current step, seconds.
    public var stepDurationSeconds: Double
    /// Seconds into the workout.
    public var elapsedSeconds: Double
    /// Length of the workout, seconds.
    public var totalSeconds: Double
    /// Whether the workout is over.
    public var isFinished: Bool

    /// A position with these parts.
    public init(
        stepIndex: Int, stepCount: Int, stepElapsedSeconds: Double, stepDurationSeconds: Double, elapsedSeconds: Double,
        totalSeconds: Double, isFinished: Bool
    ) {
        self.stepIndex = stepIndex
        self.stepCount = stepCount
        self.stepElapsedSeconds = stepElapsedSeconds
        self.stepDurationSeconds = stepDurationSeconds
        self.elapsedSeconds = elapsedSeconds
        self.totalSeconds = totalSeconds
        self.isFinished = isFinished
    }

    /// Fraction of the workout done, 0…1.
    public var progress: Double { totalSeconds > 0 ? min(max(elapsedSeconds / totalSeconds, 0), 1) : 1 }
}

/// The ride at one moment, merged from every device: what each metric is now (nil when no device
/// gives it, or the one that does is silent or disconnected: a gap is missing, never zero), which
/// device gave it, and the distance so far.
public struct RideSample: Sendable, Hashable, Codable {
    /// Seconds since the ride started.
    public var time: Double
    /// Why this sample was made.
    public var trigger: RideSampleTrigger
    /// Speed, km/h.
    public var speedKmh: Double?
    /// Cadence, rpm.
    public var cadenceRpm: Double?
    /// Power, W.
    public var powerWatts: Int?
    /// Heart rate, bpm.
    public var heartRateBpm: Int?
    /// Distance since the start, metres (the chosen speed integrated over time; a gap adds nothing).
    public var distanceMeters: Double
    /// The device label each present metric came from.
    public var sources: [RideMetric: String]
    /// What the trainer is asked to do, when anything.
    public var target: RideTarget?
    /// The workout's position, when riding one.
    public var workout: WorkoutPosition?

    /// A sample with these parts.
    public init(
        time: Double, trigger: RideSampleTrigger, speedKmh: Double? = nil, cadenceRpm: Double? = nil, powerWatts: Int? = nil,
        heartRateBpm: Int? = nil, distanceMeters: Double = 0, sources: [RideMetric: String] = [:], target: RideTarget? = nil,
        workout: WorkoutPosition? = nil
    ) {
        self.time = time
        self.trigger = trigger
        self.speedKmh = speedKmh
        self.cadenceRpm = cadenceRpm
        self.powerWatts = powerWatts
        self.heartRateBpm = heartRateBpm
        self.distanceMeters = distanceMeters
        self.sources = sources
        self.target = target
        self.workout = workout
    }
}
