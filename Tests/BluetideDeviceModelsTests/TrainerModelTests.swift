import BluetideBase
import BluetideProfiles
import Foundation
import Testing

@testable import BluetideDeviceModels

@Suite struct FTMSBikeModelTests {
    private func write(_ model: inout FTMSBikeModel, _ request: FitnessMachineControlPointRequest, at now: Double) -> [EmulatedOutput] {
        model.write(.fitnessMachineControlPoint, request.bytes, now: now).outputs
    }

    @Test func commandsNeedControlFirstAndResetReleasesIt() throws {
        var model = FTMSBikeModel(seed: 1)
        var out = write(&model, .setTargetPower(watts: 200), at: 0)
        #expect(out == [EmulatedOutput(.fitnessMachineControlPoint, [0x80, 0x05, 0x05], .indicate)])
        out = write(&model, .requestControl, at: 0)
        #expect(out == [EmulatedOutput(.fitnessMachineControlPoint, [0x80, 0x00, 0x01], .indicate)])
        out = write(&model, .setTargetPower(watts: 200), at: 0)
        #expect(out.first?.bytes == [0x80, 0x05, 0x01])
        #expect(out.contains(EmulatedOutput(.fitnessMachineStatus, [0x08, 0xC8, 0x00])))
        #expect(out.contains(EmulatedOutput(.trainingStatus, TrainingStatus(status: .wattControl).bytes)))
        out = write(&model, .reset, at: 1)
        #expect(out.first?.bytes == [0x80, 0x01, 0x01])
        #expect(out.contains(EmulatedOutput(.fitnessMachineStatus, [0x01])))
        out = write(&model, .setTargetPower(watts: 200), at: 1)
        #expect(out.first?.bytes == [0x80, 0x05, 0x05])
        // Unsupported procedures and bad parameters.
        out = write(&model, .requestControl, at: 1)
        #expect(out.first?.bytes == [0x80, 0x00, 0x01])
        out = write(&model, .setTargetSpeed(hundredthKmh: 3000), at: 1)
        #expect(out.first?.bytes == [0x80, 0x02, 0x02])
        out = write(&model, .setTargetPower(watts: 5000), at: 1)
        #expect(out.first?.bytes == [0x80, 0x05, 0x03])
        let truncated = model.write(.fitnessMachineControlPoint, [0x05, 0xC8], now: 1)
        #expect(truncated.outputs.first?.bytes == [0x80, 0x05, 0x03])
        let responseCode = model.write(.fitnessMachineControlPoint, [0x80, 0x00, 0x01], now: 1)
        #expect(responseCode.outputs.first?.bytes == [0x80, 0x80, 0x02])
        out = write(&model, .stopOrPause(control: .pause), at: 2)
        #expect(out.contains(EmulatedOutput(.fitnessMachineStatus, [0x02, 0x02])))
        out = write(&model, .startOrResume, at: 3)
        #expect(out.contains(EmulatedOutput(.fitnessMachineStatus, [0x04])))
    }

