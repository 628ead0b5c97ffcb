import BluetideBase
import Testing

@testable import BluetideProfiles

// MARK: - Helpers shared by the FTMS and FE-C tests (prefixed to stay clear of other suites)

/// Bytes from spaced hex as the spec prints it.
func trainerHex(_ text: String) -> [UInt8] {
    (try? Hex.parse(text)) ?? []
}

/// A field of a wire layout, for truncation tests: its error name and width in bytes.
struct TrainerField {
    let name: String
    let width: Int
    init(_ name: String, _ width: Int) {
        self.name = name
        self.width = width
    }
}

/// Cuts `bytes` at every length inside each listed field and expects a truncation error naming
/// that field, with the bytes needed and present. Cut lengths in `decodableCuts` are skipped
/// (layouts that are legitimately valid at that length).
func expectTrainerTruncation(
    _ bytes: [UInt8], _ fields: [TrainerField], decodableCuts: Set<Int> = [],
    sourceLocation: SourceLocation = #_sourceLocation,
    _ decode: ([UInt8]) throws(DecodingError) -> Void
) {
    var start = 0
    for field in fields {
        for cut in start..<(start + field.width) where !decodableCuts.contains(cut) && cut < bytes.count {
            do {
                try decode(Array(bytes.prefix(cut)))
                Issue.record("cut at \(cut) decoded, expected truncation in \(field.name)", sourceLocation: sourceLocation)
            } catch {
                #expect(error.field == field.name, "cut at \(cut)", sourceLocation: sourceLocation)
                #expect(
                    error.kind == .truncated(needed: field.width, present: cut - start), "cut at \(cut)",
                    sourceLocation: sourceLocation)
            }
        }
        start += field.width
    }
}

/// A small deterministic generator (SplitMix64) so robustness tests are reproducible.
struct TrainerTestRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) }
    }
}

// MARK: - Fitness Machine Feature

@Suite struct FTMSFeatureTests {
    @Test func eliteTrainerExample() throws {
        let bytes = trainerHex("86 50 00 00 0C E0 00 00")
        let feature = try FitnessMachineFeature(exactly: bytes)
        #expect(feature.machineFeatures == [.cadence, .totalDistance, .resistanceLevel, .elapsedTime, .powerMeasurement])
        #expect(
            feature.targetSettingFeatures
                == [.resistanceLevel, .power, .indoorBikeSimulation, .wheelCircumference, .spinDownControl])
        #expect(feature.machineFeatures.names == ["cadence", "total distance", "resistance level", "elapsed time", "power measurement"])
        #expect(feature.bytes == bytes)
    }

    @Test func reservedBitsAreKeptAndNamed() throws {
        let feature = try FitnessMachineFeature(bytes: trainerHex("00 00 02 80 00 00 01 00"))
        #expect(feature.machineFeatures.names == ["bit 17", "bit 31"])
        #expect(feature.targetSettingFeatures == .targetedCadence)
        #expect(feature.bytes == trainerHex("00 00 02 80 00 00 01 00"))
    }

    @Test func truncation() {
        expectTrainerTruncation(
            trainerHex("86 50 00 00 0C E0 00 00"),
            [TrainerField("Fitness Machine Feature.machine features", 4), TrainerField("Fitness Machine Feature.target setting features", 4)]
        ) { bytes throws(DecodingError) in _ = try FitnessMachineFeature(bytes: bytes) }
    }
}

// MARK: - Advertising service data

@Suite struct FTMSServiceDataTests {
    @Test func availableIndoorBike() throws {
        let data = try FitnessMachineServiceData(exactly: trainerHex("01 20 00"))
        #expect(data == FitnessMachineServiceData(machineAvailable: true, machineTypes: .indoorBike))
        #expect(data.bytes == trainerHex("01 20 00"))
        #expect(data.description == "indoor bike, available")
        expectTrainerTruncation(
            trainerHex("01 20 00"),
            [TrainerField("Fitness Machine Service Data.flags", 1), TrainerField("Fitness Machine Service Data.machine type", 2)]
        ) { b throws(DecodingError) in _ = try FitnessMachineServiceData(bytes: b) }
    }
}

// MARK: - Indoor Bike Data

