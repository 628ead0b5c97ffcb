import ArgumentParser
import BluetideRecording
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
        let values: ValueLog
        do { values = try ValueLogReader.read(path: log, options: .init(skipMalformedLines: true)) } catch {
            throw CommandFailure("\(log): \(error)")
        }
        let text = try await RideExport.document(of: values, format: kind, configuration: .init(wheelCircumferenceMeters: circumference))
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
