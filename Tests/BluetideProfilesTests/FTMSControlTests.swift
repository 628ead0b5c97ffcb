import BluetideBase
import Testing

@testable import BluetideProfiles

@Suite struct FTMSControlPointTests {
    typealias Request = FitnessMachineControlPointRequest
    let ctx = "Fitness Machine Control Point"

    /// Every request example of spec section 4.4, decoded and re-encoded.
    @Test(arguments: [
        ("00", Request.requestControl),
        ("07", Request.startOrResume),
        ("01", Request.reset),
        ("05 C8 00", Request.setTargetPower(watts: 200)),
        ("11 00 00 1E 00 28 33", Request.setIndoorBikeSimulation(parameters: .init(gradeHundredthPercent: 30))),
        ("11 00 00 6F FF 28 33", Request.setIndoorBikeSimulation(parameters: .init(gradeHundredthPercent: -145))),
        ("04 32", Request.setTargetResistanceLevel(tenths: 50)),
        ("04 32 00", Request.setTargetResistanceLevelWide(tenths: 50)),
        ("03 F1 FF", Request.setTargetInclination(tenthPercent: -15)),
        ("12 3A 52", Request.setWheelCircumference(tenthMillimeters: 21050)),
        ("14 B4 00", Request.setTargetedCadence(halfRpm: 180)),
        ("08 02", Request.stopOrPause(control: .pause)),
        ("08 01", Request.stopOrPause(control: .stop)),
        ("13 01", Request.spinDownControl(command: .start)),
    ])
    func specRequestExamples(hex: String, expected: Request) throws {
        let bytes = trainerHex(hex)
        #expect(try Request(exactly: bytes) == expected)
        #expect(expected.bytes == bytes)
    }

    @Test func simulationScalesAndSigns() throws {
        guard case .setIndoorBikeSimulation(let p) = try Request(exactly: trainerHex("11 00 00 1E 00 28 33")) else {
            Issue.record("not a simulation request")
            return
        }
        #expect(p.gradePercent == 0.3)
        #expect(p.rollingResistanceCoefficient == 0.004)
        #expect(p.windResistanceKgPerMeter == 0.51)
        #expect(p.windSpeedMetersPerSecond == 0)
        guard case .setIndoorBikeSimulation(let down) = try Request(exactly: trainerHex("11 18 FC 6F FF 28 33")) else {
            Issue.record("not a simulation request")
            return
        }
        #expect(down.gradePercent == -1.45)
        #expect(down.windSpeedMetersPerSecond == -1.0)
    }

    @Test func descriptionsCarryUnits() throws {
        #expect(Request.setTargetedCadence(halfRpm: 180).description == "set targeted cadence 90.0 rpm")
        #expect(Request.setWheelCircumference(tenthMillimeters: 21050).description == "set wheel circumference 2105.0 mm")
        #expect(Request.setTargetInclination(tenthPercent: -15).description == "set target inclination -1.5 %")
        #expect(Request.setTargetPower(watts: 200).description == "set target power 200 W")
    }

    @Test func everyOtherOpcodeRoundTrips() throws {
        let requests: [Request] = [
            .setTargetSpeed(hundredthKmh: 2500), .setTargetHeartRate(bpm: 140), .setTargetedExpendedEnergy(kcal: 500),
            .setTargetedSteps(steps: 1000), .setTargetedStrides(strides: 900), .setTargetedDistance(meters: 0x0A0B0C),
            .setTargetedTrainingTime(seconds: 3600), .setTargetedTimeInTwoHeartRateZones(zones: .init(zoneSeconds: [60, 120])),
            .setTargetedTimeInThreeHeartRateZones(zones: .init(zoneSeconds: [1, 2, 3])),
            .setTargetedTimeInFiveHeartRateZones(zones: .init(zoneSeconds: [1, 2, 3, 4, 5])),
            .spinDownControl(command: .ignore), .unknown(opcode: 0x20, parameter: [1, 2]),
        ]
        let widths = [3, 2, 3, 3, 3, 4, 3, 5, 7, 11, 2, 3]
        for (request, width) in zip(requests, widths) {
            #expect(request.bytes.count == width, "\(request)")
            #expect(try Request(exactly: request.bytes) == request)
        }
        #expect(Request.setTargetedDistance(meters: 0x0A0B0C).bytes == trainerHex("0C 0C 0B 0A"))
    }

