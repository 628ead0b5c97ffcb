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
        let source = RecordedRideSource(records: log.records, pace: .asFastAsPossible)
        var merger = RideMerger(configuration: configuration)
        var samples: [RideSample] = []
        for await event in try await source.start() {
            if let sample = merger.receive(event), sample.trigger == .tick { samples.append(sample) }
        }
        return samples
    }

    /// The ride in `log` as `format`.
    public static func document(of log: ValueLog, format: Format, configuration: RideMerger.Configuration = .init()) async throws -> String {
        let samples = try await samples(of: log, configuration: configuration)
        let start = log.header.startedAt.map { Date(timeIntervalSince1970: Double($0.millisecondsSince1970) / 1000) }
            ?? log.records.first?.wallClock.map { Date(timeIntervalSince1970: Double($0.millisecondsSince1970) / 1000) }
            ?? Date(timeIntervalSince1970: 0)
        switch format {
        case .tcx: return TCXWriter.document(samples: samples, start: start)
        case .csv: return RideCSVWriter.document(samples: samples, start: start)
        }
    }
}