@Suite struct FTMSIndoorBikeDataTests {
    let ctx = "Indoor Bike Data"

    @Test func devhideExample() throws {
        let bytes = trainerHex("44 02 9C 09 5C 00 4F 00 50")
        let data = try IndoorBikeData(exactly: bytes)
        #expect(data.flags == 0x0244)
        #expect(data.instantaneousSpeedHundredthKmh == 2460)
        #expect(data.instantaneousSpeedKmh == 24.6)
        #expect(data.instantaneousCadenceRpm == 46.0)
        #expect(data.instantaneousPowerWatts == 79)
        #expect(data.heartRateBpm == 80)
        #expect(data.averageSpeedHundredthKmh == nil && data.totalDistanceMeters == nil && !data.hasMoreData)
        #expect(data.bytes == bytes)
        #expect(data.description == "24.60 km/h, 46.0 rpm, 79 W, HR 80")
    }

    @Test func eliteThreeByteDistance() throws {
        let bytes = trainerHex("54 08 6F 05 96 00 5C 03 00 22 00 94 03")
        let data = try IndoorBikeData(exactly: bytes)
        #expect(data.instantaneousSpeedKmh == 13.91)
        #expect(data.instantaneousCadenceRpm == 75.0)
        #expect(data.totalDistanceMeters == 860)
        #expect(data.instantaneousPowerWatts == 34)
        #expect(data.elapsedTimeSeconds == 916)
        #expect(data.bytes == bytes)
    }

    @Test func zwiftHubWithAverages() throws {
        let bytes = trainerHex("FE 02 F0 04 1A 05 00 00 00 00 12 00 00 14 00 00 00 00 00 00")
        let data = try IndoorBikeData(exactly: bytes)
        #expect(data.flags == 0x02FE)
        #expect(data.instantaneousSpeedKmh == 12.64)
        #expect(data.averageSpeedKmh == 13.06)
        #expect(data.instantaneousCadenceHalfRpm == 0 && data.averageCadenceHalfRpm == 0)
        #expect(data.totalDistanceMeters == 18)
        #expect(data.resistanceLevel == 20 && data.resistanceLevelWidth == .twoBytes)
        #expect(data.instantaneousPowerWatts == 0 && data.averagePowerWatts == 0)
        #expect(data.heartRateBpm == 0)
        #expect(data.bytes == bytes)
    }

    @Test func twoByteResistanceAndEnergy() throws {
        let bytes = trainerHex("74 03 B2 0C B0 00 AB 00 00 11 00 A2 00 03 00 00 00 00 00")
        let data = try IndoorBikeData(exactly: bytes)
        #expect(data.instantaneousSpeedKmh == 32.5)
        #expect(data.instantaneousCadenceRpm == 88.0)
        #expect(data.totalDistanceMeters == 171)
        #expect(data.resistanceLevel == 17 && data.resistanceLevelWidth == .twoBytes)
        #expect(data.instantaneousPowerWatts == 162)
        #expect(data.energy == IndoorBikeData.ExpendedEnergy(totalKcal: 3, perHourKcal: 0, perMinuteKcal: 0))
        #expect(data.heartRateBpm == 0)
        #expect(data.bytes == bytes)
    }

    @Test func aPacketOneByteShortIsRefusedNotReadWithAGuessedWidth() throws {
        // flags 0x0020 with speed: speed + a 2-byte resistance level = 6 bytes; 5 is refused.
        let error = #expect(throws: DecodingError.self) { try IndoorBikeData(bytes: trainerHex("20 00 10 27 0F")) }
        #expect(error?.field == "Indoor Bike Data.resistance level", "\(String(describing: error))")
        #expect(error?.kind == .truncated(needed: 2, present: 1))
        // Encoding a one-byte resistance level is still possible, on request.
        let oneByte = IndoorBikeData(instantaneousSpeedHundredthKmh: 10000, resistanceLevel: 15, resistanceLevelWidth: .oneByte)
        #expect(oneByte.bytes == trainerHex("20 00 10 27 0F"))
    }