    @Test func responseOpcodeIsNotARequest() {
        #expect(throws: DecodingError.invalid("\(ctx).op code", expected: "a request op code (0x00-0x14)", found: "0x80 (a response)", at: 0)) {
            try Request(bytes: trainerHex("80 00 01"))
        }
    }

    @Test func requestTruncation() {
        let decode: ([UInt8]) throws(DecodingError) -> Void = { b throws(DecodingError) in _ = try Request(bytes: b) }
        expectTrainerTruncation(trainerHex("05 C8 00"), [TrainerField("\(ctx).op code", 1), TrainerField("\(ctx).target power", 2)], decode)
        expectTrainerTruncation(trainerHex("14 B4 00"), [TrainerField("\(ctx).op code", 1), TrainerField("\(ctx).targeted cadence", 2)], decode)
        expectTrainerTruncation(trainerHex("0C 01 02 03"), [TrainerField("\(ctx).op code", 1), TrainerField("\(ctx).targeted distance", 3)], decode)
        expectTrainerTruncation(
            trainerHex("11 00 00 6F FF 28 33"),
            [
                TrainerField("\(ctx).op code", 1), TrainerField("\(ctx).simulation.wind speed", 2),
                TrainerField("\(ctx).simulation.grade", 2), TrainerField("\(ctx).simulation.rolling resistance coefficient", 1),
                TrainerField("\(ctx).simulation.wind resistance coefficient", 1),
            ], decode)
        expectTrainerTruncation(
            trainerHex("0F 01 00 02 00 03 00"),
            [
                TrainerField("\(ctx).op code", 1), TrainerField("\(ctx).time in zone 1", 2),
                TrainerField("\(ctx).time in zone 2", 2), TrainerField("\(ctx).time in zone 3", 2),
            ], decode)
        expectTrainerTruncation(trainerHex("04 32"), [TrainerField("\(ctx).op code", 1), TrainerField("\(ctx).target resistance level", 1)], decode)
    }

    @Test func responses() throws {
        typealias Response = FitnessMachineControlPointResponse
        #expect(try Response(exactly: trainerHex("80 00 01")) == Response(requestOpcode: 0x00, result: .success))
        #expect(try Response(exactly: trainerHex("80 07 01")) == Response(requestOpcode: 0x07, result: .success))
        #expect(try Response(exactly: trainerHex("80 05 01")) == Response(requestOpcode: 0x05, result: .success))
        #expect(try Response(exactly: trainerHex("80 11 01")) == Response(requestOpcode: 0x11, result: .success))
        #expect(try Response(exactly: trainerHex("80 05 05")).result == .controlNotPermitted)
        #expect(try Response(exactly: trainerHex("80 04 03")).result == .invalidParameter)
        #expect(try Response(exactly: trainerHex("80 80 02")) == Response(requestOpcode: 0x80, result: .opCodeNotSupported))
        let spin = try Response(exactly: trainerHex("80 13 01 B8 0B AC 0D"))
        #expect(spin.spinDownTargetSpeedRange?.lowHundredthKmh == 3000)
        #expect(spin.spinDownTargetSpeedRange?.highHundredthKmh == 3500)
        #expect(spin == Response.spinDownSuccess(lowHundredthKmh: 3000, highHundredthKmh: 3500))
        #expect(spin.bytes == trainerHex("80 13 01 B8 0B AC 0D"))
        #expect(spin.description == "response to spin-down control: success, target speed 30.00 to 35.00 km/h")
        for hex in ["80 00 01", "80 05 05", "80 04 03", "80 80 02"] {
            #expect(try Response(exactly: trainerHex(hex)).bytes == trainerHex(hex))
        }
    }

    @Test func kickrLoneResultByteIsTolerated() throws {
        let lone = try FitnessMachineControlPointResponse(exactly: trainerHex("02"))
        #expect(lone.requestOpcode == nil && lone.result == .opCodeNotSupported)
        #expect(lone.bytes == trainerHex("02"))
        // Through the two-way message type, a lone 02 is not a complete request, so it is a response.
        #expect(try FitnessMachineControlPointMessage(exactly: trainerHex("02")) == .response(lone))
        #expect(try FitnessMachineControlPointMessage(exactly: trainerHex("00")) == .request(.requestControl))
        #expect(try FitnessMachineControlPointMessage(exactly: trainerHex("80 00 01")) == .response(.init(requestOpcode: 0, result: .success)))
    }

    @Test func responseTruncation() {
        let r = "Fitness Machine Control Point response"
        expectTrainerTruncation(
            trainerHex("80 13 01"),
            [TrainerField("\(r).response code", 1), TrainerField("\(r).request op code", 1), TrainerField("\(r).result code", 1)]
        ) { b throws(DecodingError) in _ = try FitnessMachineControlPointResponse(bytes: b) }
        #expect(throws: DecodingError.invalid("\(r).response code", expected: "0x80", found: "0x05", at: 0)) {
            try FitnessMachineControlPointResponse(bytes: trainerHex("05 01"))
        }
    }
}

