import ArgumentParser
import BluetideRide
import Foundation

/// `bluetide ride export LOG --format tcx|csv`: a recorded ride as a file other apps import.
struct RideExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export a recorded ride (value log) as TCX (Strava, TrainingPeaks, GoldenCheetah) or CSV.",
        discussion: """
            The values are merged again exactly as during the ride: one trackpoint (or row) per second with speed, \
            cadence, power, heart rate and distance; missing values are left out, not written as zero.

            Examples:
              bluetide ride export ride.jsonl --format tcx --output ride.tcx
              bluetide ride export ride.jsonl --format csv > ride.csv
            """)

    @Argument(help: "The ride's value log (from `bluetide ride --record FILE`).")
    var log: String

    @Option(name: .long, help: "tcx or csv.")
    var format: String = "tcx"

    @Option(name: [.short, .long], help: "Write here instead of standard output.")
    var output: String?

    @Option(name: .long, help: "Wheel circumference, metres (speed and distance from CSC and power meters).")
    var circumference: Double = 2.105

    @Flag(name: .long, help: ArgumentHelp(
        "Stop at the first damaged line (exit 1) instead of warning and exporting the rest.",
        discussion: "Damaged: a malformed line, a truncated last line, or a record whose time runs backwards."))
    var strict = false

    func run() async throws {
        try await execute(CommandOutput.standardOutput())
    }

    func execute(_ out: CommandOutput) async throws {
        guard let kind = RideExport.Format(rawValue: format.lowercased()) else {
            throw CommandFailure("--format \(format): expected tcx or csv")
        }
        guard circumference.isFinite, (0.5...4).contains(circumference) else {
            throw CommandFailure("--circumference \(circumference): expected metres, 0.5…4 (2.105 for 700x25c)")
        }
        // Read as a stream: only the once-a-second samples are held, however long the ride.
        let text: String
        do {
            text = try await RideExport.document(
                ofLogAt: log, format: kind, configuration: .init(wheelCircumferenceMeters: circumference), strict: strict
            ) { [log] warning in
                appLogger.warning("\(log): \(warning); exported the rest (--strict stops here instead)")
            }
        } catch let error as RideError {
            throw CommandFailure(error.message)
        }
        if let output {
            do { try text.write(toFile: output, atomically: true, encoding: .utf8) } catch {
                throw CommandFailure("--output \(output): cannot write: \(error.localizedDescription)")
            }
            out.emit("wrote \(output)")
        } else {
            out.emit(String(text.dropLast()))
        }
    }
}
