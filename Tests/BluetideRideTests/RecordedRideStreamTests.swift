import BluetideBase
import BluetideProfiles
import BluetideRecording
import BluetideTestSupport
import Foundation
import Synchronization
import Testing
@testable import BluetideRide

/// A ride replayed (and exported) from its value log read as a stream: the first reading before
/// the rest of the file is read, damaged lines warned about with their line number, `strict`
/// stopping at the first one.
@Suite struct RecordedRideStreamTests {
    static let strap = DeviceIdentity(address: "C0:00:00:00:00:02", name: "HRM")
    static let start = Date(timeIntervalSince1970: 1_795_000_000)  // 2026-11-18T11:06:40Z

    static var header: String { ValueLogFormat.line(for: ValueLogHeader(startedAt: WallClockTime(start))) }

    /// A heart-rate notification `step` half-seconds into the ride.
    static func heartRate(_ step: Int) -> ValueRecord {
        ValueRecord(
            timestamp: Double(step) * 0.5, device: strap, characteristic: .heartRateMeasurement, operation: .notify,
            value: HeartRateMeasurement(beatsPerMinute: UInt16(100 + step % 60)).bytes)
    }

    static func line(_ record: ValueRecord) -> String { (try? ValueLogFormat.line(for: record)) ?? "" }

    static func file(_ lines: [String]) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ride-stream-\(UUID().uuidString.prefix(8)).jsonl").path
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Every event of `source`, played to its end.
    static func events(of source: RecordedRideSource<ContinuousClock>) async throws -> [RideEvent] {
        try await guarded("the replay's events") {
            var events: [RideEvent] = []
            for await event in try await source.start() { events.append(event) }
            return events
        }
    }

    static func readingTimes(_ events: [RideEvent]) -> [Double] {
        events.compactMap { if case let .reading(reading) = $0 { reading.time } else { nil } }
    }

    /// A recording of 50,000 lines, fed through a FIFO: the first reading comes out while the
    /// writer still holds back everything after the first lines (a reader that wanted the whole
    /// file first would wait for ever; the hang guard fails the test instead), then every reading
    /// is played, in order.
    @Test func aLongRecordingPlaysItsFirstReadingBeforeTheFileIsRead() async throws {
        let total = 50_000
        let feeder = try FIFOFeeder(head: [Self.header] + (0..<10).map { Self.line(Self.heartRate($0)) }) { write in
            for step in 10..<total { write(Self.line(Self.heartRate(step))) }
        }
        defer { feeder.remove() }
        let source = RecordedRideSource(path: feeder.path, pace: .asFastAsPossible)
        let events = try await source.start()
        let counted = try await guarded("50,000 readings through a FIFO", seconds: 300) { () -> (first: Int, readings: Int, last: Double) in
            var readings = 0
            var writtenAtFirst = -1
            var last = -1.0
            for await event in events {
                guard case let .reading(reading) = event else { continue }
                if readings == 0 {
                    writtenAtFirst = feeder.linesWritten
                    feeder.release()
                }
                readings += 1
                last = reading.time
            }
            return (writtenAtFirst, readings, last)
        }
        #expect(counted.first == 11, "the first reading came with only the header and 10 records written")
        #expect(counted.readings == total)
        #expect(counted.last == Double(total - 1) * 0.5)
        #expect(feeder.finished, "\(feeder.error ?? "")")
        #expect(source.playedToEnd && source.failure == nil)
        #expect(source.devices.map(\.role) == [.heartRate])
        #expect(source.header?.startedAt == WallClockTime(Self.start))
    }

    /// A file source makes the same events as the same records in memory, and learns its
    /// devices as they play.
    @Test func aFileReplaysLikeItsRecords() async throws {
        let records = (0..<9).map(Self.heartRate)
        let path = try Self.file([Self.header] + records.map(Self.line))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fromFile = RecordedRideSource(path: path, pace: .asFastAsPossible)
        #expect(fromFile.devices.isEmpty, "nothing is read before the replay starts")
        let streamed = try await Self.events(of: fromFile)
        let held = try await Self.events(of: RecordedRideSource(records: records, pace: .asFastAsPossible))
        #expect(streamed.count == held.count)
        #expect(Self.readingTimes(streamed) == Self.readingTimes(held))
        var a = RideMerger(), b = RideMerger()
        #expect(streamed.compactMap { a.receive($0) } == held.compactMap { b.receive($0) })
        #expect(fromFile.devices == [RideDevice(role: .heartRate, address: Self.strap.address, name: "HRM")])
    }