@Suite struct FTMSMachineStatusTests {
    typealias Status = FitnessMachineStatus
    let ctx = "Fitness Machine Status"

    @Test(arguments: [
        ("04", Status.startedOrResumedByUser),
        ("02 02", Status.stoppedOrPausedByUser(control: .pause)),
        ("02 01", Status.stoppedOrPausedByUser(control: .stop)),
        ("08 C8 00", Status.targetPowerChanged(watts: 200)),
        ("12 00 00 D8 00 28 33", Status.indoorBikeSimulationParametersChanged(parameters: .init(gradeHundredthPercent: 216))),
        ("FF", Status.controlPermissionLost),
        ("01", Status.reset),
        ("03", Status.stoppedBySafetyKey),
    ])
    func specExamples(hex: String, expected: Status) throws {
        #expect(try Status(exactly: trainerHex(hex)) == expected)
        #expect(expected.bytes == trainerHex(hex))
    }

    @Test func scalesAndSignedness() throws {
        #expect(try Status(exactly: trainerHex("07 9C FF")) == .targetResistanceLevelChanged(tenths: -100))
        #expect(try Status(exactly: trainerHex("06 F1 FF")) == .targetInclineChanged(tenthPercent: -15))
        #expect(try Status(exactly: trainerHex("08 38 FF")) == .targetPowerChanged(watts: -200))
        #expect(try Status(exactly: trainerHex("13 3A 52")) == .wheelCircumferenceChanged(tenthMillimeters: 21050))
        #expect(try Status(exactly: trainerHex("15 B4 00")) == .targetedCadenceChanged(halfRpm: 180))
        #expect(try Status(exactly: trainerHex("14 04")) == .spinDownStatus(status: .stopPedalling))
        #expect(try Status(exactly: trainerHex("0D 5C 03 00")) == .targetedDistanceChanged(meters: 860))
        #expect(Status.targetResistanceLevelChanged(tenths: 55).description == "target resistance level changed: 5.5")
        #expect(Status.targetedCadenceChanged(halfRpm: 181).description == "targeted cadence changed: 90.5 rpm")
        #expect(
            Status.indoorBikeSimulationParametersChanged(parameters: .init(gradeHundredthPercent: 216)).description
                == "simulation parameters changed: wind 0.000 m/s, grade 2.16 %, Crr 0.0040, Cw 0.51 kg/m")
    }

    @Test func everyOpcodeRoundTrips() throws {
        let all: [Status] = [
            .reset, .stoppedOrPausedByUser(control: .pause), .stoppedBySafetyKey, .startedOrResumedByUser,
            .targetSpeedChanged(hundredthKmh: 2000), .targetInclineChanged(tenthPercent: -5),
            .targetResistanceLevelChanged(tenths: 40), .targetPowerChanged(watts: 150), .targetHeartRateChanged(bpm: 130),
            .targetedExpendedEnergyChanged(kcal: 300), .targetedStepsChanged(steps: 10), .targetedStridesChanged(strides: 11),
            .targetedDistanceChanged(meters: 5000), .targetedTrainingTimeChanged(seconds: 1800),
            .targetedTimeInTwoHeartRateZonesChanged(zones: .init(zoneSeconds: [1, 2])),
            .targetedTimeInThreeHeartRateZonesChanged(zones: .init(zoneSeconds: [1, 2, 3])),
            .targetedTimeInFiveHeartRateZonesChanged(zones: .init(zoneSeconds: [1, 2, 3, 4, 5])),
            .indoorBikeSimulationParametersChanged(parameters: .init(windSpeedMillimetersPerSecond: -500, gradeHundredthPercent: -300)),
            .wheelCircumferenceChanged(tenthMillimeters: 20960), .spinDownStatus(status: .success),
            .targetedCadenceChanged(halfRpm: 170), .controlPermissionLost, .unknown(opcode: 0x30, parameter: [9]),
        ]
        for (index, status) in all.enumerated() {
            let expectedOpcode: UInt8 = index < 21 ? UInt8(index + 1) : (index == 21 ? 0xFF : 0x30)
            #expect(status.opcode == expectedOpcode)
            #expect(try Status(exactly: status.bytes) == status)
        }
    }

    @Test func truncation() {
        let decode: ([UInt8]) throws(DecodingError) -> Void = { b throws(DecodingError) in _ = try Status(bytes: b) }
        expectTrainerTruncation(trainerHex("08 C8 00"), [TrainerField("\(ctx).op code", 1), TrainerField("\(ctx).target power", 2)], decode)
        expectTrainerTruncation(trainerHex("02 02"), [TrainerField("\(ctx).op code", 1), TrainerField("\(ctx).stop or pause", 1)], decode)
        expectTrainerTruncation(trainerHex("07 9C FF"), [TrainerField("\(ctx).op code", 1), TrainerField("\(ctx).target resistance level", 2)], decode)
        expectTrainerTruncation(
            trainerHex("12 00 00 D8 00 28 33"),
            [
                TrainerField("\(ctx).op code", 1), TrainerField("\(ctx).simulation.wind speed", 2),
                TrainerField("\(ctx).simulation.grade", 2), TrainerField("\(ctx).simulation.rolling resistance coefficient", 1),
                TrainerField("\(ctx).simulation.wind resistance coefficient", 1),
            ], decode)
    }
}