    @Test func ergPowerConvergesToTheTarget() throws {
        var model = FTMSBikeModel(seed: 1)
        _ = drive(&model, to: 5, step: 0.25)
        _ = write(&model, .requestControl, at: 5)
        _ = write(&model, .setTargetPower(watts: 280), at: 5)
        let data = values(drive(&model, from: 5, to: 40, step: 0.25), .indoorBikeData)
        let decoded = try data.map { try IndoorBikeData(exactly: $0.bytes) }
        #expect(decoded.count == 35)
        let powers = decoded.compactMap(\.instantaneousPowerWatts)
        #expect(powers.first.map { $0 < 280 } == true)
        for p in powers.suffix(20) { #expect(abs(Int(p) - 280) <= 2) }
        // Power rises monotonically towards the target.
        #expect(zip(powers, powers.dropFirst()).allSatisfy { $0 <= $1 })
        let last = try #require(decoded.last)
        #expect(last.instantaneousCadenceRpm == 90)
        #expect((last.totalDistanceMeters ?? 0) > 200)
        #expect(last.elapsedTimeSeconds == 40)
    }

    @Test func simulationSpeedFollowsTheGrade() throws {
        var model = FTMSBikeModel(seed: 1)
        _ = write(&model, .requestControl, at: 0)
        let flat = values(drive(&model, to: 60, step: 0.25), .indoorBikeData)
        let flatLast = try #require(flat.last)
        let flatSpeed = try #require(try IndoorBikeData(exactly: flatLast.bytes).instantaneousSpeedKmh)
        let climb = IndoorBikeSimulationParameters(gradeHundredthPercent: 600, rollingResistanceTenThousandths: 40, windResistanceHundredthKgPerMeter: 51)
        let out = write(&model, .setIndoorBikeSimulation(parameters: climb), at: 60)
        #expect(out.first?.bytes == [0x80, 0x11, 0x01])
        #expect(out.contains(EmulatedOutput(.fitnessMachineStatus, [0x12, 0x00, 0x00, 0x58, 0x02, 0x28, 0x33])))
        let uphill = values(drive(&model, from: 60, to: 180, step: 0.25), .indoorBikeData)
        let uphillLast = try IndoorBikeData(exactly: try #require(uphill.last).bytes)
        let climbSpeed = try #require(uphillLast.instantaneousSpeedKmh)
        var physics = RiderPhysics(massKilograms: 83, road: RoadConditions(gradePercent: 6))
        physics.settle(watts: 200)
        #expect(climbSpeed < flatSpeed / 2)
        #expect(abs(climbSpeed - physics.speedMetersPerSecond * 3.6) < 0.3)
        // Power stays the rider's own in simulation mode.
        #expect(uphillLast.instantaneousPowerWatts == 200)
    }

    @Test func readsDescribeTheMachine() throws {
        let model = FTMSBikeModel(seed: 1)
        let featureBytes = try #require(model.read(.fitnessMachineFeature, now: 0))
        let feature = try FitnessMachineFeature(exactly: featureBytes)
        #expect(feature.targetSettingFeatures.contains(.power))
        #expect(feature.targetSettingFeatures.contains(.indoorBikeSimulation))
        #expect(model.read(.supportedPowerRange, now: 0) == [0x00, 0x00, 0xD0, 0x07, 0x01, 0x00])
        #expect(model.read(.trainingStatus, now: 0) == [0x00, 0x01])
        #expect(model.advertising.serviceData.first?.data == [0x01, 0x20, 0x00])
    }
}

@Suite struct TacxFECModelTests {
    private func frames(_ outputs: [(time: Double, output: EmulatedOutput)]) throws -> [(time: Double, frame: FECFrame)] {
        try values(outputs, .tacxFECNotify).map { (time: $0.time, frame: try FECFrame(exactly: $0.bytes)) }
    }

    private func command(_ model: inout TacxFECModel, _ page: FECPage, at now: Double) -> WriteOutcome {
        model.write(.tacxFECWrite, FECFrame.command(page).bytes, now: now)
    }

    @Test func pages16And25AlternateAt4HzWithRollingCounters() throws {
        var model = TacxFECModel(seed: 2)
        let all = try frames(drive(&model, to: 150, step: 0.25))
        #expect(all.count == 600)
        var events: [UInt8] = [], elapsed: [UInt8] = []
        var accumulator = FECAccumulator(wheelCircumferenceMeters: 2.105)
        for (index, (time, frame)) in all.enumerated() {
            #expect(frame.page.pageNumber == (index % 2 == 0 ? 16 : 25))
            if case let .trainerData(p) = frame.page { events.append(p.eventCount) }
            if case let .generalData(p) = frame.page { elapsed.append(p.elapsedTimeQuarterSeconds) }
            _ = accumulator.add(frame, at: time)
        }
        #expect(zip(events, events.dropFirst()).allSatisfy { $1 == $0 &+ 1 })
        #expect(events.count == 300 && events.contains(0) && events.contains(255))
        #expect(zip(elapsed, elapsed.dropFirst()).contains { $1 < $0 }, "elapsed time rolls over at 64 s")
        #expect(abs(accumulator.elapsedSeconds - 150) < 1)
        #expect(abs(accumulator.distanceMeters - model.engine.distanceMeters) < 5)
        #expect(abs((accumulator.averagePowerWatts ?? 0) - 200) < 2)
    }

    @Test func targetPowerCommandIsObeyedAndReportedInPage71() throws {
        var model = TacxFECModel(seed: 2)
        _ = drive(&model, to: 2, step: 0.25)
        // Page 49 exactly as the spec shows it, with the sum-style checksum some apps send.
        let sumChecksum: [UInt8] = [0xA4, 0x09, 0x4F, 0x05, 0x31, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x20, 0x03, 0xAC]
        let accepted = model.write(.tacxFECWrite, sumChecksum, now: 2)
        #expect(accepted == .ok)
        let requested = command(&model, .requestDataPage(FECRequestDataPage(requestedPageNumber: 71)), at: 2)
        #expect(requested == .ok)
        var out = try frames(drive(&model, from: 2.25, to: 20, step: 0.25))
        let status = out.compactMap { f -> FECCommandStatus? in
            if case let .commandStatus(s) = f.frame.page { return s }
            return nil
        }
        #expect(status == [FECCommandStatus(lastCommandPage: 0x31, sequenceNumber: 0, status: .pass, data: [0xFF, 0xFF, 0x20, 0x03])])
        let powers = out.compactMap { f -> UInt16? in
            if case let .trainerData(p) = f.frame.page { return p.instantaneousPowerWatts }
            return nil
        }
        #expect(powers.last == 200)
        // A second command bumps the sequence number.
        _ = command(&model, .trackResistance(FECTrackResistance(gradePercent: 5)), at: 20)
        _ = command(&model, .requestDataPage(FECRequestDataPage(requestedPageNumber: 71, requestedTransmissionResponse: 2)), at: 20)
        out = try frames(drive(&model, from: 20.25, to: 22, step: 0.25))
        let second = out.compactMap { f -> FECCommandStatus? in
            if case let .commandStatus(s) = f.frame.page { return s }
            return nil
        }
        #expect(second.count == 2)
        #expect(second.first?.sequenceNumber == 1)
        #expect(second.first?.lastCommandPage == 0x33)
        #expect(model.engine.mode == .simulation)
        #expect(model.engine.road.gradePercent == 5)
    }

    /// ERG below the rider's own power is approached along the engine's first-order lag, never
    /// overshot: a reading of 193 W a fraction of a second after ERG 150 W (the rider pushing
    /// 200 W), as `ride serve`'s first sample can show, is this settling, not a control error.
    @Test func ergBelowTheRidersPowerSettlesAlongTheLagWithoutOvershoot() throws {
        var model = TacxFECModel(seed: 2)
        _ = drive(&model, to: 2, step: 0.25)
        #expect(command(&model, .targetPower(FECTargetPower(watts: 150)), at: 2) == .ok)
        let out = try frames(drive(&model, from: 2.25, to: 12, step: 0.25))
        let powers = out.compactMap { f -> (time: Double, watts: Int)? in
            if case let .trainerData(p) = f.frame.page { return (f.time, Int(p.instantaneousPowerWatts)) }
            return nil
        }
        #expect(powers.count >= 15)
        for (time, watts) in powers {
            let expected = 150 + 50 * exp(-(time - 2) / TrainerEngine.powerTimeConstant)
            #expect(abs(Double(watts) - expected) <= 1, "at \(time) s: \(watts) W, the lag gives \(expected)")
        }
        #expect(powers.allSatisfy { $0.watts >= 150 }, "no overshoot below the target")
        #expect(zip(powers, powers.dropFirst()).allSatisfy { $0.watts >= $1.watts }, "no oscillation")
        #expect(powers.filter { $0.time >= 2 + 5 * TrainerEngine.powerTimeConstant }.allSatisfy { $0.watts == 150 })
        // The first reading after the command is close to the rider's 200 W.
        #expect(powers.first.map { $0.watts > 180 } == true)
    }

    @Test func page70IsAnsweredWithTheRequestedPage() throws {
        var model = TacxFECModel(seed: 2)
        _ = drive(&model, to: 1, step: 0.25)
        for page: UInt8 in [54, 55, 80, 81] {
            _ = command(&model, .requestDataPage(FECRequestDataPage(requestedPageNumber: page)), at: 1)
        }
        let out = try frames(drive(&model, from: 1.25, to: 3, step: 0.25)).map { $0.frame.page }
        #expect(out.prefix(4).map(\.pageNumber) == [54, 55, 80, 81])
        #expect(out.first == .capabilities(TacxFECModel.capabilities))
        let junk = model.write(.tacxFECWrite, [0x01, 0x02], now: 3)
        #expect(junk == .ok)
        #expect(model.ignoredWrites == 1)
    }

    @Test func userConfigurationClearsTheStatusBit() throws {
        var model = TacxFECModel(seed: 2)
        var out = try frames(drive(&model, to: 1, step: 0.25))
        func status(_ frames: [(time: Double, frame: FECFrame)]) -> FECTrainerData.TrainerStatus? {
            frames.compactMap { f -> FECTrainerData.TrainerStatus? in
                if case let .trainerData(p) = f.frame.page { return p.trainerStatus }
                return nil
            }.last
        }
        #expect(status(out) == [.userConfigurationRequired])
        let config = FECUserConfiguration(userWeightHundredthKg: 7000, bicycleWeightTwentiethKg: 180, wheelDiameterCentimeters: 67)
        _ = command(&model, .userConfiguration(config), at: 1)
        out = try frames(drive(&model, from: 1.25, to: 2, step: 0.25))
        #expect(status(out) == [])
        #expect(model.userConfiguration == config)
    }
}
