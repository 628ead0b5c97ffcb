import ArgumentParser
import BluetideCore
import BluetideProfiles
import Foundation

/// `bluetide bench`: throughput figures printed for people and for regression tracking.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure codec and stack throughput, and run Bumble's bench scenarios (central, peripheral, loopback).",
        discussion: """
            codec and gatt measure this toolkit on its own. central and peripheral speak the GATT service and packets of Bumble's bench app (bumble.apps.bench), against Bumble or against another bluetide; loopback runs both of those sides in this process.
            """,
        subcommands: [CodecBench.self, GATTBench.self, BumbleBenchCentral.self, BumbleBenchPeripheral.self, BumbleBenchLoopback.self])
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
            print(json ? result.json : result.line)
        }
    }
}

/// One benchmark figure.
struct BenchResult: Sendable {
    let name: String
    let packets: Int
    let seconds: Double
    var packetsPerSecond: Double { seconds > 0 ? Double(packets) / seconds : .infinity }
    var line: String {
        let rate = packetsPerSecond
        return "\(name.padding(toLength: 24, withPad: " ", startingAt: 0)) \(packets) packets in \(String(format: "%.3f", seconds)) s  =  \(String(format: "%.0f", rate)) packets/s  (\(String(format: "%.1f", 1e9 / rate)) ns/packet)"
    }
    var json: String {
        "{\"name\":\"\(name)\",\"packets\":\(packets),\"seconds\":\(seconds),\"packets_per_second\":\(packetsPerSecond.rounded())}"
    }
}

/// Times `body` over `count` iterations of a rotating set of inputs; failures are counted so the
/// optimiser cannot drop the work.
func measure(_ name: String, count: Int, inputs: [[UInt8]], body: ([UInt8]) -> Bool) -> BenchResult {
    let clock = ContinuousClock()
    var ok = 0
    let start = clock.now
    for i in 0..<count where body(inputs[i % inputs.count]) { ok += 1 }
    let elapsed = clock.now - start
    precondition(ok == count, "\(name): \(count - ok) of \(count) benchmark packets failed to decode")
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    return BenchResult(name: name, packets: count, seconds: seconds)
}
