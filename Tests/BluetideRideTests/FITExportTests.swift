import BluetideBase
import BluetideProfiles
import BluetideRecording
import BluetideTestSupport
import Foundation
import Testing
@testable import BluetideRide

/// The FIT encoder byte by byte (CRC, header, definition and data messages), and the activity
/// files it writes read back by Garmin's FIT SDK for Python and by fitdecode.
@Suite struct FITEncoderTests {
    @Test func theCRCIsFITsCRC16() {
        // The CRC-16/ARC check value, and a header's CRC as Garmin's SDK (garmin_fit_sdk.crc_calculator) computes it.
        #expect(FITCRC.checksum(Array("123456789".utf8)) == 0xBB3D)
        #expect(FITCRC.checksum([14, 0x20, 0x34, 0x08, 100, 0, 0, 0] + Array(".FIT".utf8)) == 0xB4BD)
    }

    @Test func theHeaderCarriesSizesVersionsAndItsCRC() {
        #expect(FITEncoder.header(dataSize: 100) == [14, 0x20, 0x34, 0x08, 100, 0, 0, 0, 0x2E, 0x46, 0x49, 0x54, 0xBD, 0xB4])
        // An empty file: the header and the CRC of it, so the whole file checks to 0.
        let empty = FITEncoder().file()
        #expect(empty.count == 16)
        #expect(FITCRC.checksum(empty) == 0)
    }

    @Test func aRecordIsDefinedOnceThenWrittenWithInvalidValuesForGaps() {
        var fit = FITEncoder()
        let full = RideSample(time: 1, trigger: .tick, speedKmh: 36, cadenceRpm: 90.4, powerWatts: 200, heartRateBpm: 120, distanceMeters: 10)
        let gap = RideSample(time: 2, trigger: .tick, distanceMeters: 10)
        fit.append(FITActivityWriter.record(full, timestamp: 0x1234_5678))
        fit.append(FITActivityWriter.record(gap, timestamp: 0x1234_5679))
        let file = fit.file()
        let body = Array(file[14..<(file.count - 2)])
        #expect(body == [
            // Definition, local type 0: reserved, little-endian, global 20 (record), 6 fields (number, size, base type).
            0x40, 0x00, 0x00, 0x14, 0x00, 0x06,
            0xFD, 4, 0x86, 0x03, 1, 0x02, 0x04, 1, 0x02, 0x05, 4, 0x86, 0x06, 2, 0x84, 0x07, 2, 0x84,
            // Data: timestamp, 120 bpm, 90 rpm, 1000 cm, 10000 mm/s, 200 W.
            0x00, 0x78, 0x56, 0x34, 0x12, 120, 90, 0xE8, 0x03, 0x00, 0x00, 0x10, 0x27, 0xC8, 0x00,
            // The same layout again: no new definition; missing values are the invalid ones.
            0x00, 0x79, 0x56, 0x34, 0x12, 0xFF, 0xFF, 0xE8, 0x03, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF,
        ])
        #expect(Array(file[4..<8]) == [UInt8(body.count), 0, 0, 0])
        #expect(FITCRC.checksum(file) == 0)
    }

    @Test func stringsAreNullTerminatedAndEachLengthIsALayout() {
        var fit = FITEncoder()
        fit.append(FITMessage(23, [FITField(27, string: "HRM")]))
        fit.append(FITMessage(23, [FITField(27, string: "Neo")]))
        fit.append(FITMessage(23, [FITField(27, string: "Tacx Neo")]))
        let file = fit.file()
        #expect(Array(file[14..<(file.count - 2)]) == [
            0x40, 0, 0, 23, 0, 1, 27, 4, 0x07, 0x00, 0x48, 0x52, 0x4D, 0x00,
            0x00, 0x4E, 0x65, 0x6F, 0x00,
            0x41, 0, 0, 23, 0, 1, 27, 9, 0x07, 0x01, 0x54, 0x61, 0x63, 0x78, 0x20, 0x4E, 0x65, 0x6F, 0x00,
        ])
    }

    @Test func aSeventeenthLayoutReusesTheLeastRecentlyUsedLocalType() {
        var fit = FITEncoder()
        for global in 0..<17 { fit.append(FITMessage(UInt16(100 + global), [FITField(0, .uint8, 1)])) }
        let file = fit.file()
        // Definitions carry local types 0…15, then 0 again (the least recently used).
        var locals: [UInt8] = []
        var at = 14
        while at < file.count - 2 {
            let header = file[at]
            if header & 0x40 != 0 {
                locals.append(header & 0x0F)
                at += 6 + 3 * Int(file[at + 5])
            } else {
                at += 2
            }
        }
        #expect(locals == Array(0..<16) + [0])
    }

    @Test func outOfRangeValuesAreInvalidNotWrapped() {
        #expect(FITField(7, .uint16, 70_000).bytes() == [0xFF, 0xFF])
        #expect(FITField(3, .uint8, -1).bytes() == [0xFF])
        #expect(FITField(3, .uint32z, 0).bytes() == [0, 0, 0, 0])
        #expect(FITField(9, .sint16, -2).bytes() == [0xFE, 0xFF])
    }

    @Test func workoutStepsBecomeLapsAroundTheRide() {
        let workout = Workout(name: "w", steps: [
            WorkoutStep(kind: "warmup", durationSeconds: 60, startPower: .watts(100), endPower: .watts(150)),
            WorkoutStep(kind: "steady", durationSeconds: 120, startPower: .watts(200)),
            WorkoutStep(kind: "cooldown", durationSeconds: 60, startPower: .watts(100)),
        ])
        let laps = RideLap.laps(of: workout, startingAt: 10, rideEnd: 200)
        #expect(laps == [
            RideLap(start: 0, end: 10),
            RideLap(start: 10, end: 70, workoutStep: 0, kind: "warmup"),
            RideLap(start: 70, end: 190, workoutStep: 1, kind: "steady"),
            RideLap(start: 190, end: 200, workoutStep: 2, kind: "cooldown"),
        ])
        // A target of 200 W at 75 s is the second step's start: the workout started at 15 s.
        #expect(RideExport.workoutStart(workout, ftpWatts: 200, targets: [(3, nil), (75, .power(watts: 200))]) == 15)
        #expect(RideExport.workoutStart(workout, ftpWatts: 200, targets: [(3, .grade(percent: 1))]) == nil)
    }
}

