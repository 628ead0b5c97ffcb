import Bluetide
import Foundation

/// Everything a COLMI ring lets a phone set, as read from the ring.
///
/// Read with ``Ring/settings()``, change with ``Ring/changeSettings(_:)``. Each group is one
/// command on the wire: heart-rate logging `16`, the monitoring switches `2C` `36` `38` `3A`,
/// the user profile with units and time format `0A`, the goals `21`, and the display `05`
/// (rings with a screen; it can only be written).
public struct RingSettings: Hashable, Sendable {
    /// Heart-rate logging: on or off and the interval in minutes.
    public var heartRateLog: COLMIHeartRateLogSettings
    /// All-day monitoring switches, for the kinds this ring has (a kind it lacks is absent).
    public var monitoring: [COLMIAutoMeasurementKind: Bool]
    /// Time format, units, sex, age, height, weight, blood pressure and the HR warning.
    public var profile: COLMIUserPreferences
    /// Daily goals: steps, calories, distance, sport and sleep minutes.
    public var goals: COLMIGoals
    /// Display settings this session wrote (nil: not written; the protocol has no read).
    public var display: COLMIDisplaySettings?

    public init(
        heartRateLog: COLMIHeartRateLogSettings, monitoring: [COLMIAutoMeasurementKind: Bool], profile: COLMIUserPreferences,
        goals: COLMIGoals, display: COLMIDisplaySettings? = nil
    ) {
        self.heartRateLog = heartRateLog
        self.monitoring = monitoring
        self.profile = profile
        self.goals = goals
        self.display = display
    }

    /// Display settings written when a change names only some display keys (the ring cannot
    /// be asked for the current ones): on, left hand, brightness 3, 07:00 to 22:00.
    public static let defaultDisplay = COLMIDisplaySettings(
        enabled: true, leftHand: true, brightness: 3, allDay: false, fromMinuteOfDay: 7 * 60, toMinuteOfDay: 22 * 60)

    /// These settings with `changes` applied in order (pure; nothing is sent).
    public func applying(_ changes: [RingSettingChange]) -> RingSettings {
        var s = self
        for change in changes { s.apply(change) }
        return s
    }

    private mutating func apply(_ change: RingSettingChange) {
        let v = change.number
        switch change.key {
        case .heartRateLog: heartRateLog.enabled = change.flag
        case .heartRateInterval: heartRateLog.intervalMinutes = UInt8(clamping: v)
        case .spo2: monitoring[.spo2] = change.flag
        case .stress: monitoring[.stress] = change.flag
        case .hrv: monitoring[.hrv] = change.flag
        case .temperature: monitoring[.temperature] = change.flag
        case .timeFormat: profile.timeFormat = UInt8(clamping: v)
        case .units: profile.units = UInt8(clamping: v)
        case .sex: profile.gender = UInt8(clamping: v)
        case .age: profile.ageYears = UInt8(clamping: v)
        case .height: profile.heightCentimeters = UInt8(clamping: v)
        case .weight: profile.weightKilograms = UInt8(clamping: v)
        case .systolic: profile.systolicMmHg = UInt8(clamping: v)
        case .diastolic: profile.diastolicMmHg = UInt8(clamping: v)
        case .heartRateWarning: profile.heartRateWarningBPM = UInt8(clamping: v)
        case .stepsGoal: goals.steps = UInt32(clamping: v)
        case .caloriesGoal: goals.calories = UInt32(clamping: v)
        case .distanceGoal: goals.distanceMeters = UInt32(clamping: v)
        case .sportGoal: goals.sportMinutes = UInt16(clamping: v)
        case .sleepGoal: goals.sleepMinutes = UInt16(clamping: v)
        case .display: editDisplay { $0.enabled = change.flag }
        case .hand: editDisplay { $0.leftHand = v == 1 }
        case .brightness: editDisplay { $0.brightness = UInt8(clamping: v) }
        case .displayAllDay: editDisplay { $0.allDay = change.flag }
        case .displayFrom: editDisplay { $0.fromMinuteOfDay = v }
        case .displayTo: editDisplay { $0.toMinuteOfDay = v }
        }
    }

    private mutating func editDisplay(_ edit: (inout COLMIDisplaySettings) -> Void) {
        var d = display ?? Self.defaultDisplay
        edit(&d)
        display = d
    }

