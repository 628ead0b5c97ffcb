import ArgumentParser
import BluetideBench

/// `bluetide bench stall`: the process's memory while a subscriber stops reading under a steady
/// stream of notifications (the host's bounded subscription buffer keeps it flat).
struct StallBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stall",
        abstract: "Show memory staying flat while a subscriber stops reading under a steady stream of notifications.",
        discussion: """
            Two host stacks on an in-process virtual link: the central subscribes and never reads
            its stream while the peripheral notifies at --rate bytes/s. The host keeps the newest
            4096 values of the stream and counts the rest as dropped. The process's resident set
            is printed about once a second; the run fails (exit status 1) when it peaks above
            --limit MB or when a value is neither held nor counted as dropped.

            Build with -c release for meaningful figures:
              swift run -c release bluetide bench stall --seconds 60
            """)

    @Option(name: .long, help: "How long the subscriber does not read, seconds.")
    var seconds: Double = 60

    @Option(name: .long, help: "Notification bytes per second the peripheral offers.")
    var rate: Int = 1_000_000

    @Option(name: .long, help: "Bytes per notification, 4-514.")
    var packetSize: Int = 500

    @Option(name: .long, help: "Largest resident set allowed, MB.")
    var limit: Double = 40

    @Flag(name: .long, help: "Print one JSON object (with every sample) instead of lines.")
    var json = false

    func run() async throws {
        guard seconds > 0, seconds.isFinite else { throw CommandFailure("--seconds \(seconds): expected a positive number of seconds") }
        guard rate > 0 else { throw CommandFailure("--rate \(rate): expected a positive number of bytes per second") }
        guard (4...514).contains(packetSize) else { throw CommandFailure("--packet-size \(packetSize): expected 4 to 514 bytes") }
        guard limit > 0 else { throw CommandFailure("--limit \(limit): expected a positive number of MB") }
        let json = self.json
        let result = try await benchCall {
            try await StallBenchmark.run(
                seconds: seconds, bytesPerSecond: rate, valueSize: packetSize, limitMegabytes: limit,
                sample: { reading in
                    guard !json else { return }
                    StandardStreams.output.line(
                        "t = \(Int(reading.seconds.rounded())) s: resident set \((reading.residentMegabytes * 10).rounded() / 10) MB")
                })
        }
        StandardStreams.output.line(json ? result.json : result.line)
        if let problem = result.problem { throw CommandFailure("bench stall: \(problem)") }
    }
}
