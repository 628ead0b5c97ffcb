import ArgumentParser
import BluetideBench

/// `bluetide bench`: throughput figures printed for people and for regression tracking.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure codec and stack throughput, and run Bumble's bench scenarios (central, peripheral, loopback).",
        discussion: """
            codec, gatt and stall measure this toolkit on its own. central and peripheral speak the GATT service and packets of Bumble's bench app (bumble.apps.bench), against Bumble or against another bluetide; loopback runs both of those sides in this process.
            """,
        subcommands: [CodecBench.self, GATTBench.self, StallBench.self, BumbleBenchCentral.self, BumbleBenchPeripheral.self, BumbleBenchLoopback.self])
}

/// `bluetide bench codec`: decodes a million packets of each hot profile and prints packets/s.
struct CodecBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "codec",
        abstract: "Decode Heart Rate, CSC and Indoor Bike Data packets in a loop and print packets per second.",
        discussion: "Build with -c release for meaningful figures: swift run -c release bluetide bench codec")

    @Option(name: .long, help: "Packets to decode per profile.")
    var count: Int = 1_000_000

    @Flag(name: .long, help: "Print one JSON object per profile instead of a table.")
    var json = false

    func run() throws {
        guard count > 0 else { throw CommandFailure("--count \(count): expected a positive number of packets") }
        for result in CodecBenchmark.run(count: count) {
            StandardStreams.output.line(json ? result.json : result.line)
        }
    }
}