    @Test func theLifeFitnessCadenceWithoutItsFlagIsRefused() throws {
        // Flags 0x0FF2 (speed, average speed, distance, resistance, power, average power, energy,
        // HR, MET, elapsed time) describe 24 bytes; the bike also sends its instantaneous cadence
        // without flag bit 2, 26 bytes in all. Refused, saying both lengths.
        let flags: UInt16 = 0x0FF2
        #expect(2 + IndoorBikeData.fieldLength(flags: flags) == 24)
        let packet = [0xF2, 0x0F] + [UInt8](repeating: 0x11, count: 24)
        let error = #expect(throws: DecodingError.self) { try IndoorBikeData(bytes: packet) }
        #expect(error?.description.contains("24 bytes as flags 0x0FF2 describe") == true, "\(String(describing: error))")
        #expect(error?.description.contains("26 bytes") == true)
    }

    @Test func speedOnlyAndSplitRecords() throws {
        let speedOnly = try IndoorBikeData(exactly: trainerHex("00 00 E8 03"))
        #expect(speedOnly.instantaneousSpeedKmh == 10.0 && speedOnly.flags == 0)
        // Bit 0 set: no speed, more data follows; this part carries only the heart rate.
        let part = try IndoorBikeData(exactly: trainerHex("01 02 5A"))
        #expect(part.instantaneousSpeedHundredthKmh == nil && part.hasMoreData && part.heartRateBpm == 90)
        #expect(part.bytes == trainerHex("01 02 5A"))
    }

    @Test func splitRecordMerges() throws {
        // First part: bit 0 set (more data), power and HR; last part: speed and cadence.
        let first = try IndoorBikeData(exactly: trainerHex("41 02 C8 00 78"))
        let last = try IndoorBikeData(exactly: trainerHex("04 00 B2 0C B4 00"))
        #expect(first.hasMoreData && !last.hasMoreData)
        let record = first.merged(with: last)
        #expect(record.instantaneousSpeedKmh == 32.5 && record.instantaneousCadenceRpm == 90)
        #expect(record.instantaneousPowerWatts == 200 && record.heartRateBpm == 120)
        #expect(record.bytes == trainerHex("44 02 B2 0C B4 00 C8 00 78"))
    }

    @Test func everyFieldRoundTrips() throws {
        let data = IndoorBikeData(
            instantaneousSpeedHundredthKmh: 3000, averageSpeedHundredthKmh: 2900, instantaneousCadenceHalfRpm: 180,
            averageCadenceHalfRpm: 170, totalDistanceMeters: 0x123456, resistanceLevel: -5,
            instantaneousPowerWatts: -12, averagePowerWatts: 250, energy: .init(totalKcal: 100, perHourKcal: 600, perMinuteKcal: 10),
            heartRateBpm: 150, metabolicEquivalentTenths: 85, elapsedTimeSeconds: 3600, remainingTimeSeconds: 60)
        #expect(data.flags == 0x1FFE)
        #expect(data.bytes.count == 2 + IndoorBikeData.fieldLength(flags: 0x1FFE))
        #expect(try IndoorBikeData(exactly: data.bytes) == data)
        #expect(data.metabolicEquivalent == 8.5)
        #expect(data.averageCadenceRpm == 85)
    }

    @Test func reservedFlagBitsIgnoredAndTrailingBytesRefused() throws {
        let data = try IndoorBikeData(bytes: trainerHex("00 E0 E8 03"))
        #expect(data.instantaneousSpeedHundredthKmh == 1000)
        #expect(data.bytes == trainerHex("00 00 E8 03"))
        // Bytes beyond what the flags describe: the length does not match, refused.
        let error = #expect(throws: DecodingError.self) { try IndoorBikeData(bytes: trainerHex("00 E0 E8 03 AA BB")) }
        #expect(error?.description.contains("4 bytes as flags 0xE000 describe, found 6 bytes") == true, "\(String(describing: error))")
    }

