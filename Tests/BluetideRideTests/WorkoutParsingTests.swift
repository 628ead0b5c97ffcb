import Testing
@testable import BluetideRide

@Suite struct WorkoutParsingTests {
    @Test func dijonStepsDurationsAndPowers() throws {
        let workout = try Workout.parse(WorkoutFixtures.dijon, fileName: "dijon.zwo")
        #expect(workout.name == "Dijon")
        #expect(workout.summary?.hasPrefix("60/60s") == true)
        // 1 warm-up + 4 steady + 2×2 + 1 + 8×2 + 1 + 8×2 + 1 + 1 cool-down.
        #expect(workout.steps.count == 45)
        #expect(workout.totalSeconds == 3420)
        #expect(workout.steps[0] == WorkoutStep(kind: "warmup", durationSeconds: 120, startPower: .ftpFraction(0.32), endPower: .ftpFraction(0.39)))
        #expect(workout.steps[5] == WorkoutStep(kind: "interval on", durationSeconds: 30, startPower: .ftpFraction(0.98)))
        #expect(workout.steps[6] == WorkoutStep(kind: "interval off", durationSeconds: 30, startPower: .ftpFraction(0.63)))
        #expect(workout.steps[10].startPower == .ftpFraction(1.21))
        #expect(workout.steps[44] == WorkoutStep(kind: "cooldown", durationSeconds: 300, startPower: .ftpFraction(0.39), endPower: .ftpFraction(0.32)))
        // Targets for a 250 W FTP: the warm-up ramps, the intervals hold.
        #expect(workout.targetWatts(at: 0, ftp: 250) == 80)
        #expect(workout.targetWatts(at: 60, ftp: 250) == 89)   // 0.355 × 250 = 88.75
        #expect(workout.targetWatts(at: 120, ftp: 250) == 98)  // first steady step, 0.39
        let firstVO2 = 120 + 240 + 120 + 120  // 600 s: the first 121 % minute
        #expect(workout.targetWatts(at: Double(firstVO2) + 30, ftp: 250) == 303)
        #expect(workout.targetWatts(at: Double(firstVO2) + 90, ftp: 250) == 110)
        #expect(workout.targetWatts(at: 3420, ftp: 250) == nil)
        let position = workout.position(at: Double(firstVO2) + 90)
        #expect(position.stepIndex == 11)
        #expect(position.stepElapsedSeconds == 30)
        #expect(workout.position(at: 5000).isFinished)
    }

    @Test func zwiftFileWithTextEventsAndDeclaration() throws {
        let workout = try ZwiftWorkoutParser.parse(WorkoutFixtures.longRideOpening)
        #expect(workout.name == "The Long Ride")
        #expect(workout.summary == "Long base ride & endurance for the Zwift Fondo.")
        #expect(workout.steps.count == 2 + 14)
        #expect(workout.totalSeconds == 600 + 300 + 7 * 180)
        #expect(workout.steps[0].startPower == .ftpFraction(0.50449997))
        #expect(workout.steps[0].endPower == .ftpFraction(0.75449997))
        #expect(workout.steps[2] == WorkoutStep(kind: "interval on", durationSeconds: 120, startPower: .ftpFraction(0.95449996)))
        #expect(workout.steps[15] == WorkoutStep(kind: "interval off", durationSeconds: 60, startPower: .ftpFraction(0.55449998)))
    }

    @Test func ergFileInWatts() throws {
        let workout = try Workout.parse(WorkoutFixtures.erg, fileName: "threshold.erg")
        #expect(workout.name == "threshold-3x5.erg")
        #expect(workout.fileFTP == 250)
        #expect(workout.steps.count == 7)
        #expect(workout.totalSeconds == 34 * 60)
        #expect(workout.steps[0] == WorkoutStep(kind: "ramp", durationSeconds: 600, startPower: .watts(100), endPower: .watts(200)))
        #expect(workout.steps[1] == WorkoutStep(kind: "steady", durationSeconds: 300, startPower: .watts(280)))
        // Absolute watts do not follow the FTP setting.
        #expect(workout.targetWatts(at: 300, ftp: 300) == 150)
        #expect(workout.targetWatts(at: 600, ftp: 300) == 280)
        #expect(workout.targetWatts(at: 15 * 60 + 1, ftp: 300) == 150)
    }

    @Test func mrcFileInPercent() throws {
        let workout = try Workout.parse(WorkoutFixtures.mrc, fileName: "ss.mrc")
        #expect(workout.steps == [
            WorkoutStep(kind: "ramp", durationSeconds: 300, startPower: .ftpFraction(0.5), endPower: .ftpFraction(0.75)),
            WorkoutStep(kind: "steady", durationSeconds: 1200, startPower: .ftpFraction(0.9)),
        ])
        #expect(workout.targetWatts(at: 150, ftp: 200) == 125)
        #expect(workout.targetWatts(at: 400, ftp: 200) == 180)
    }

    @Test func badFilesSayWhereAndWhat() throws {
        let missing = #"<workout_file><workout><SteadyState Power="0.5"/></workout></workout_file>"#
        #expect(throws: WorkoutParseError(line: 1, message: "<SteadyState> has no Duration attribute")) {
            try ZwiftWorkoutParser.parse(missing)
        }
        let notNumber = "<workout_file><workout>\n<Ramp Duration=\"60\" PowerLow=\"half\" PowerHigh=\"1\"/></workout></workout_file>"
        #expect(throws: WorkoutParseError(line: 2, message: "<Ramp PowerLow=\"half\">: not a number")) {
            try ZwiftWorkoutParser.parse(notNumber)
        }
        #expect(throws: WorkoutParseError.self) { try ZwiftWorkoutParser.parse("<workout_file><workout>") }
        let backwards = "[COURSE HEADER]\nMINUTES WATTS\n[END COURSE HEADER]\n[COURSE DATA]\n5\t100\n2\t100\n[END COURSE DATA]"
        #expect(throws: WorkoutParseError(line: 6, message: "minute 2.0 comes before the previous row's 5.0")) {
            try ERGWorkoutParser.parse(backwards)
        }
        #expect(throws: WorkoutParseError.self) { try Workout.parse("", fileName: "plan.fit") }
    }
}
