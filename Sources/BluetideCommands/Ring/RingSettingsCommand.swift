import ArgumentParser
import Bluetide
import BluetideRing
import Foundation

/// `bluetide ring settings [--set KEY=VALUE]…`: every setting the ring has, read and changed.
struct RingSettingsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings",
        abstract: "Show or change every setting of the ring: monitoring, profile, units, time format, goals, display.",
        discussion: """
            Without --set, reads every setting. Each --set KEY=VALUE changes one (give several; they are checked before the ring is contacted); the ring is then read again and each change checked.

            Keys: \(RingSettingKey.allCases.map(\.rawValue).joined(separator: ", ")).
            Monitoring switches (spo2, stress, hrv, temperature) exist when the ring has the sensor; display keys only on a ring with a screen (they cannot be read, and the ones not given are written as on, left, 3, 07:00-22:00).

            Examples:
              bluetide ring settings
              bluetide ring settings --set hr-interval=10 --set spo2=on
              bluetide ring settings --set age=35 --set height=170 --set sex=female
              bluetide ring settings --set units=imperial --set time-format=12h
              bluetide ring settings --set steps-goal=10000 --set sleep-goal=480 --json
            """)

    @OptionGroup var connection: RingConnectionOptions
    @Option(name: .long, help: ArgumentHelp("Change a setting (repeatable), e.g. --set steps-goal=8000.", valueName: "key=value"))
    var set: [String] = []
    @Flag(name: .long, help: "Print JSON.") var json = false

    func run() async throws { try await execute(CommandOutput.standardOutput()) }

    /// The changes, validated before anything is sent (a bad one: exit status 2, one line).
    func changes() throws -> [RingSettingChange] {
        var changes: [RingSettingChange] = []
        for argument in set {
            do { changes.append(try RingSettingChange(parsing: argument)) } catch {
                throw CommandFailure.usage(error.description, field: "--set")
            }
        }
        return changes
    }

    func execute(_ output: CommandOutput) async throws {
        let changes = try changes()
        let link = try await connection.open()
        let settings = try await link.use { ring in
            changes.isEmpty ? try await ring.settings() : try await ring.changeSettings(changes)
        }
        let changed = Array(Set(changes.map(\.key))).sorted { $0.rawValue < $1.rawValue }
        if json {
            output.emit(RingJSON.line("ring-settings", device: link.device, Self.record(settings, changed: changed)))
            return
        }
        output.emit("\(link.label): settings\(changes.isEmpty ? "" : " after the change (read back from the ring)")")
        for key in RingSettingKey.allCases {
            guard let text = settings.text(of: key) else { continue }
            let unit = Self.unit(key)
            output.emit("  \(key.rawValue.padding(toLength: 16, withPad: " ", startingAt: 0)) \(text)\(unit.isEmpty ? "" : " \(unit)")")
        }
        if !changed.isEmpty { output.emit("changed: \(changed.map(\.rawValue).joined(separator: ", "))") }
    }

    static func unit(_ key: RingSettingKey) -> String {
        switch key {
        case .heartRateInterval, .sportGoal, .sleepGoal: "min"
        case .age: "years"
        case .height: "cm"
        case .weight: "kg"
        case .systolic, .diastolic: "mmHg"
        case .heartRateWarning: "bpm"
        case .stepsGoal: "steps"
        case .caloriesGoal: "kcal"
        case .distanceGoal: "m"
        default: ""
        }
    }

    /// The `ring-settings` record (docs/json-output.md).
    struct Record: Encodable {
        struct Display: Encodable {
            let enabled: Bool
            let hand: String
            let brightness: Int
            let allDay: Bool
            let from: String
            let to: String
        }
        let heartRateLog: Bool
        let heartRateLogIntervalMinutes: Int
        let spo2Monitoring: Bool?
        let stressMonitoring: Bool?
        let hrvMonitoring: Bool?
        let temperatureMonitoring: Bool?
        let timeFormat: String
        let units: String
        let sex: String
        let ageYears: Int
        let heightCentimetres: Int
        let weightKilograms: Int
        let systolicMmHg: Int
        let diastolicMmHg: Int
        let heartRateWarningBPM: Int
        let stepsGoal: Int
        let caloriesGoalKcal: Int
        let distanceGoalMetres: Int
        let sportGoalMinutes: Int
        let sleepGoalMinutes: Int
        let display: Display?
        let changed: [String]
    }

    static func record(_ s: RingSettings, changed: [RingSettingKey]) -> Record {
        Record(
            heartRateLog: s.heartRateLog.enabled, heartRateLogIntervalMinutes: Int(s.heartRateLog.intervalMinutes),
            spo2Monitoring: s.monitoring[.spo2], stressMonitoring: s.monitoring[.stress], hrvMonitoring: s.monitoring[.hrv],
            temperatureMonitoring: s.monitoring[.temperature], timeFormat: s.text(of: .timeFormat) ?? "", units: s.text(of: .units) ?? "",
            sex: s.text(of: .sex) ?? "", ageYears: Int(s.profile.ageYears), heightCentimetres: Int(s.profile.heightCentimeters),
            weightKilograms: Int(s.profile.weightKilograms), systolicMmHg: Int(s.profile.systolicMmHg),
            diastolicMmHg: Int(s.profile.diastolicMmHg), heartRateWarningBPM: Int(s.profile.heartRateWarningBPM),
            stepsGoal: Int(s.goals.steps), caloriesGoalKcal: Int(s.goals.calories), distanceGoalMetres: Int(s.goals.distanceMeters),
            sportGoalMinutes: Int(s.goals.sportMinutes), sleepGoalMinutes: Int(s.goals.sleepMinutes),
            display: s.display.map {
                Record.Display(
                    enabled: $0.enabled, hand: $0.leftHand ? "left" : "right", brightness: Int($0.brightness), allDay: $0.allDay,
                    from: s.text(of: .displayFrom) ?? "", to: s.text(of: .displayTo) ?? "")
            },
            changed: changed.map(\.rawValue))
    }
}