    /// The value of `key` as `--set` takes it (`on`, `24h`, `8000`, `07:00`), nil when the ring
    /// lacks the setting or it cannot be read (display keys before a write).
    public func text(of key: RingSettingKey) -> String? {
        func onOff(_ b: Bool?) -> String? { b.map { $0 ? "on" : "off" } }
        func clock(_ minute: Int) -> String {
            let h = minute / 60, m = minute % 60
            return (h < 10 ? "0" : "") + "\(h):" + (m < 10 ? "0" : "") + "\(m)"
        }
        switch key {
        case .heartRateLog: return onOff(heartRateLog.enabled)
        case .heartRateInterval: return "\(heartRateLog.intervalMinutes)"
        case .spo2: return onOff(monitoring[.spo2])
        case .stress: return onOff(monitoring[.stress])
        case .hrv: return onOff(monitoring[.hrv])
        case .temperature: return onOff(monitoring[.temperature])
        case .timeFormat: return profile.timeFormat == 1 ? "12h" : profile.timeFormat == 0 ? "24h" : "\(profile.timeFormat)"
        case .units: return profile.units == 1 ? "imperial" : profile.units == 0 ? "metric" : "\(profile.units)"
        case .sex: return ["male", "female", "other"].indices.contains(Int(profile.gender)) ? ["male", "female", "other"][Int(profile.gender)] : "\(profile.gender)"
        case .age: return "\(profile.ageYears)"
        case .height: return "\(profile.heightCentimeters)"
        case .weight: return "\(profile.weightKilograms)"
        case .systolic: return "\(profile.systolicMmHg)"
        case .diastolic: return "\(profile.diastolicMmHg)"
        case .heartRateWarning: return "\(profile.heartRateWarningBPM)"
        case .stepsGoal: return "\(goals.steps)"
        case .caloriesGoal: return "\(goals.calories)"
        case .distanceGoal: return "\(goals.distanceMeters)"
        case .sportGoal: return "\(goals.sportMinutes)"
        case .sleepGoal: return "\(goals.sleepMinutes)"
        case .display: return onOff(display?.enabled)
        case .hand: return display.map { $0.leftHand ? "left" : "right" }
        case .brightness: return display.map { "\($0.brightness)" }
        case .displayAllDay: return onOff(display?.allDay)
        case .displayFrom: return display.map { clock($0.fromMinuteOfDay) }
        case .displayTo: return display.map { clock($0.toMinuteOfDay) }
        }
    }
}

/// One setting `ring settings --set KEY=VALUE` can change, by its key.
public enum RingSettingKey: String, CaseIterable, Hashable, Sendable {
    case heartRateLog = "hr-log"
    case heartRateInterval = "hr-interval"
    case spo2, stress, hrv, temperature
    case timeFormat = "time-format"
    case units, sex, age, height, weight, systolic, diastolic
    case heartRateWarning = "hr-warning"
    case stepsGoal = "steps-goal"
    case caloriesGoal = "calories-goal"
    case distanceGoal = "distance-goal"
    case sportGoal = "sport-goal"
    case sleepGoal = "sleep-goal"
    case display, hand, brightness
    case displayAllDay = "display-all-day"
    case displayFrom = "display-from"
    case displayTo = "display-to"

    /// Which command carries the setting.
    public enum Group: String, Sendable { case heartRateLog, monitoring, profile, goals, display }

    /// The command group.
    public var group: Group {
        switch self {
        case .heartRateLog, .heartRateInterval: .heartRateLog
        case .spo2, .stress, .hrv, .temperature: .monitoring
        case .timeFormat, .units, .sex, .age, .height, .weight, .systolic, .diastolic, .heartRateWarning: .profile
        case .stepsGoal, .caloriesGoal, .distanceGoal, .sportGoal, .sleepGoal: .goals
        case .display, .hand, .brightness, .displayAllDay, .displayFrom, .displayTo: .display
        }
    }

    /// The monitoring switch a key controls, nil for other keys.
    public var monitoringKind: COLMIAutoMeasurementKind? {
        switch self {
        case .spo2: .spo2
        case .stress: .stress
        case .hrv: .hrv
        case .temperature: .temperature
        default: nil
        }
    }

    /// What the key accepts, in words (used in errors and `--help`).
    public var accepted: String {
        switch self {
        case .heartRateLog, .spo2, .stress, .hrv, .temperature, .display, .displayAllDay: "on or off"
        case .heartRateInterval: "minutes 5 to 60 in steps of 5"
        case .timeFormat: "24h or 12h"
        case .units: "metric or imperial"
        case .sex: "male, female or other"
        case .age: "years 1 to 120"
        case .height: "centimetres 50 to 250"
        case .weight: "kilograms 10 to 250"
        case .systolic: "mmHg 70 to 250, or 0 (unset)"
        case .diastolic: "mmHg 40 to 150, or 0 (unset)"
        case .heartRateWarning: "bpm 60 to 230, or 0 (no warning)"
        case .stepsGoal: "steps 0 to 100000"
        case .caloriesGoal: "kcal 0 to 10000"
        case .distanceGoal: "metres 0 to 100000"
        case .sportGoal: "minutes 0 to 1440"
        case .sleepGoal: "minutes 0 to 1440"
        case .hand: "left or right"
        case .brightness: "1 to 5"
        case .displayFrom, .displayTo: "a time of day HH:MM"
        }
    }

