import BluetideBase
import Foundation
import Testing

@testable import BluetideProfiles

/// Feeds `T` thousands of random and mutated/truncated inputs. Decoding must return a value or
/// throw `DecodingError` (the typed throw guarantees the error type; a trap would end the run),
/// and any decoded value must re-encode to bytes that decode to the same value.
func trainerFuzz<T: GATTCodable & Equatable & CustomStringConvertible>(
    _ type: T.Type, seed: UInt64, vectors: [[UInt8]], iterations: Int = 3000,
    sourceLocation: SourceLocation = #_sourceLocation
) -> (decoded: Int, failed: Int) {
    var random = TrainerTestRandom(seed: seed)
    var decoded = 0
    var failed = 0
    for iteration in 0..<iterations {
        var input: [UInt8]
        if iteration % 2 == 0 || vectors.isEmpty {
            input = random.bytes(Int.random(in: 0...24, using: &random))
        } else {
            input = vectors[iteration % vectors.count]
            for _ in 0..<Int.random(in: 0...3, using: &random) where !input.isEmpty {
                input[Int.random(in: 0..<input.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            input = Array(input.prefix(Int.random(in: 0...input.count, using: &random)))
        }
        do {
            let value = try T(bytes: input)
            decoded += 1
            _ = value.description
            let again = try T(bytes: value.bytes)
            #expect(again == value, "\(input.spacedHex)", sourceLocation: sourceLocation)
        } catch {
            failed += 1
            _ = error.description
        }
    }
    return (decoded, failed)
}

@Suite struct FTMSRobustnessTests {
    @Test func everyFTMSDecoderSurvivesRandomInput() {
        var totals: [(Int, Int)] = []
        totals.append(trainerFuzz(FitnessMachineServiceData.self, seed: 13, vectors: [trainerHex("01 20 00")]))
        totals.append(trainerFuzz(FitnessMachineFeature.self, seed: 1, vectors: [trainerHex("86 50 00 00 0C E0 00 00")]))
        totals.append(
            trainerFuzz(
                IndoorBikeData.self, seed: 2,
                vectors: [
                    trainerHex("44 02 9C 09 5C 00 4F 00 50"), trainerHex("54 08 6F 05 96 00 5C 03 00 22 00 94 03"),
                    trainerHex("FE 02 F0 04 1A 05 00 00 00 00 12 00 00 14 00 00 00 00 00 00"),
                    trainerHex("74 03 B2 0C B0 00 AB 00 00 11 00 A2 00 03 00 00 00 00 00"),
                ], iterations: 6000))
        totals.append(trainerFuzz(TrainingStatus.self, seed: 3, vectors: [trainerHex("01 0C 45 52 47"), trainerHex("00 01")]))
        totals.append(trainerFuzz(SupportedSpeedRange.self, seed: 4, vectors: [trainerHex("00 00 A0 0F 0A 00")]))
        totals.append(trainerFuzz(SupportedInclinationRange.self, seed: 5, vectors: [trainerHex("9C FF C8 00 05 00")]))
        totals.append(trainerFuzz(SupportedResistanceLevelRange.self, seed: 6, vectors: [trainerHex("00 00 C8 00 01 00")]))
        totals.append(trainerFuzz(SupportedHeartRateRange.self, seed: 7, vectors: [trainerHex("3C C8 01")]))
        totals.append(trainerFuzz(SupportedPowerRange.self, seed: 8, vectors: [trainerHex("00 00 A0 0F 01 00")]))
        let requests = ["00", "05 C8 00", "11 00 00 6F FF 28 33", "04 32 00", "0C 01 02 03", "10 01 00 02 00 03 00 04 00 05 00"]
        totals.append(trainerFuzz(FitnessMachineControlPointRequest.self, seed: 9, vectors: requests.map(trainerHex), iterations: 6000))
        let responses = ["80 13 01 B8 0B AC 0D", "80 05 05", "02"]
        totals.append(trainerFuzz(FitnessMachineControlPointResponse.self, seed: 10, vectors: responses.map(trainerHex)))
        totals.append(
            trainerFuzz(FitnessMachineControlPointMessage.self, seed: 11, vectors: (requests + responses).map(trainerHex)))
        let statuses = ["08 C8 00", "12 00 00 D8 00 28 33", "11 01 00 02 00 03 00 04 00 05 00", "0D 01 02 03", "FF"]
        totals.append(trainerFuzz(FitnessMachineStatus.self, seed: 12, vectors: statuses.map(trainerHex), iterations: 6000))
        // Both outcomes must actually occur, or the test exercised nothing.
        for (index, total) in totals.enumerated() {
            #expect(total.0 > 0 && total.1 > 0, "decoder \(index): \(total)")
        }
    }

    @Test func everyOpcodeWithRandomParameters() throws {
        var random = TrainerTestRandom(seed: 99)
        for opcode in 0...255 {
            for length in 0...20 {
                let input = [UInt8(opcode)] + random.bytes(length)
                if let request = try? FitnessMachineControlPointRequest(bytes: input) {
                    #expect(try FitnessMachineControlPointRequest(bytes: request.bytes) == request)
                }
                if let status = try? FitnessMachineStatus(bytes: input) {
                    #expect(try FitnessMachineStatus(bytes: status.bytes) == status)
                }
            }
        }
    }

    @Test func everyFlagCombinationOfIndoorBikeData() throws {
        var random = TrainerTestRandom(seed: 7)
        for flags in 0..<UInt16(1 << 13) {
            let length = IndoorBikeData.fieldLength(flags: flags)
            let body = random.bytes(length)
            let bytes = [UInt8(flags & 0xFF), UInt8(flags >> 8)] + body
            let data = try IndoorBikeData(exactly: bytes)
            #expect(data.flags == flags)
            #expect(data.bytes == bytes)
            if length > 0 {
                // Every truncation throws: no width is guessed to make a short packet fit.
                let short = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &random)))
                #expect(throws: DecodingError.self) { try IndoorBikeData(bytes: short) }
            }
        }
    }

    @Test func trainerCatalogEntriesSurviveRandomInput() {
        var random = TrainerTestRandom(seed: 2024)
        for entry in ProfileCatalog.trainerProfiles {
            var decoder = entry.makeDecoder(ProfileOptions())
            var ok = 0
            for i in 0..<3000 {
                var input = random.bytes(Int.random(in: 0...20, using: &random))
                if entry.name == "fec", i % 3 == 0 {
                    // Well-formed frames with random pages, so the stateful path runs too.
                    input = FECFrame(page: .raw([[16, 17, 25, 26, 48, 49, 50, 51, 54, 55, 70, 71, 80, 81][i % 14]] + random.bytes(7))).bytes
                }
                if (try? decoder.decode(input, at: Double(i) * 0.25)) != nil { ok += 1 }
            }
            #expect(ok > 0, "\(entry.name) never decoded")
        }
    }
}

