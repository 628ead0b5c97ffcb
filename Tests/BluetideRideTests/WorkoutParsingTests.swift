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

/// FIT workout files (issue 29 item 4). The fixture was written by Garmin's FIT SDK for Python
/// (garmin_fit_sdk.Encoder, profile 21.218): file_id (workout), workout "Over-unders", steps:
/// warm-up 5:00 at 120–160 W (custom power +1000), 2:00 at 95–105 % FTP, rest 1:00 at 100 W,
/// repeat from step 2 three times in all, cool-down 3:00 open.
@Suite struct FITWorkoutTests {
    static let garminFixture = hexBytes("""
        0e20e2520c0100002e464954ccef40000000000500010001028402028403048c0404860005ff000000d204000000ab904141\
        00001a0003080c07040100060284014f7665722d756e64657273000205004200001b0009fe02840008070101000204860301\
        000404860504860604860701000200005761726d2075700000e093040004000000006004000088040000024300001b0008fe\
        028401010002048603010004048605048606048607010003010000c0d4010004000000005f00000069000000000302000060\
        ea000004000000004c0400004c040000014400001b0005fe0284010100020486030100040486040300060100000002030000\
        004500001b0005fe02840101000204860301000701000504000020bf02000203b823
        """)

    static func hexBytes(_ text: String) -> [UInt8] {
        let digits = Array(text.filter(\.isHexDigit))
        return stride(from: 0, to: digits.count - 1, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
    }

    @Test func aGarminWorkoutFileBecomesTheWorkoutsSteps() throws {
        #expect(Self.garminFixture.count == 284)
        let workout = try Workout.parse(bytes: Self.garminFixture, fileName: "plans/over-unders.fit")
        #expect(workout.name == "Over-unders")
        #expect(workout.steps.map(\.kind) == ["warmup", "steady", "interval off", "steady", "interval off", "steady", "interval off", "cooldown"])
        #expect(workout.steps.map(\.durationSeconds) == [300, 120, 60, 120, 60, 120, 60, 180])
        #expect(workout.steps[0].startPower == .watts(140))
        #expect(workout.steps[1].startPower == .ftpFraction(1.0))
        #expect(workout.steps[2].startPower == .watts(100))
        #expect(workout.steps[7].startPower == .free)
        #expect(workout.targetWatts(at: 400, ftp: 250) == 250)
    }

    @Test func damagedAndUnrideableFilesAreRefusedSayingWhy() {
        var damaged = Self.garminFixture
        damaged[40] ^= 0xFF
        #expect(throws: WorkoutParseError(line: nil, message: "w.fit: byte 282: the file's CRC does not match: the file is damaged")) {
            try Workout.parse(bytes: damaged, fileName: "w.fit")
        }
        #expect(throws: WorkoutParseError.self) { try Workout.parse(bytes: Array(Self.garminFixture.prefix(20)), fileName: "w.fit") }
        // A step that ends on distance cannot be ridden in ERG.
        var fit = FITEncoder()
        fit.append(FITMessage(0, [FITField(0, .enumeration, 5)]))
        fit.append(FITMessage(27, [FITField(254, .uint16, 0), FITField(1, .enumeration, 1), FITField(2, .uint32, 100_000)]))
        #expect(throws: WorkoutParseError(
            line: nil, message: "w.fit: step 1 ends on something other than time (FIT duration type 1); only timed steps can be ridden")) {
            try Workout.parse(bytes: fit.file(), fileName: "w.fit")
        }
        // An activity file is not a workout.
        let activity = FITActivityWriter.file(samples: [], start: ExportTests.start)
        #expect(throws: WorkoutParseError(line: nil, message: "w.fit: a FIT file of type 4, not a workout (type 5)")) {
            try Workout.parse(bytes: activity, fileName: "w.fit")
        }
    }

    @Test func theDecoderReadsOurOwnActivityFilesBack() throws {
        let bytes = FITActivityWriter.file(samples: ExportTests.samples, start: ExportTests.start)
        let records = try FITDecoder.messages(bytes).filter { $0.global == 20 }
        #expect(records.map { $0.unsigned(7) } == [200, 210, nil])
        #expect(records.map { $0.unsigned(3) } == [120, nil, 130])
    }
}