    @Test func aLoopedFileGoesOnInTime() async throws {
        let path = try Self.file([Self.header] + (0..<4).map { Self.line(Self.heartRate($0)) })
        defer { try? FileManager.default.removeItem(atPath: path) }
        let source = RecordedRideSource(path: path, pace: .asFastAsPossible, loop: true)
        let times = try await guarded("three passes") { () -> [Double] in
            var times: [Double] = []
            for await event in try await source.start() {
                if case let .reading(reading) = event { times.append(reading.time) }
                if times.count == 10 { break }
            }
            return times
        }
        await source.stop()
        // As the in-memory loop: one pass lasts 1.5 s (+1 s between passes).
        #expect(times == [0, 0.5, 1, 1.5, 2.5, 3, 3.5, 4, 5, 5.5])
        #expect(!source.playedToEnd)
    }

    /// A malformed line and a record out of order are warned about naming their lines and
    /// passed over (the record out of order is played); `strict` stops at the first one.
    @Test func damagedLinesAreWarnedAboutWithTheirLineOrStopAStrictReplay() async throws {
        let path = try Self.file([
            Self.header, Self.line(Self.heartRate(0)), Self.line(Self.heartRate(1)), #"{"t":"soon"}"#,
            Self.line(Self.heartRate(3)), Self.line(Self.heartRate(2)), Self.line(Self.heartRate(4)),
        ])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let warnings = Mutex<[ValueLogWarning]>([])
        let lenient = RecordedRideSource(path: path, pace: .asFastAsPossible) { warning in warnings.withLock { $0.append(warning) } }
        let played = Self.readingTimes(try await Self.events(of: lenient))
        #expect(played == [0, 0.5, 1.5, 1, 2])
        let seen = warnings.withLock { $0 }
        #expect(seen.map(\.kind) == [.malformedLine, .outOfOrder])
        #expect(seen.map(\.problem.line) == [4, 6], "\(seen)")
        #expect(lenient.playedToEnd && lenient.failure == nil)

        let strict = RecordedRideSource(path: path, pace: .asFastAsPossible, strict: true)
        let strictPlayed = Self.readingTimes(try await Self.events(of: strict))
        #expect(strictPlayed == [0, 0.5], "what came before the damaged line was played")
        let failure = try #require(strict.failure)
        #expect("\(failure)".contains("line 4"), "\(failure)")
        #expect(!strict.playedToEnd)
    }

    @Test func aMissingFileOrABadHeaderFailsTheStartNamingTheFile() async throws {
        let missing = "/nonexistent/\(UUID().uuidString).jsonl"
        await #expect(throws: RideError.self) { _ = try await RecordedRideSource(path: missing).start() }
        do {
            _ = try await RecordedRideSource(path: missing).start()
        } catch let error as RideError {
            #expect(error.message.hasPrefix("\(missing): "), "\(error.message)")
        }
        let headless = try Self.file([Self.line(Self.heartRate(0))])
        defer { try? FileManager.default.removeItem(atPath: headless) }
        await #expect(throws: RideError.self) { _ = try await RecordedRideSource(path: headless).start() }
    }

    /// Export from the file matches export from the log in memory; a damaged line is warned
    /// about (or, with `strict`, fails the export naming it).
    @Test func exportReadsTheLogAsAStream() async throws {
        let records = (0..<9).map(Self.heartRate)
        let clean = try Self.file([Self.header] + records.map(Self.line))
        defer { try? FileManager.default.removeItem(atPath: clean) }
        let log = ValueLog(header: ValueLogHeader(startedAt: WallClockTime(Self.start)), records: records)
        for format in RideExport.Format.allCases {
            let streamed = try await RideExport.file(ofLogAt: clean, format: format)
            #expect(streamed == (try await RideExport.file(of: log, format: format)), "\(format)")
        }
        #expect(try await RideExport.document(ofLogAt: clean, format: .csv).contains("1.000,2026-11-18T11:06:41.000Z,,,,101,0.00,"))

        let damaged = try Self.file([Self.header] + records.prefix(4).map(Self.line) + ["not json"] + records.dropFirst(4).map(Self.line))
        defer { try? FileManager.default.removeItem(atPath: damaged) }
        let warnings = Mutex<[ValueLogWarning]>([])
        let csv = try await RideExport.document(ofLogAt: damaged, format: .csv) { warning in warnings.withLock { $0.append(warning) } }
        #expect(csv.split(separator: "\n").count == 5, "every whole record is exported")
        #expect(warnings.withLock { $0.map(\.problem.line) } == [6])
        do {
            _ = try await RideExport.document(ofLogAt: damaged, format: .csv, strict: true)
            Issue.record("--strict exported past a damaged line")
        } catch let error as RideError {
            #expect(error.message.hasPrefix(damaged) && error.message.contains("line 6"), "\(error.message)")
        }
    }
}
