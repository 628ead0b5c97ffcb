import BluetideRecording
import Foundation

/// Turns a recorded ride (its value log) back into samples and export files: the log is replayed
/// as fast as possible through the same merging as the live ride.
public enum RideExport {
    /// Export formats.
    public enum Format: String, Sendable, CaseIterable {
        /// Garmin Training Center XML.
        case tcx
        /// Comma-separated values.
        case csv
    }

    /// The once-a-second samples of the ride recorded in `log`.
    public static func samples(of log: ValueLog, configuration: RideMerger.Configuration = .init()) async throws -> [RideSample] {
        try await samples(from: RecordedRideSource(records: log.records, pace: .asFastAsPossible), configuration: configuration)
    }

    /// The ride in `log` as `format`.
    public static func document(of log: ValueLog, format: Format, configuration: RideMerger.Configuration = .init()) async throws -> String {
        let samples = try await samples(of: log, configuration: configuration)
        return document(samples, format: format, start: start(header: log.header, firstRecord: log.records.first))
    }

    /// The ride recorded in the value log at `path` as `format`, read as a stream: the records
    /// go through the merging as they are read (one read chunk and one line in memory), and only
    /// the once-a-second samples are kept for the document. Damaged lines go to `warn` naming the
    /// line and are passed over; with `strict` the first one fails the export. Throws
    /// ``RideError`` naming the file.
    public static func document(
        ofLogAt path: String, format: Format, configuration: RideMerger.Configuration = .init(), strict: Bool = false,
        warn: @escaping @Sendable (ValueLogWarning) -> Void = { _ in }
    ) async throws -> String {
        // The start time: the header's, else the first record's wall clock (read once, the first line only).
        let header: ValueLogHeader
        let firstRecord: ValueRecord?
        do {
            let peek = try ValueLogStream(path: path, strict: false, warn: { _ in })
            header = peek.header
            firstRecord = header.startedAt == nil ? try? peek.next() : nil
        } catch {
            throw RideError("\(path): \(error) (a ride recording is a value log, see docs/value-log-format.md)")
        }
        let source = RecordedRideSource(path: path, pace: .asFastAsPossible, strict: strict, warn: warn)
        let samples = try await samples(from: source, configuration: configuration)
        if let failure = source.failure { throw RideError("\(path): \(failure)") }
        return document(samples, format: format, start: start(header: header, firstRecord: firstRecord))
    }

    /// The tick samples `source` makes when played through a ``RideMerger``.
    static func samples(from source: some RideDataSource, configuration: RideMerger.Configuration) async throws -> [RideSample] {
        var merger = RideMerger(configuration: configuration)
        var samples: [RideSample] = []
        for await event in try await source.start() {
            if let sample = merger.receive(event), sample.trigger == .tick { samples.append(sample) }
        }
        return samples
    }

    /// When the ride started: the header's time, else the first record's wall clock, else 1970.
    static func start(header: ValueLogHeader, firstRecord: ValueRecord?) -> Date {
        let clock = header.startedAt ?? firstRecord?.wallClock
        return clock.map { Date(timeIntervalSince1970: Double($0.millisecondsSince1970) / 1000) } ?? Date(timeIntervalSince1970: 0)
    }

    static func document(_ samples: [RideSample], format: Format, start: Date) -> String {
        switch format {
        case .tcx: return TCXWriter.document(samples: samples, start: start)
        case .csv: return RideCSVWriter.document(samples: samples, start: start)
        }
    }
}
