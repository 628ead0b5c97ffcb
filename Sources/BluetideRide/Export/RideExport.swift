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
        /// FIT activity file (binary): Garmin Connect, Strava, TrainingPeaks, intervals.icu.
        case fit

        /// Whether the format is text (written as UTF-8) rather than binary.
        public var isText: Bool { self != .fit }
    }

    /// What a replay of the log gave: the tick samples, the targets asked of the trainer
    /// (ride time, target; nil: free riding) and the devices, in order of their first value.
    struct Played {
        var samples: [RideSample] = []
        var targets: [(time: Double, target: RideTarget?)] = []
        var devices: [RideDevice] = []
    }

    /// The once-a-second samples of the ride recorded in `log`.
    public static func samples(of log: ValueLog, configuration: RideMerger.Configuration = .init()) async throws -> [RideSample] {
        try await samples(from: RecordedRideSource(records: log.records, pace: .asFastAsPossible), configuration: configuration)
    }

    /// The ride in `log` as `format` (a binary format's bytes; text formats as UTF-8); with
    /// `workout` (ridden with `ftpWatts`) its steps become the FIT file's laps.
    public static func file(
        of log: ValueLog, format: Format, configuration: RideMerger.Configuration = .init(), workout: Workout? = nil,
        ftpWatts: Double = 200
    ) async throws -> [UInt8] {
        let source = RecordedRideSource(records: log.records, pace: .asFastAsPossible)
        let played = try await play(source, configuration: configuration)
        return try file(played, format: format, start: start(header: log.header, firstRecord: log.records.first), workout: workout, ftpWatts: ftpWatts)
    }

    /// The ride in `log` as the text `format` (TCX or CSV); throws ``RideError`` for a binary one.
    public static func document(of log: ValueLog, format: Format, configuration: RideMerger.Configuration = .init()) async throws -> String {
        guard format.isText else { throw RideError("\(format.rawValue) is a binary format: use RideExport.file") }
        return String(decoding: try await file(of: log, format: format, configuration: configuration), as: UTF8.self)
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
        guard format.isText else { throw RideError("\(format.rawValue) is a binary format: use RideExport.file") }
        return String(decoding: try await file(ofLogAt: path, format: format, configuration: configuration, strict: strict, warn: warn), as: UTF8.self)
    }

    /// The ride recorded in the value log at `path` as `format` (bytes; text formats as UTF-8),
    /// read as a stream like ``document(ofLogAt:format:configuration:strict:warn:)``. With
    /// `workout` (ridden with `ftpWatts`), the FIT file has a lap per step: the workout is placed
    /// where the recording's first target matching one of its steps' starts was asked; throws
    /// ``RideError`` when no target matches.
    public static func file(
        ofLogAt path: String, format: Format, configuration: RideMerger.Configuration = .init(), strict: Bool = false,
        workout: Workout? = nil, ftpWatts: Double = 200, warn: @escaping @Sendable (ValueLogWarning) -> Void = { _ in }
    ) async throws -> [UInt8] {
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
        let played = try await play(source, configuration: configuration)
        if let failure = source.failure { throw RideError("\(path): \(failure)") }
        return try file(played, format: format, start: start(header: header, firstRecord: firstRecord), workout: workout, ftpWatts: ftpWatts)
    }

    /// The tick samples `source` makes when played through a ``RideMerger``.
    static func samples(from source: some RideDataSource, configuration: RideMerger.Configuration) async throws -> [RideSample] {
        try await play(source, configuration: configuration).samples
    }

    /// Plays `source` through a ``RideMerger``: its tick samples, targets and devices.
    static func play(_ source: some RideDataSource, configuration: RideMerger.Configuration) async throws -> Played {
        var merger = RideMerger(configuration: configuration)
        var played = Played()
        for await event in try await source.start() {
            if case let .target(target, time) = event { played.targets.append((time, target)) }
            if let sample = merger.receive(event), sample.trigger == .tick { played.samples.append(sample) }
        }
        played.devices = await source.devices
        return played
    }

    static func file(_ played: Played, format: Format, start: Date, workout: Workout?, ftpWatts: Double) throws -> [UInt8] {
        switch format {
        case .tcx:
            return Array(TCXWriter.document(samples: played.samples, start: start).utf8)
        case .csv:
            return Array(RideCSVWriter.document(samples: played.samples, start: start).utf8)
        case .fit:
            var laps: [RideLap] = []
            if let workout {
                guard let at = workoutStart(workout, ftpWatts: ftpWatts, targets: played.targets) else {
                    throw RideError(
                        "workout \(workout.name): no target in the recording matches a step of it at FTP \(RideFormat.fixed(ftpWatts, 0)) W "
                            + "(was it ridden with another --ftp, or recorded before targets were?)")
                }
                laps = RideLap.laps(of: workout, startingAt: at, rideEnd: played.samples.last?.time ?? 0)
            }
            return FITActivityWriter.file(
                samples: played.samples, start: start, devices: played.devices, laps: laps, softwareVersion: ValueLogHeader.bluetideVersion)
        }
    }

    /// When `workout` started in a ride that recorded `targets`: the first power target that is
    /// the start of one of its steps (a workout sends each step's target as the step starts),
    /// less the time the steps before that one take.
    static func workoutStart(_ workout: Workout, ftpWatts: Double, targets: [(time: Double, target: RideTarget?)]) -> Double? {
        for (time, target) in targets {
            guard case let .power(watts) = target else { continue }
            var offset = 0.0
            for step in workout.steps {
                if let start = step.targetWatts(after: 0, ftp: ftpWatts), Int(start.rounded()) == watts { return max(0, time - offset) }
                offset += step.durationSeconds
            }
        }
        return nil
    }

    /// When the ride started: the header's time, else the first record's wall clock, else 1970.
    static func start(header: ValueLogHeader, firstRecord: ValueRecord?) -> Date {
        let clock = header.startedAt ?? firstRecord?.wallClock
        return clock.map { Date(timeIntervalSince1970: Double($0.millisecondsSince1970) / 1000) } ?? Date(timeIntervalSince1970: 0)
    }

}