@Suite struct FTMSCatalogTests {
    func summary(_ name: String, _ hex: String) throws -> String {
        let entry = try #require(ProfileCatalog.named(name), "\(name)")
        var decoder = entry.makeDecoder(ProfileOptions())
        return try decoder.decode(trainerHex(hex), at: 0).summary
    }

    @Test func entriesAndCharacteristics() throws {
        let expected: [(String, BluetoothUUID)] = [
            ("ftms-feature", .fitnessMachineFeature), ("ftms-indoor-bike", .indoorBikeData),
            ("ftms-training-status", .trainingStatus), ("ftms-control-point", .fitnessMachineControlPoint),
            ("ftms-status", .fitnessMachineStatus), ("ftms-speed-range", .supportedSpeedRange),
            ("ftms-inclination-range", .supportedInclinationRange), ("ftms-resistance-range", .supportedResistanceLevelRange),
            ("ftms-heart-rate-range", .supportedHeartRateRange), ("ftms-power-range", .supportedPowerRange),
            ("fec", .tacxFECNotify),
        ]
        #expect(ProfileCatalog.trainerProfiles.count == expected.count + 1)
        #expect(try #require(ProfileCatalog.named("ftms-service-data")).characteristic == nil)
        for (name, uuid) in expected {
            let entry = try #require(ProfileCatalog.named(name))
            #expect(entry.characteristic == uuid)
            #expect(ProfileCatalog.forCharacteristic(uuid)?.name == name)
            #expect(entry.isStateful == (name == "fec"))
        }
    }

