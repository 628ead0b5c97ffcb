import Bluetide
import BluetideDeviceModels
import Foundation
import Testing
@testable import BluetideRing

/// `KEY=VALUE` parsing: every key takes its documented values and refuses others in one line.
@Suite struct RingSettingChangeTests {
    @Test func valuesBecomeWireNumbers() throws {
        let cases: [(String, RingSettingKey, Int)] = [
            ("hr-log=off", .heartRateLog, 0), ("hr-interval=10", .heartRateInterval, 10), ("spo2=on", .spo2, 1),
            ("temperature=false", .temperature, 0), ("time-format=12h", .timeFormat, 1), ("units=imperial", .units, 1),
            ("sex=female", .sex, 1), ("age=35", .age, 35), ("height=170", .height, 170), ("weight=65", .weight, 65),
            ("systolic=0", .systolic, 0), ("hr-warning=160", .heartRateWarning, 160), ("steps-goal=10000", .stepsGoal, 10000),
            ("calories-goal=450", .caloriesGoal, 450), ("distance-goal=7000", .distanceGoal, 7000), ("sport-goal=45", .sportGoal, 45),
            ("sleep-goal=480", .sleepGoal, 480), ("hand=right", .hand, 0), ("brightness=5", .brightness, 5),
            ("display-from=07:30", .displayFrom, 450), ("Display-To = 22:00", .displayTo, 1320), ("UNITS=Metric", .units, 0),
        ]
        for (argument, key, number) in cases {
            let change = try RingSettingChange(parsing: argument)
            #expect(change.key == key && change.number == number, "\(argument)")
        }
    }

    @Test func badInputIsOneLineNamingTheKeyTheExpectationAndAnExample() throws {
        let cases: [(String, String)] = [
            ("age", "expected KEY=VALUE"),
            ("shoe-size=42", "unknown key \"shoe-size\"; the keys are hr-log, hr-interval"),
            ("age=300", "expected years 1 to 120 for age, found \"300\", e.g. --set age=35"),
            ("hr-interval=7", "expected minutes 5 to 60 in steps of 5"),
            ("spo2=maybe", "expected on or off for spo2"),
            ("display-from=25:00", "expected a time of day HH:MM"),
            ("hr-warning=20", "or 0 (no warning)"),
            ("steps-goal=-5", "expected steps 0 to 100000"),
        ]
        for (argument, expected) in cases {
            do {
                _ = try RingSettingChange(parsing: argument)
                Issue.record("\(argument) was accepted")
            } catch {
                #expect(error.description.hasPrefix("--set \(argument): "), "\(error)")
                #expect(error.description.contains(expected), "\(error)")
                #expect(!error.description.contains("\n"))
            }
        }
    }

    @Test func applyingIsPureAndTheLastChangeOfAKeyWins() throws {
        let base = RingSettings(
            heartRateLog: COLMIHeartRateLogSettings(enabled: true, intervalMinutes: 30), monitoring: [.spo2: true],
            profile: COLMIUserPreferences(ageYears: 35, heightCentimeters: 175, weightKilograms: 72), goals: COLMIRingModel.defaultGoals)
        let changed = base.applying(try ["age=40", "age=41", "steps-goal=12000", "spo2=off", "brightness=4"].map { try RingSettingChange(parsing: $0) })
        #expect(changed.profile.ageYears == 41 && changed.goals.steps == 12000 && changed.monitoring[.spo2] == false)
        #expect(changed.display == COLMIDisplaySettings(enabled: true, leftHand: true, brightness: 4, allDay: false, fromMinuteOfDay: 420, toMinuteOfDay: 1320))
        #expect(base.profile.ageYears == 35 && base.display == nil)
        #expect(changed.text(of: .displayFrom) == "07:00" && changed.text(of: .stepsGoal) == "12000" && base.text(of: .hrv) == nil)
    }
}

/// ``Ring/settings()`` and ``Ring/changeSettings(_:)`` against the emulated R02.
@Suite(.timeLimit(.minutes(2))) struct RingSettingsSessionTests {
    @Test func everySettingIsReadChangedAndReadBack() async throws {
        try await RingRig.with(90, "settings round trip") { rig in
            let ring = try await rig.open()
            let before = try await ring.settings()
            #expect(before.heartRateLog == COLMIHeartRateLogSettings(enabled: true, intervalMinutes: 30))
            #expect(before.monitoring == [.spo2: true, .stress: true, .hrv: true, .temperature: true])
            #expect(before.profile.ageYears == 35 && before.profile.heightCentimeters == 175)
            #expect(before.goals == COLMIRingModel.defaultGoals)
            let arguments = [
                "hr-log=on", "hr-interval=10", "spo2=off", "stress=off", "hrv=off", "temperature=off", "time-format=12h",
                "units=imperial", "sex=female", "age=41", "height=168", "weight=61", "systolic=118", "diastolic=76",
                "hr-warning=170", "steps-goal=12000", "calories-goal=450", "distance-goal=9000", "sport-goal=45", "sleep-goal=450",
            ]
            let changes = try arguments.map { try RingSettingChange(parsing: $0) }
            let after = try await ring.changeSettings(changes)
            for change in changes {
                #expect(after.text(of: change.key) == change.text.lowercased(), "\(change.key)")
            }
            // A new session (a new connection) reads the same: the ring kept them.
            await ring.close()
            let again = try await rig.open()
            #expect(try await again.settings() == after)
            // A ring without a screen refuses display keys before writing anything.
            do {
                try await again.changeSettings([try RingSettingChange(parsing: "age=50"), try RingSettingChange(parsing: "brightness=2")])
                Issue.record("display accepted on a ring without a screen")
            } catch let error as RingError {
                #expect("\(error)".contains("no screen") && "\(error)".contains("brightness"), "\(error)")
            }
            #expect(try await again.settings().profile.ageYears == 41)
            await again.close()
        }
    }
}