    @Test func truncationAtEveryFieldBoundary() {
        let decode: ([UInt8]) throws(DecodingError) -> Void = { bytes throws(DecodingError) in _ = try IndoorBikeData(bytes: bytes) }
        expectTrainerTruncation(
            trainerHex("44 02 9C 09 5C 00 4F 00 50"),
            [
                TrainerField("\(ctx).flags", 2), TrainerField("\(ctx).instantaneous speed", 2),
                TrainerField("\(ctx).instantaneous cadence", 2), TrainerField("\(ctx).instantaneous power", 2),
                TrainerField("\(ctx).heart rate", 1),
            ], decode)
        expectTrainerTruncation(
            trainerHex("54 08 6F 05 96 00 5C 03 00 22 00 94 03"),
            [
                TrainerField("\(ctx).flags", 2), TrainerField("\(ctx).instantaneous speed", 2),
                TrainerField("\(ctx).instantaneous cadence", 2), TrainerField("\(ctx).total distance", 3),
                TrainerField("\(ctx).instantaneous power", 2), TrainerField("\(ctx).elapsed time", 2),
            ], decode)
        // With bit 5 set, a packet exactly one byte short is the one-byte resistance layout.
        let zwift = trainerHex("FE 02 F0 04 1A 05 00 00 00 00 12 00 00 14 00 00 00 00 00 00")
        expectTrainerTruncation(
            zwift,
            [
                TrainerField("\(ctx).flags", 2), TrainerField("\(ctx).instantaneous speed", 2),
                TrainerField("\(ctx).average speed", 2), TrainerField("\(ctx).instantaneous cadence", 2),
                TrainerField("\(ctx).average cadence", 2), TrainerField("\(ctx).total distance", 3),
                TrainerField("\(ctx).resistance level", 2), TrainerField("\(ctx).instantaneous power", 2),
                TrainerField("\(ctx).average power", 2), TrainerField("\(ctx).heart rate", 1),
            ], decodableCuts: [zwift.count - 1], decode)
        let energy = trainerHex("74 03 B2 0C B0 00 AB 00 00 11 00 A2 00 03 00 00 00 00 00")
        expectTrainerTruncation(
            energy,
            [
                TrainerField("\(ctx).flags", 2), TrainerField("\(ctx).instantaneous speed", 2),
                TrainerField("\(ctx).instantaneous cadence", 2), TrainerField("\(ctx).total distance", 3),
                TrainerField("\(ctx).resistance level", 2), TrainerField("\(ctx).instantaneous power", 2),
                TrainerField("\(ctx).total energy", 2), TrainerField("\(ctx).energy per hour", 2),
                TrainerField("\(ctx).energy per minute", 1), TrainerField("\(ctx).heart rate", 1),
            ], decodableCuts: [energy.count - 1], decode)
        let rest = IndoorBikeData(
            instantaneousSpeedHundredthKmh: 1, metabolicEquivalentTenths: 2, elapsedTimeSeconds: 3, remainingTimeSeconds: 4)
        expectTrainerTruncation(
            rest.bytes,
            [
                TrainerField("\(ctx).flags", 2), TrainerField("\(ctx).instantaneous speed", 2),
                TrainerField("\(ctx).metabolic equivalent", 1), TrainerField("\(ctx).elapsed time", 2),
                TrainerField("\(ctx).remaining time", 2),
            ], decode)
    }

    @Test func oneShortWithResistanceIsRefused() throws {
        let bytes = trainerHex("74 03 B2 0C B0 00 AB 00 00 11 00 A2 00 03 00 00 00 00 00")
        #expect(try IndoorBikeData(exactly: bytes).resistanceLevel == 0x11)
        #expect(throws: DecodingError.self) { try IndoorBikeData(exactly: Array(bytes.dropLast())) }
    }
}

// MARK: - Training Status

@Suite struct FTMSTrainingStatusTests {
    @Test func idle() throws {
        let status = try TrainingStatus(exactly: trainerHex("00 01"))
        #expect(status == TrainingStatus(status: .idle))
        #expect(status.bytes == trainerHex("00 01"))
        #expect(status.description == "idle")
    }

    @Test func wattControlWithString() throws {
        let status = try TrainingStatus(exactly: trainerHex("01 0C 45 52 47"))
        #expect(status.status == .wattControl)
        #expect(status.statusString == "ERG")
        #expect(!status.extendedString)
        #expect(status.bytes == trainerHex("01 0C 45 52 47"))
    }