    /// An example value for the key.
    public var example: String {
        switch self {
        case .heartRateLog, .spo2, .stress, .hrv, .temperature, .display, .displayAllDay: "on"
        case .heartRateInterval: "30"
        case .timeFormat: "24h"
        case .units: "metric"
        case .sex: "female"
        case .age: "35"
        case .height: "170"
        case .weight: "65"
        case .systolic: "120"
        case .diastolic: "80"
        case .heartRateWarning: "160"
        case .stepsGoal: "8000"
        case .caloriesGoal: "300"
        case .distanceGoal: "6000"
        case .sportGoal: "60"
        case .sleepGoal: "480"
        case .hand: "left"
        case .brightness: "3"
        case .displayFrom: "07:00"
        case .displayTo: "22:00"
        }
    }
}

/// A validated `KEY=VALUE`: the key and its value as a number (booleans 1/0, words by their
/// wire code, times of day in minutes after midnight).
public struct RingSettingChange: Hashable, Sendable {
    /// The setting.
    public let key: RingSettingKey
    /// The value, as the wire carries it (`on` = 1, `12h` = 1, `imperial` = 1, `female` = 1,
    /// `left` = 1, `07:30` = 450).
    public let number: Int
    /// The value as typed.
    public let text: String

    /// True for `on`.
    public var flag: Bool { number == 1 }

    /// Parses `KEY=VALUE`, throwing a ``RingSettingError`` (one line) when the key is unknown or
    /// the value out of range.
    public init(parsing argument: String) throws(RingSettingError) {
        guard let equals = argument.firstIndex(of: "=") else {
            throw RingSettingError(argument: argument, problem: "expected KEY=VALUE, e.g. --set steps-goal=8000")
        }
        let name = String(argument[..<equals]).trimmingCharacters(in: .whitespaces).lowercased()
        let value = String(argument[argument.index(after: equals)...]).trimmingCharacters(in: .whitespaces)
        guard let key = RingSettingKey(rawValue: name) else {
            throw RingSettingError(
                argument: argument,
                problem: "unknown key \"\(name)\"; the keys are \(RingSettingKey.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard let number = Self.number(value.lowercased(), for: key) else {
            throw RingSettingError(
                argument: argument, problem: "expected \(key.accepted) for \(key.rawValue), found \"\(value)\", e.g. --set \(key.rawValue)=\(key.example)")
        }
        self.key = key
        self.number = number
        self.text = value
    }

    private static func number(_ value: String, for key: RingSettingKey) -> Int? {
        func word(_ words: [String]) -> Int? { words.firstIndex(of: value) }
        func integer(_ range: ClosedRange<Int>, orZero: Bool = false) -> Int? {
            guard let n = Int(value), range.contains(n) || (orZero && n == 0) else { return nil }
            return n
        }
        switch key {
        case .heartRateLog, .spo2, .stress, .hrv, .temperature, .display, .displayAllDay:
            return ["on": 1, "off": 0, "true": 1, "false": 0, "1": 1, "0": 0][value]
        case .heartRateInterval:
            guard let n = integer(5...60), n % 5 == 0 else { return nil }
            return n
        case .timeFormat: return word(["24h", "12h"])
        case .units: return word(["metric", "imperial"])
        case .sex: return word(["male", "female", "other"])
        case .age: return integer(1...120)
        case .height: return integer(50...250)
        case .weight: return integer(10...250)
        case .systolic: return integer(70...250, orZero: true)
        case .diastolic: return integer(40...150, orZero: true)
        case .heartRateWarning: return integer(60...230, orZero: true)
        case .stepsGoal: return integer(0...100_000)
        case .caloriesGoal: return integer(0...10_000)
        case .distanceGoal: return integer(0...100_000)
        case .sportGoal, .sleepGoal: return integer(0...1440)
        case .hand: return ["left": 1, "right": 0][value]
        case .brightness: return integer(1...5)
        case .displayFrom, .displayTo:
            let parts = value.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0].count <= 2, parts[1].count == 2, let h = Int(parts[0]), let m = Int(parts[1]),
                  (0...23).contains(h), (0...59).contains(m) else { return nil }
            return h * 60 + m
        }
    }
}

/// A `--set` argument that cannot be used: one line naming it, what was expected, what came.
public struct RingSettingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The argument as given.
    public let argument: String
    /// What is wrong and what to try.
    public let problem: String

    public var description: String { "--set \(argument): \(problem)" }
}
