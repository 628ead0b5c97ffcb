import ArgumentParser
import BluetideBench
import Foundation

/// `bluetide bench gatt`: GATT throughput between two of our host stacks on an in-process virtual
/// link: notifications peripheral→central, then Write Commands central→peripheral.
struct GATTBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gatt",
        abstract: "Measure GATT notification and write-without-response throughput between two host stacks on a virtual link.",
        discussion: """
            Both stacks and the virtual radio run in this process, so the figures measure the host
            stack's cost (CPU-bound), not a radio. Every value carries a sequence number and a byte
            pattern; the receiver checks that all values arrive complete and in order. CPU time is
            this process's user + system time (both stacks and the link), per MB (10^6 value bytes).

            Build with -c release for meaningful figures:
              swift run -c release bluetide bench gatt
              swift run -c release bluetide bench gatt --mtu 517 --packet-size 514 \\
                  --packet-count 5000 --json
            """)

    @Option(name: .long, help: "ATT MTU both stacks offer (23-517).")
    var mtu: Int = 247

    @Option(name: .long, help: "Value bytes per notification or write, 4 to MTU-3 (default MTU-3).")
    var packetSize: Int?

    @Option(name: .long, help: "Values sent in each direction.")
    var packetCount: Int = 20_000

    @Flag(name: .long, help: "Print one JSON object per direction instead of a line.")
    var json = false

    func run() async throws {
        guard (23...517).contains(mtu) else { throw CommandFailure("--mtu \(mtu): expected 23 to 517") }
        let size = packetSize ?? mtu - 3
        guard size >= GATTBenchmark.headerLength, size <= mtu - 3 else {
            throw CommandFailure("--packet-size \(size): expected \(GATTBenchmark.headerLength) to \(mtu - 3) (MTU-3) bytes")
        }
        guard packetCount > 0 else { throw CommandFailure("--packet-count \(packetCount): expected a positive number") }
        let results = try await benchCall { try await GATTBenchmark.run(mtu: mtu, packetSize: size, packetCount: packetCount) }
        for result in results { StandardStreams.output.line(json ? result.json : result.line) }
        for result in results where result.outOfOrder > 0 {
            StandardStreams.error.line(
                "bluetide: warning: \(result.outOfOrder) \(result.name) values arrived out of order (the stack reordered them)")
        }
        if let broken = results.first(where: { !$0.isComplete }) {
            throw CommandFailure("bench gatt: \(broken.name): \(broken.problem ?? "data incomplete")")
        }
    }
}
