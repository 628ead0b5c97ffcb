import BluetideBase
import Testing

@testable import BluetideProfiles

@Suite struct FECFrameTests {
    /// Decodes a spec frame, checks it used the XOR checksum and re-encodes to the same bytes.
    func decodeSpecFrame(_ hex: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> FECFrame {
        let bytes = trainerHex(hex)
        let frame = try FECFrame(exactly: bytes)
        #expect(frame.checksumConvention == .xor, sourceLocation: sourceLocation)
        #expect(frame.bytes == bytes, sourceLocation: sourceLocation)
        return frame
    }

    @Test func page16GeneralData() throws {
        let frame = try decodeSpecFrame("A4 09 4E 05 10 19 04 00 00 00 FF 24 30")
        #expect(frame.messageID == .broadcastData && frame.channel == 5)
        guard case .generalData(let p) = frame.page else { Issue.record("\(frame.page)"); return }
        #expect(p.equipmentType == .trainer)
        #expect(p.elapsedSeconds == 1.0)
        #expect(p.distanceTraveledMeters == 0)
        #expect(p.speedMillimetersPerSecond == 0 && p.speedKmh == 0)
        #expect(p.heartRate == nil)
        #expect(p.distanceTraveledEnabled && !p.virtualSpeed && p.heartRateSource == .invalid)
        #expect(p.state == .ready && !p.lapToggle)
    }

    @Test func page25TrainerData() throws {
        let first = try decodeSpecFrame("A4 09 4E 05 19 2A 5A 10 27 FA 40 30 32")
        guard case .trainerData(let p) = first.page else { Issue.record("\(first.page)"); return }
        #expect(p.eventCount == 42 && p.cadence == 90)
        #expect(p.accumulatedPowerWatts == 10000)
        #expect(p.power == 250)
        #expect(p.trainerStatus == .userConfigurationRequired)
        #expect(p.targetPowerLimits == .atTarget)
        #expect(p.state == .inUse)
        let next = try decodeSpecFrame("A4 09 4E 05 19 2B 5A 26 28 2C 01 30 9D")
        guard case .trainerData(let q) = next.page else { Issue.record("\(next.page)"); return }
        #expect(q.eventCount == 43 && q.power == 300 && q.accumulatedPowerWatts == 10278)
        #expect(q.trainerStatus.isEmpty)
    }

    @Test func commandPages() throws {
        let erg = try decodeSpecFrame("A4 09 4F 05 31 FF FF FF FF FF 20 03 0A")
        #expect(erg.messageID == .acknowledgedData)
        #expect(erg.page == .targetPower(FECTargetPower(watts: 200)))
        if case .targetPower(let p) = erg.page { #expect(p.targetPowerQuarterWatts == 800 && p.watts == 200) }
        #expect(FECFrame.command(.targetPower(FECTargetPower(watts: 200))) == erg)

        let grade = try decodeSpecFrame("A4 09 4F 05 33 FF FF FF FF 14 50 50 C0")
        guard case .trackResistance(let t) = grade.page else { Issue.record("\(grade.page)"); return }
        #expect(t.gradeOffsetHundredthPercent == 20500)
        #expect(abs(t.gradePercent - 5.0) < 1e-9)
        #expect(abs(t.rollingResistanceCoefficient - 0.004) < 1e-12)
        #expect(FECTrackResistance(gradePercent: 5, rollingResistance5e5: 80) == t)

        let wind = try decodeSpecFrame("A4 09 4F 05 32 FF FF FF FF 33 7F 64 FD")
        guard case .windResistance(let w) = wind.page else { Issue.record("\(wind.page)"); return }
        #expect(w.windResistanceKgPerMeter == 0.51 && w.windSpeedKmh == 0 && w.draftingFactor == 1.0)

        let basic = try decodeSpecFrame("A4 09 4F 05 30 FF FF FF FF FF FF 32 E5")
        #expect(basic.page == .basicResistance(FECBasicResistance(totalResistanceHalfPercent: 50)))
        if case .basicResistance(let b) = basic.page { #expect(b.resistancePercent == 25) }

        let request = try decodeSpecFrame("A4 09 4F 05 46 FF FF FF FF 80 36 01 16")
        #expect(request.page == .requestDataPage(FECRequestDataPage(requestedPageNumber: 54)))

        let status = try decodeSpecFrame("A4 09 4E 05 47 31 05 00 FF FF 20 03 B6")
        #expect(
            status.page
                == .commandStatus(FECCommandStatus(lastCommandPage: 0x31, sequenceNumber: 5, status: .pass, data: [0xFF, 0xFF, 0x20, 0x03])))
    }

    @Test func defaultsOfUnsetSimulationValues() {
        let wind = FECWindResistance()
        #expect(wind.windResistanceKgPerMeter == 0.51 && wind.windSpeedKmh == 0 && wind.draftingFactor == 1.0)
        let track = FECTrackResistance()
        #expect(track.gradePercent == 0 && track.rollingResistanceCoefficient == 0.004)
        #expect(FECTrackResistance(gradePercent: -1.5).gradeOffsetHundredthPercent == 19850)
    }

    @Test func sumStyleChecksumIsAcceptedAndReported() throws {
        let sum = trainerHex("A4 09 4F 05 31 FF FF FF FF FF 20 03 AC")
        let frame = try FECFrame(exactly: sum)
        #expect(frame.checksumConvention == .sum)
        #expect(frame.page == .targetPower(FECTargetPower(targetPowerQuarterWatts: 800)))
        #expect(frame.bytes == sum, "re-encodes with the convention it came with")
        var xor = frame
        xor.checksumConvention = .xor
        #expect(xor.bytes == trainerHex("A4 09 4F 05 31 FF FF FF FF FF 20 03 0A"))
        #expect(ANTChecksumConvention.sum.checksum(of: Array(sum.dropLast())) == 0xAC)
        #expect(ANTChecksumConvention.xor.checksum(of: Array(sum.dropLast())) == 0x0A)
    }

    @Test func badChecksumNamesBothExpectedValuesAndTheFoundOne() {
        #expect(
            throws: DecodingError.invalid(
                "ANT message.checksum", expected: "0x30 (XOR incl. sync) or 0xAC (sum excl. sync)", found: "0x31", at: 12)
        ) {
            try FECFrame(bytes: trainerHex("A4 09 4E 05 10 19 04 00 00 00 FF 24 31"))
        }
    }

    @Test func badChecksumCanBeKeptAndReported() throws {
        let bad = trainerHex("A4 09 4E 05 10 19 04 00 00 00 FF 24 31")
        let (frame, error) = try FECFrame.decodeKeepingBadChecksum(bad)
        #expect(error?.field == "ANT message.checksum")
        #expect(frame.page == (try FECFrame(bytes: trainerHex("A4 09 4E 05 10 19 04 00 00 00 FF 24 30"))).page)
        let good = try FECFrame.decodeKeepingBadChecksum(trainerHex("A4 09 4F 05 31 FF FF FF FF FF 20 03 AC"))
        #expect(good.checksumError == nil && good.frame.checksumConvention == .sum)
        #expect(throws: DecodingError.truncated("ANT message.checksum", needed: 1, present: 0, at: 12)) {
            try FECFrame.decodeKeepingBadChecksum(Array(bad.prefix(12)))
        }
    }