/// FIT files of a recorded ride read by Garmin's FIT SDK for Python (PyPI `garmin-fit-sdk`) and
/// by `fitdecode` (both in Interop/requirements.txt): no error, no warning, and every record,
/// lap and session value the ride's.
@Suite(.needsPythonModule("garmin_fit_sdk", install: "python3 -m pip install garmin-fit-sdk fitdecode"), .timeLimit(.minutes(2)))
struct FITDecoderTests {
    static let start = Date(timeIntervalSince1970: 1_795_000_000.250)
    static let trainer = DeviceIdentity(address: "C0:00:00:00:00:01", name: "Bluetide FTMS Bike")
    static let strap = DeviceIdentity(address: "C0:00:00:00:00:02", name: "HRM")

    /// A 3-minute ride: an FTMS bike ramping power, a strap that drops out for 20 s, and the
    /// targets of a 3-step workout started at 30 s.
    static func log() -> ValueLog {
        var records: [ValueRecord] = []
        for tenth in stride(from: 5, through: 1800, by: 5) {
            let t = Double(tenth) / 10
            let watts = 100 + tenth / 10
            let bike = IndoorBikeData(
                instantaneousSpeedHundredthKmh: UInt16(2500 + tenth), instantaneousCadenceHalfRpm: UInt16(170 + tenth % 20),
                instantaneousPowerWatts: Int16(watts))
            records.append(ValueRecord(timestamp: t, device: trainer, characteristic: .indoorBikeData, operation: .notify, value: bike.bytes))
            if !(100...120).contains(t) {
                records.append(ValueRecord(timestamp: t, device: strap, characteristic: .heartRateMeasurement, operation: .notify, value: [0, UInt8(110 + tenth / 50)]))
            }
            if tenth == 300 || tenth == 900 || tenth == 1500 {
                let watts: UInt16 = tenth == 900 ? 250 : 150
                records.append(ValueRecord(
                    timestamp: t, device: trainer, characteristic: .fitnessMachineControlPoint, operation: .write,
                    value: FitnessMachineControlPointRequest.setTargetPower(watts: Int16(watts)).bytes))
            }
        }
        return ValueLog(header: ValueLogHeader(startedAt: WallClockTime(start)), records: records)
    }