    @Test func statusIsAlwaysPresentAndFlagsOnlyDescribeTheString() throws {
        // Bit 1 alone: extended string flagged, no string present, status still read.
        let status = try TrainingStatus(bytes: trainerHex("02 0D 41"))
        #expect(status.status == .manualMode && status.statusString == nil && status.extendedString)
        #expect(status.bytes == trainerHex("02 0D"))
        #expect(TrainingStatus.Code(rawValue: 0x10).name == "reserved (0x10)")
    }

    @Test func truncation() {
        expectTrainerTruncation(
            trainerHex("01 0C 45 52 47"), [TrainerField("Training Status.flags", 1), TrainerField("Training Status.status", 1)]
        ) { bytes throws(DecodingError) in _ = try TrainingStatus(bytes: bytes) }
    }
}

// MARK: - Supported ranges

@Suite struct FTMSSupportedRangeTests {
    @Test func powerRange() throws {
        let bytes = trainerHex("00 00 A0 0F 01 00")
        let range = try SupportedPowerRange(exactly: bytes)
        #expect(range == SupportedPowerRange(minimumWatts: 0, maximumWatts: 4000, incrementWatts: 1))
        #expect(range.bytes == bytes)
        #expect(try SupportedPowerRange(exactly: trainerHex("9C FF 10 27 05 00")).minimumWatts == -100)
    }

    @Test func resistanceRangeBothLayouts() throws {
        let bytes = trainerHex("00 00 C8 00 01 00")
        let range = try SupportedResistanceLevelRange(exactly: bytes)
        #expect(range.layout == .ftms10)
        #expect(range.levels.minimum == 0 && range.levels.maximum == 20 && range.levels.increment == 0.1)
        #expect(range.bytes == bytes)
        let short = try SupportedResistanceLevelRange(exactly: trainerHex("00 02 01"))
        #expect(short.layout == .uint8 && short.levels.maximum == 20 && short.levels.increment == 10)
        #expect(short.bytes == trainerHex("00 02 01"))
    }

    @Test func speedInclinationHeartRate() throws {
        let speed = try SupportedSpeedRange(exactly: trainerHex("00 00 A0 0F 0A 00"))
        #expect(speed.kmh.maximum == 40 && speed.kmh.increment == 0.1)
        #expect(speed.bytes == trainerHex("00 00 A0 0F 0A 00"))
        let incline = try SupportedInclinationRange(exactly: trainerHex("9C FF C8 00 05 00"))
        #expect(incline.percent.minimum == -10 && incline.percent.maximum == 20 && incline.percent.increment == 0.5)
        #expect(incline.bytes == trainerHex("9C FF C8 00 05 00"))
        let hr = try SupportedHeartRateRange(exactly: trainerHex("3C C8 01"))
        #expect(hr == SupportedHeartRateRange(minimumBpm: 60, maximumBpm: 200, incrementBpm: 1))
        #expect(hr.bytes == trainerHex("3C C8 01"))
    }

    @Test func truncation() {
        func fields(_ name: String, _ w: Int, _ inc: Int) -> [TrainerField] {
            [TrainerField("\(name).minimum", w), TrainerField("\(name).maximum", w), TrainerField("\(name).increment", inc)]
        }
        let six = trainerHex("00 00 A0 0F 01 00")
        expectTrainerTruncation(six, fields("Supported Speed Range", 2, 2)) { b throws(DecodingError) in _ = try SupportedSpeedRange(bytes: b) }
        expectTrainerTruncation(six, fields("Supported Inclination Range", 2, 2)) { b throws(DecodingError) in
            _ = try SupportedInclinationRange(bytes: b)
        }
        expectTrainerTruncation(six, fields("Supported Power Range", 2, 2)) { b throws(DecodingError) in _ = try SupportedPowerRange(bytes: b) }
        // Exactly 3 bytes is the uint8 layout, so that cut decodes.
        expectTrainerTruncation(six, fields("Supported Resistance Level Range", 2, 2), decodableCuts: [3]) { b throws(DecodingError) in
            _ = try SupportedResistanceLevelRange(bytes: b)
        }
        expectTrainerTruncation(trainerHex("3C C8 01"), fields("Supported Heart Rate Range", 1, 1)) { b throws(DecodingError) in
            _ = try SupportedHeartRateRange(bytes: b)
        }
    }
}