    @Test func headerErrors() {
        #expect(throws: DecodingError.invalid("ANT message.sync", expected: "0xA4", found: "0xa5", at: 0)) {
            try FECFrame(bytes: trainerHex("A5 09 4E 05 10 19 04 00 00 00 FF 24 30"))
        }
        #expect(throws: DecodingError.invalid("ANT message.length", expected: "9 (channel + 8-byte data page)", found: "8", at: 1)) {
            try FECFrame(bytes: trainerHex("A4 08 4E 05 10 19 04 00 00 00 FF 24"))
        }
        #expect(
            throws: DecodingError.invalid(
                "ANT message.message ID", expected: "0x4E (broadcast) or 0x4F (acknowledged)", found: "0x40", at: 2)
        ) {
            try FECFrame(bytes: trainerHex("A4 09 40 05 10 19 04 00 00 00 FF 24 30"))
        }
    }

    @Test func truncationAtEveryFieldBoundary() {
        expectTrainerTruncation(
            trainerHex("A4 09 4E 05 10 19 04 00 00 00 FF 24 30"),
            [
                TrainerField("ANT message.sync", 1), TrainerField("ANT message.length", 1),
                TrainerField("ANT message.message ID", 1), TrainerField("ANT message.channel", 1),
                TrainerField("ANT message.data page", 8), TrainerField("ANT message.checksum", 1),
            ]
        ) { b throws(DecodingError) in _ = try FECFrame(bytes: b) }
    }

    @Test func pageTruncationNamesTheField() {
        let decode: ([UInt8]) throws(DecodingError) -> Void = { b throws(DecodingError) in _ = try FECPage(bytes: b) }
        expectTrainerTruncation(
            trainerHex("19 2A 5A 10 27 FA 40 30"),
            [
                TrainerField("FE-C page.page number", 1), TrainerField("FE-C page 25.event count", 1),
                TrainerField("FE-C page 25.cadence", 1), TrainerField("FE-C page 25.accumulated power", 2),
                TrainerField("FE-C page 25.instantaneous power", 1),
                TrainerField("FE-C page 25.instantaneous power and trainer status", 1),
                TrainerField("FE-C page 25.flags and state", 1),
            ], decode)
        expectTrainerTruncation(
            trainerHex("10 19 04 00 00 00 FF 24"),
            [
                TrainerField("FE-C page.page number", 1), TrainerField("FE-C page 16.equipment type", 1),
                TrainerField("FE-C page 16.elapsed time", 1), TrainerField("FE-C page 16.distance traveled", 1),
                TrainerField("FE-C page 16.speed", 2), TrainerField("FE-C page 16.heart rate", 1),
                TrainerField("FE-C page 16.capabilities and state", 1),
            ], decode)
        expectTrainerTruncation(
            trainerHex("31 FF FF FF FF FF 20 03"),
            [
                TrainerField("FE-C page.page number", 1), TrainerField("FE-C page 49.reserved", 5),
                TrainerField("FE-C page 49.target power", 2),
            ], decode)
        // An unknown page is read whole: 8 bytes, page number included.
        let raw = trainerHex("FC 01 02 03 04 05 06 07")
        #expect(throws: DecodingError.truncated("FE-C page.page number", needed: 1, present: 0, at: 0)) { try FECPage(bytes: []) }
        for cut in 1..<8 {
            #expect(throws: DecodingError.truncated("FE-C page.data", needed: 8, present: cut, at: 0)) {
                try FECPage(bytes: raw.prefix(cut))
            }
        }
    }

    @Test func everyTypedPageRoundTrips() throws {
        let pages: [FECPage] = [
            .generalData(
                FECGeneralData(
                    elapsedTimeQuarterSeconds: 200, distanceTraveledMeters: 77, speedMillimetersPerSecond: 8333, heartRateBpm: 140,
                    heartRateSource: .handContact, virtualSpeed: true, state: .inUse, lapToggle: true)),
            .generalSettings(FECGeneralSettings(cycleLengthCentimeters: 210, inclineHundredthPercent: -250, resistanceLevelHalfPercent: 100, state: .finished)),
            .trainerData(
                FECTrainerData(
                    eventCount: 9, cadenceRpm: 95, accumulatedPowerWatts: 65000, instantaneousPowerWatts: 0xABC,
                    trainerStatus: [.bicyclePowerCalibrationRequired, .resistanceCalibrationRequired], targetPowerLimits: .speedTooLow,
                    state: .inUse)),
            .trainerTorqueData(
                FECTrainerTorqueData(eventCount: 1, wheelTicks: 2, accumulatedWheelPeriod2048ths: 3000, accumulatedTorque32ndsNewtonMeter: 4000, state: .asleep)),
            .basicResistance(FECBasicResistance(totalResistanceHalfPercent: 200)),
            .targetPower(FECTargetPower(watts: 4000)),
            .windResistance(FECWindResistance(windResistanceHundredthKgPerMeter: 40, windSpeedOffsetKmh: 100, draftingFactorHundredths: 50)),
            .trackResistance(FECTrackResistance(gradePercent: -3.25, rollingResistance5e5: 90)),
            .capabilities(FECCapabilities(maximumResistanceNewtons: 2000, supportedModes: [.basicResistance, .targetPower, .simulation])),
            .userConfiguration(
                FECUserConfiguration(
                    userWeightHundredthKg: 7500, wheelDiameterOffsetMillimeters: 3, bicycleWeightTwentiethKg: 0xABC,
                    wheelDiameterCentimeters: 70, gearRatioThreeHundredths: 100)),
            .requestDataPage(FECRequestDataPage(requestedPageNumber: 55, requestedTransmissionResponse: 4)),
            .commandStatus(FECCommandStatus(lastCommandPage: 51, sequenceNumber: 200, status: .rejected, data: [1, 2, 3, 4])),
            .manufacturerInfo(FECManufacturerInfo(hardwareRevision: 3, manufacturerID: 89, modelNumber: 2875)),
            .productInfo(FECProductInfo(softwareRevisionSupplemental: 7, softwareRevisionMain: 45, serialNumber: 0xDEADBEEF)),
            .raw([0xFC, 1, 2, 3, 4, 5, 6, 7]),
        ]
        for page in pages {
            #expect(page.bytes.count == 8, "\(page)")
            #expect(page.bytes.first == page.pageNumber)
            #expect(try FECPage(exactly: page.bytes) == page, "\(page)")
            let frame = FECFrame(page: page)
            #expect(frame.bytes.count == 13)
            #expect(try FECFrame(exactly: frame.bytes) == frame)
        }
    }

    @Test func specificLayouts() throws {
        let user = FECUserConfiguration(
            userWeightHundredthKg: 7500, wheelDiameterOffsetMillimeters: 3, bicycleWeightTwentiethKg: 200,
            wheelDiameterCentimeters: 70, gearRatioThreeHundredths: 100)
        // 75.00 kg, reserved FF, offset 3 | (200 & 0xF) << 4 = 0x83, 200 >> 4 = 0x0C, 0.70 m, ratio 3.0.
        #expect(user.bytes == trainerHex("37 4C 1D FF 83 0C 46 64"))
        #expect(user.bicycleWeightKg == 10 && user.userWeightKg == 75 && user.wheelDiameterMeters == 0.7)
        #expect(abs((user.gearRatio ?? 0) - 3.0) < 1e-9)
        let product = try FECProductInfo(exactly: trainerHex("51 FF 02 2D EF BE AD DE"))
        #expect(product.softwareRevisionMain == 45 && product.softwareRevisionSupplemental == 2 && product.serialNumber == 0xDEADBEEF)
        let maker = try FECManufacturerInfo(exactly: trainerHex("50 FF FF 03 59 00 3B 0B"))
        #expect(maker == FECManufacturerInfo(hardwareRevision: 3, manufacturerID: 89, modelNumber: 2875))
        let caps = try FECCapabilities(exactly: trainerHex("36 FF FF FF FF D0 07 07"))
        #expect(caps.maximumResistanceNewtons == 2000 && caps.supportedModes == [.basicResistance, .targetPower, .simulation])
        let settings = try FECGeneralSettings(exactly: trainerHex("11 FF FF D2 06 FF 64 30"))
        #expect(settings.cycleLengthMeters == 2.1 && settings.inclinePercent == -2.5 && settings.resistancePercent == 50 && settings.state == .inUse)
        let torque = try FECTrainerTorqueData(exactly: trainerHex("1A 05 06 00 10 40 01 30"))
        #expect(torque.eventCount == 5 && torque.wheelTicks == 6 && torque.accumulatedWheelPeriod2048ths == 4096)
        #expect(torque.accumulatedTorque32ndsNewtonMeter == 320 && torque.state == .inUse)
    }

    @Test func summaries() throws {
        let frame = try FECFrame(exactly: trainerHex("A4 09 4E 05 10 19 04 00 00 00 FF 24 30"))
        #expect(
            frame.description
                == "page 16 general: trainer, elapsed 1.00 s (rolling), distance 0 m (rolling), 0.00 km/h, HR invalid, READY [broadcast, ch 5, XOR checksum]")
        let page25 = try FECPage(exactly: trainerHex("19 2A 5A 10 27 FA 40 30"))
        #expect(page25.description == "page 25 trainer: event 42, 90 rpm, 250 W, accumulated 10000 W, at target, IN USE, user configuration required")
    }
}