    static let workout = Workout(name: "3 steps", steps: [
        WorkoutStep(kind: "warmup", durationSeconds: 60, startPower: .ftpFraction(0.6)),
        WorkoutStep(kind: "interval on", durationSeconds: 60, startPower: .ftpFraction(1.0)),
        WorkoutStep(kind: "cooldown", durationSeconds: 120, startPower: .ftpFraction(0.6)),
    ])

    /// What check_fit.py printed for `bytes`.
    static func decode(_ bytes: [UInt8]) async throws -> [String: Any] {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ride-\(UUID().uuidString.prefix(8)).fit").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let script = BumbleEnvironment.repositoryRoot.appendingPathComponent("Interop/fit/check_fit.py").path
        let python = try #require(OptionalTool.executable("python3"), "python3 is not installed")
        let (status, out, err) = try await run(python, [script, path])
        #expect(status == 0, "\(err)")
        let object = try JSONSerialization.jsonObject(with: Data(out.utf8))
        return try #require(object as? [String: Any], "\(out)")
    }

    static func run(_ executable: URL, _ arguments: [String]) async throws -> (Int32, String, String) {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                let process = Process()
                process.executableURL = executable
                process.arguments = arguments
                // Standard error goes to a file, so a chatty child never blocks on a full pipe.
                let errorPath = FileManager.default.temporaryDirectory.appendingPathComponent("fit-\(UUID().uuidString.prefix(8)).err").path
                _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
                defer { try? FileManager.default.removeItem(atPath: errorPath) }
                let out = Pipe()
                process.standardOutput = out
                process.standardError = FileHandle(forWritingAtPath: errorPath)
                do {
                    try process.run()
                    let data = out.fileHandleForReading.readDataToEndOfFile()
                    process.waitUntilExit()
                    let errors = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
                    continuation.resume(returning: (process.terminationStatus, String(decoding: data, as: UTF8.self), errors))
                } catch {
                    continuation.resume(throwing: error)
                }
            }.start()
        }
    }

    static func messages(_ decoded: [String: Any], _ decoder: String, _ name: String) -> [[String: Any]] {
        ((decoded[decoder] as? [String: Any])?["messages"] as? [String: Any])?[name] as? [[String: Any]] ?? []
    }

    static func number(_ value: Any?) -> Double? { (value as? NSNumber)?.doubleValue }

    @Test func garminsSDKAndFitdecodeReadTheRideWithItsValues() async throws {
        let log = Self.log()
        let samples = try await RideExport.samples(of: log)
        #expect(samples.count == 180)
        let bytes = try await RideExport.file(of: log, format: .fit, workout: Self.workout, ftpWatts: 250)
        let decoded = try await Self.decode(bytes)
        let garmin = try #require(decoded["garmin"] as? [String: Any])
        #expect(garmin["missing"] == nil, "garmin-fit-sdk is missing: python3 -m pip install -r Interop/requirements.txt")
        #expect(garmin["integrity"] as? Bool == true)
        #expect((garmin["errors"] as? [Any])?.isEmpty == true, "\(garmin["errors"] ?? "")")
        let fitdecode = try #require(decoded["fitdecode"] as? [String: Any])
        #expect(fitdecode["missing"] == nil, "fitdecode is missing: python3 -m pip install -r Interop/requirements.txt")
        #expect((fitdecode["errors"] as? [Any])?.isEmpty == true, "\(fitdecode["errors"] ?? "")")
        #expect((fitdecode["warnings"] as? [Any])?.isEmpty == true, "\(fitdecode["warnings"] ?? "")")

        let base = FITEncoder.timestamp(Self.start)
        for decoder in ["garmin", "fitdecode"] {
            // Every record: the sample's time and values; a gap is no value.
            let records = Self.messages(decoded, decoder, "record")
            #expect(records.count == samples.count, "\(decoder)")
            for (record, sample) in zip(records, samples) {
                #expect(Self.number(record["timestamp"]) == Double(base + Int64(sample.time)), "\(decoder) t=\(sample.time)")
                #expect(Self.number(record["power"]) == sample.powerWatts.map(Double.init), "\(decoder) t=\(sample.time)")
                #expect(Self.number(record["heart_rate"]) == sample.heartRateBpm.map(Double.init), "\(decoder) t=\(sample.time)")
                #expect(Self.number(record["cadence"]) == sample.cadenceRpm.map { $0.rounded() }, "\(decoder) t=\(sample.time)")
                let speed = try #require(Self.number(record["speed"] ?? record["enhanced_speed"]), "\(decoder) t=\(sample.time)")
                #expect(abs(speed - sample.speedKmh! / 3.6) < 0.0006, "\(decoder) t=\(sample.time)")
                let distance = try #require(Self.number(record["distance"]))
                #expect(abs(distance - sample.distanceMeters) < 0.006, "\(decoder) t=\(sample.time)")
            }
            // Laps: before the workout (0–30 s), its three steps (the last cut at the ride's end).
            let laps = Self.messages(decoded, decoder, "lap")
            #expect(laps.compactMap { Self.number($0["total_elapsed_time"]) } == [30, 60, 60, 30], "\(decoder)")
            #expect(laps.map { $0["intensity"] as? String } == ["active", "warmup", "active", "cooldown"], "\(decoder)")
            #expect(laps.compactMap { Self.number($0["start_time"]) } == [0, 30, 90, 150].map { Double(base + $0) }, "\(decoder)")
            let spans: [ClosedRange<Double>] = [1...30, 31...90, 91...150, 151...180]
            for (lap, span) in zip(laps, spans) {
                var summary = RideSummary()
                for sample in samples where span.contains(sample.time) { summary.add(sample) }
                let powers = samples.filter { span.contains($0.time) }.compactMap(\.powerWatts)
                #expect(Self.number(lap["avg_power"]) == summary.averagePowerWatts.map { $0.rounded() }, "\(decoder) \(span)")
                #expect(Self.number(lap["max_power"]) == powers.max().map(Double.init), "\(decoder) \(span)")
                #expect(Self.number(lap["max_heart_rate"]) == summary.maximumHeartRateBpm.map(Double.init), "\(decoder) \(span)")
                #expect(Self.number(lap["avg_heart_rate"]) == summary.averageHeartRateBpm.map { $0.rounded() }, "\(decoder) \(span)")
                let before = samples.last { $0.time < span.lowerBound }?.distanceMeters ?? 0
                let after = samples.last { span.contains($0.time) }?.distanceMeters ?? 0
                #expect(abs((Self.number(lap["total_distance"]) ?? -1) - (after - before)) < 0.006, "\(decoder) \(span)")
                #expect(Self.number(lap["total_work"]) == Double(powers.reduce(0, +)), "\(decoder) \(span)")
            }
            // The session: the whole ride.
            let session = try #require(Self.messages(decoded, decoder, "session").first)
            var summary = RideSummary()
            for sample in samples { summary.add(sample) }
            #expect(session["sport"] as? String == "cycling")
            #expect(session["sub_sport"] as? String == "indoor_cycling")
            #expect(Self.number(session["total_elapsed_time"]) == 180)
            #expect(Self.number(session["num_laps"]) == 4)
            #expect(Self.number(session["avg_power"]) == summary.averagePowerWatts.map { $0.rounded() })
            #expect(Self.number(session["max_power"]) == summary.maximumPowerWatts.map(Double.init))
            #expect(Self.number(session["avg_heart_rate"]) == summary.averageHeartRateBpm.map { $0.rounded() })
            #expect(Self.number(session["max_heart_rate"]) == summary.maximumHeartRateBpm.map(Double.init))
            #expect(abs((Self.number(session["total_distance"]) ?? -1) - samples.last!.distanceMeters) < 0.006)
            #expect(Self.number(session["avg_cadence"]) == summary.averageCadenceRpm.map { $0.rounded() })
            // Devices: Bluetide, then the trainer and the strap, by name and kind.
            let devices = Self.messages(decoded, decoder, "device_info")
            #expect(devices.map { $0["product_name"] as? String } == ["Bluetide", "Bluetide FTMS Bike", "HRM"], "\(decoder)")
            let activity = try #require(Self.messages(decoded, decoder, "activity").first)
            #expect(Self.number(activity["num_sessions"]) == 1)
            let fileID = try #require(Self.messages(decoded, decoder, "file_id").first)
            #expect(fileID["type"] as? String == "activity")
        }
        let garminDevices = Self.messages(decoded, "garmin", "device_info")
        #expect(garminDevices.map { $0["ble_device_type"] as? String } == [nil, "bike_trainer", "heart_rate"])
    }
}
