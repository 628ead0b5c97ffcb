import ArgumentParser
import BluetideRide
import Foundation

/// `bluetide ride export LOG --format tcx|csv|fit`: a recorded ride as a file other apps import.
struct RideExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export a recorded ride (value log) as FIT or TCX (Garmin Connect, Strava, TrainingPeaks, GoldenCheetah) or CSV.",
        discussion: """
            The values are merged again exactly as during the ride: one record, trackpoint or row per second with speed, \
            cadence, power, heart rate and distance; missing values are left out, not written as zero.

            FIT is a binary activity file (needs --output) with a device info message for each device, a session and laps \
            with their summaries; with --workout (and the --ftp it was ridden with) each of the workout's steps is a lap.

            Examples:
              bluetide ride export ride.jsonl --format fit --output ride.fit
              bluetide ride export ride.jsonl --format tcx --output ride.tcx
              bluetide ride export ride.jsonl --format csv > ride.csv
            """)

    @Argument(help: "The ride's value log (from `bluetide ride --record FILE`).")
    var log: String

    @Option(name: .long, help: "fit, tcx or csv.")
    var format: String = "tcx"

    @Option(name: .long, help: "The workout ridden (.zwo, .erg, .mrc or .fit): its steps become the FIT file's laps.")
    var workout: String?

    @Option(name: .long, help: "The FTP in watts the workout was ridden with.")
    var ftp: Double = 200

    @Option(name: [.short, .long], help: "Write here instead of standard output.")
    var output: String?

    @OptionGroup var wheel: WheelOptions

    @Flag(name: .long, help: ArgumentHelp(
        "Stop at the first damaged line (exit 1) instead of warning and exporting the rest.",
        discussion: "Damaged: a malformed line, a truncated last line, or a record whose time runs backwards."))
    var strict = false

    func run() async throws {
        try await execute(CommandOutput.standardOutput())
    }

    func execute(_ out: CommandOutput) async throws {
        guard let kind = RideExport.Format(rawValue: format.lowercased()) else {
            throw CommandFailure("--format \(format): expected fit, tcx or csv")
        }
        try wheel.validated()
        guard ftp.isFinite, (30...1000).contains(ftp) else { throw CommandFailure("--ftp \(ftp): expected 30…1000 watts") }
        if !kind.isText, output == nil {
            throw CommandFailure.usage("--format \(kind.rawValue) writes a binary file: add --output FILE", field: "--output")
        }
        if workout != nil, kind != .fit {
            throw CommandFailure.usage("--workout: laps are written in FIT files only; add --format fit", field: "--workout")
        }
        let plan: Workout? = try workout.map { path in
            guard let data = FileManager.default.contents(atPath: path) else {
                throw CommandFailure("--workout \(path): cannot read the file")
            }
            do { return try Workout.parse(bytes: [UInt8](data), fileName: path) } catch {
                throw CommandFailure("--workout \(path): \(error)")
            }
        }
        // Read as a stream: only the once-a-second samples are held, however long the ride.
        let bytes: [UInt8]
        do {
            bytes = try await RideExport.file(
                ofLogAt: log, format: kind, configuration: .init(wheelCircumferenceMeters: wheel.circumference), strict: strict,
                workout: plan, ftpWatts: ftp
            ) { [log] warning in
                appLogger.warning("\(log): \(warning); exported the rest (--strict stops here instead)")
            }
        } catch let error as RideError {
            throw CommandFailure(error.message)
        }
        if let output {
            do { try Data(bytes).write(to: URL(fileURLWithPath: output), options: .atomic) } catch {
                throw CommandFailure("--output \(output): cannot write: \(error.localizedDescription)")
            }
            out.emit("wrote \(output)")
        } else {
            out.emit(String(String(decoding: bytes, as: UTF8.self).dropLast()))
        }
    }
}
