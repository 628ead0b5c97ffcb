/// Settings shared by the emulated devices; each model reads the ones that concern it.
public struct EmulatorOptions: Hashable, Sendable {
    /// Advertised local name; nil = the model's default (e.g. `Bluetide HRM`, `R02_xxxx`).
    public var localName: String?
    /// Wheel circumference, metres (CSC, cycling power, trainers).
    public var wheelCircumferenceMeters: Double = 2.105
    /// Rider's target speed, km/h (CSC).
    public var speedKilometresPerHour: Double = 30
    /// Rider's cadence, rpm.
    public var cadenceRPM: Double = 90
    /// Rider's own power, watts (cycling power, trainers outside ERG mode).
    public var powerWatts: Double = 200
    /// Rider plus bike mass, kg (trainer physics).
    public var riderMassKilograms: Double = 83
    /// Battery level at start, percent.
    public var batteryPercent: UInt8 = 100
    /// Seconds per percent of battery drain.
    public var batterySecondsPerPercent: Double = 120
    /// Athlete reaction time mean, ms (punch).
    public var reactionMeanMilliseconds: Double = 450
    /// Athlete reaction time standard deviation, ms (punch).
    public var reactionStandardDeviationMilliseconds: Double = 120
    /// Probability that the athlete misses a step (punch).
    public var missProbability: Double = 0.05
    /// Probability that the athlete hits a wrong target first (punch).
    public var wrongTargetProbability: Double = 0.05
    /// The ring's clock at model time 0, seconds since 1970 in the ring's time base (COLMI);
    /// default 2024-08-10 09:00:00.
    public var clockStartSeconds: Int64 = 1_723_280_400

    public init() {}
}