    @Test func summaries() throws {
        #expect(
            try summary("ftms-feature", "86 50 00 00 0C E0 00 00")
                == "measures: cadence, total distance, resistance level, elapsed time, power measurement; "
                + "targets: resistance level, power, indoor bike simulation, wheel circumference, spin-down control")
        #expect(
            try summary("ftms-indoor-bike", "54 08 6F 05 96 00 5C 03 00 22 00 94 03")
                == "13.91 km/h, 75.0 rpm, 860 m, 34 W, elapsed 916 s")
        #expect(try summary("ftms-training-status", "01 0C 45 52 47") == "watt control \"ERG\"")
        #expect(try summary("ftms-control-point", "05 C8 00") == "→ set target power 200 W")
        #expect(try summary("ftms-control-point", "80 05 05") == "← response to set target power: control not permitted")
        #expect(try summary("ftms-control-point", "02") == "← response (result only): op code not supported")
        #expect(
            try summary("ftms-control-point", "11 00 00 6F FF 28 33")
                == "→ set indoor bike simulation: wind 0.000 m/s, grade -1.45 %, Crr 0.0040, Cw 0.51 kg/m")
        #expect(try summary("ftms-status", "08 C8 00") == "target power changed: 200 W")
        #expect(try summary("ftms-status", "02 02") == "paused by user")
        #expect(try summary("ftms-power-range", "00 00 A0 0F 01 00") == "power 0 to 4000 W, step 1")
        #expect(try summary("ftms-resistance-range", "00 00 C8 00 01 00") == "resistance 0.0 to 20.0, step 0.1")
        #expect(try summary("ftms-speed-range", "00 00 A0 0F 0A 00") == "speed 0.00 to 40.00 km/h, step 0.10")
        #expect(try summary("ftms-inclination-range", "9C FF C8 00 05 00") == "inclination -10.0 to 20.0 %, step 0.5")
        #expect(try summary("ftms-heart-rate-range", "3C C8 01") == "heart rate 60 to 200 bpm, step 1")
        #expect(try summary("ftms-service-data", "01 20 00") == "indoor bike, available")
    }

    @Test func catalogErrorsNameTheField() throws {
        let entry = try #require(ProfileCatalog.named("ftms-indoor-bike"))
        var decoder = entry.makeDecoder(ProfileOptions())
        #expect(throws: DecodingError.truncated("Indoor Bike Data.heart rate", needed: 1, present: 0, at: 8)) {
            try decoder.decode(trainerHex("44 02 9C 09 5C 00 4F 00"), at: 0)
        }
    }
}

@Suite struct FTMSJSONTests {
    func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    @Test func readableJSON() throws {
        let bike = try IndoorBikeData(exactly: trainerHex("44 02 9C 09 5C 00 4F 00 50"))
        #expect(
            try json(bike)
                == #"{"heartRateBpm":80,"instantaneousCadenceHalfRpm":92,"instantaneousPowerWatts":79,"instantaneousSpeedHundredthKmh":2460,"resistanceLevelWidth":"twoBytes"}"#)
        #expect(try json(FitnessMachineControlPointMessage.request(.setTargetPower(watts: 200))) == #"{"request":{"setTargetPower":{"watts":200}}}"#)
        #expect(try json(FitnessMachineControlPointRequest.stopOrPause(control: .pause)) == #"{"stopOrPause":{"control":"pause"}}"#)
        #expect(try json(TrainingStatus(status: .wattControl, statusString: "ERG")) == #"{"extendedString":false,"status":"watt control","statusString":"ERG"}"#)
        let feature = try FitnessMachineFeature(exactly: trainerHex("06 00 00 00 08 00 00 00"))
        #expect(try json(feature) == #"{"machineFeatures":["cadence","total distance"],"targetSettingFeatures":["power"]}"#)
        let frame = try FECFrame(exactly: trainerHex("A4 09 4F 05 31 FF FF FF FF FF 20 03 0A"))
        #expect(
            try json(frame)
                == #"{"channel":5,"checksumConvention":"xor","messageID":"acknowledged","page":{"pageNumber":49,"targetPower":{"targetPowerQuarterWatts":800}}}"#)
        #expect(try json(FECPage.raw([0xFC, 1, 2, 3, 4, 5, 6, 7])) == #"{"pageNumber":252,"raw":"FC 01 02 03 04 05 06 07"}"#)
    }
}