@Suite struct FTMSControlPointUnitTests {
    typealias Request = FitnessMachineControlPointRequest

    @Test func buildersMatchTheSpecBytes() {
        #expect(Request.simulation(gradePercent: 0.30).bytes == trainerHex("11 00 00 1E 00 28 33"))
        #expect(Request.simulation(gradePercent: -1.45).bytes == trainerHex("11 00 00 6F FF 28 33"))
        #expect(Request.targetResistance(level: 5).bytes == trainerHex("04 32"))
        #expect(Request.targetResistance(level: 5, wide: true).bytes == trainerHex("04 32 00"))
        #expect(Request.targetInclination(percent: -1.5).bytes == trainerHex("03 F1 FF"))
        #expect(Request.wheelCircumference(millimeters: 2105).bytes == trainerHex("12 3A 52"))
        #expect(Request.targetedCadence(rpm: 90).bytes == trainerHex("14 B4 00"))
        #expect(Request.targetSpeed(kmh: 30).bytes == trainerHex("02 B8 0B"))
    }

    @Test func buildersClampInsteadOfTrapping() {
        #expect(Request.targetSpeed(kmh: -5) == .setTargetSpeed(hundredthKmh: 0))
        #expect(Request.targetSpeed(kmh: 1e9) == .setTargetSpeed(hundredthKmh: .max))
        #expect(Request.targetSpeed(kmh: .nan) == .setTargetSpeed(hundredthKmh: 0))
        #expect(Request.targetInclination(percent: -1e9) == .setTargetInclination(tenthPercent: .min))
        #expect(Request.targetResistance(level: .infinity) == .setTargetResistanceLevel(tenths: .max))
    }
}
