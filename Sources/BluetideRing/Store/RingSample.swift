import Foundation

/// One measurement: what (``kind``), when (UTC), how much, in which unit. The tidy row of the
/// store and of every export.
public struct RingSample: Hashable, Sendable, Codable {
    /// Start of the measurement (or of the interval it covers), UTC.
    public var time: Date
    /// What was measured; see ``RingSampleKind``.
    public var kind: String
    /// The value, in ``unit``.
    public var value: Double
    /// `bpm`, `steps`, `kcal`, `m`, `%`, `ms`, `min`, `°C` or `index`.
    public var unit: String

    public init(time: Date, kind: String, value: Double, unit: String) {
        self.time = time
        self.kind = kind
        self.value = value
        self.unit = unit
    }
}

/// The kinds a sync stores, with their units and the interval each row covers.
public enum RingSampleKind {
    /// Heart rate from the ring's own log (every logging interval), bpm.
    public static let heartRate = "heart_rate"
    /// Steps in a quarter hour.
    public static let steps = "steps"
    /// Energy in a quarter hour, kcal.
    public static let calories = "calories"
    /// Distance in a quarter hour, m.
    public static let distance = "distance"
    /// Blood oxygen, hourly mean of the ring's minimum and maximum, %.
    public static let spo2 = "spo2"
    /// Stress index per half hour (0-100).
    public static let stress = "stress"
    /// Heart-rate variability per half hour, ms.
    public static let hrv = "hrv"
    /// Skin temperature per half hour, °C.
    public static let temperature = "temperature"
    /// Sleep periods by stage: minutes of the stage starting at the row's time.
    public static let sleepLight = "sleep_light"
    public static let sleepDeep = "sleep_deep"
    public static let sleepREM = "sleep_rem"
    public static let sleepAwake = "sleep_awake"

    /// Every kind with its unit, in the order they are listed in docs and exports.
    public static let all: [(kind: String, unit: String)] = [
        (heartRate, "bpm"), (steps, "steps"), (calories, "kcal"), (distance, "m"), (spo2, "%"), (stress, "index"),
        (hrv, "ms"), (temperature, "°C"), (sleepLight, "min"), (sleepDeep, "min"), (sleepREM, "min"), (sleepAwake, "min"),
    ]
}
