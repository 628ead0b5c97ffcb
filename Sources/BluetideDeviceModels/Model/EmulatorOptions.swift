import BluetideBase

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
    /// Athlete reaction time mean, ms (punch; the simulated athlete's documented default).
    public var reactionMeanMilliseconds: Double = AthleteBehaviour().meanReactionMilliseconds
    /// Athlete reaction time standard deviation, ms (punch).
    public var reactionStandardDeviationMilliseconds: Double = AthleteBehaviour().reactionStandardDeviationMilliseconds
    /// Probability that the athlete misses a step (punch).
    public var missProbability: Double = 0.05
    /// Probability that the athlete hits a wrong target first (punch).
    public var wrongTargetProbability: Double = 0.05
    /// The ring's clock at model time 0, seconds since 1970 in the ring's time base (COLMI);
    /// nil (the default) = the current time, UTC, when the model is made.
    public var clockStartSeconds: Int64?

    /// Numeric lines the serial devices (hm10, nus) print by themselves: sine, counter or both;
    /// nil: none (they only echo).
    public var serialStream: NumericLineStream.Series?
    /// Lines a second of ``serialStream``.
    public var serialStreamRate: Double = 10
    /// Heart-rate measurements notified a second (heart-rate); 1 like a real strap, more to
    /// offer a benchmark its load (`--option rate=500`).
    public var heartRateNotificationsPerSecond: Double = 1

    /// Memberwise initialiser.
    public init() {}
}

/// A `key=value` setting the options do not accept.
public struct EmulatorOptionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The key as given.
    public var key: String
    /// What was wrong.
    public var problem: String
    /// `speed: expected a number, found "fast"`.
    public var description: String { "\(key): \(problem)" }
}

extension EmulatorOptions {
    /// Keys accepted by ``set(_:to:)`` with what each sets, for command-line help.
    public static let keys: [(key: String, meaning: String)] = [
        ("name", "advertised local name"),
        ("wheel", "wheel circumference, metres"),
        ("speed", "rider speed, km/h (csc)"),
        ("cadence", "rider cadence, rpm"),
        ("power", "rider power, W"),
        ("mass", "rider plus bike mass, kg"),
        ("battery", "battery level at start, %"),
        ("battery-drain", "seconds per percent of battery"),
        ("reaction-mean", "athlete reaction time mean, ms (punch)"),
        ("reaction-sd", "athlete reaction time standard deviation, ms (punch)"),
        ("miss", "probability of a missed step, 0...1 (punch)"),
        ("wrong", "probability of a wrong target first, 0...1 (punch)"),
        ("clock", "ring clock at start, seconds since 1970 (colmi-r02; default now)"),
        ("stream", "numeric lines printed by itself: sine, counter or both (hm10, nus)"),
        ("stream-rate", "lines a second of stream, 0.1...1000 (hm10, nus; default 10)"),
        ("rate", "measurements notified a second, 0.1...1000 (heart-rate; default 1)"),
    ]

    /// Sets one option from text, e.g. `set("power", to: "250")` (for `--option power=250`).
    public mutating func set(_ key: String, to text: String) throws(EmulatorOptionError) {
        func number(_ range: ClosedRange<Double>) throws(EmulatorOptionError) -> Double {
            guard let value = Double(text), value.isFinite, range.contains(value) else {
                throw EmulatorOptionError(key: key, problem: "expected a number in \(range.lowerBound)...\(range.upperBound), found \"\(text)\"")
            }
            return value
        }
        switch key {
        case "name": localName = text
        case "wheel": wheelCircumferenceMeters = try number(0.5...4)
        case "speed": speedKilometresPerHour = try number(0...120)
        case "cadence": cadenceRPM = try number(0...250)
        case "power": powerWatts = try number(0...2000)
        case "mass": riderMassKilograms = try number(20...300)
        case "battery": batteryPercent = UInt8(try number(0...100))
        case "battery-drain": batterySecondsPerPercent = try number(0.01...1_000_000)
        case "reaction-mean": reactionMeanMilliseconds = try number(50...10_000)
        case "reaction-sd": reactionStandardDeviationMilliseconds = try number(0...5_000)
        case "miss": missProbability = try number(0...1)
        case "wrong": wrongTargetProbability = try number(0...1)
        case "clock": clockStartSeconds = Int64(try number(946_684_800...4_102_444_799))
        case "stream":
            guard let series = NumericLineStream.Series(rawValue: text.lowercased()) else {
                throw EmulatorOptionError(key: key, problem: "expected sine, counter or both, found \"\(text)\"")
            }
            serialStream = series
        case "stream-rate": serialStreamRate = try number(0.1...1000)
        case "rate": heartRateNotificationsPerSecond = try number(0.1...1000)
        default:
            throw EmulatorOptionError(key: key, problem: "unknown option; known: \(Self.keys.map(\.key).joined(separator: ", "))")
        }
    }
}
