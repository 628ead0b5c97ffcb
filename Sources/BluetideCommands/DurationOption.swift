import ArgumentParser

/// `--duration`: how long a command that runs until Ctrl-C runs at most (`record`, `ride`,
/// `ride bridge`).
struct DurationOption: ParsableArguments {
    @Option(name: .long, help: "Stop after this many seconds.")
    var duration: Double?

    /// Refuses a duration that is not a positive number of seconds, naming the option.
    func validated() throws {
        if let duration, !(duration.isFinite && duration > 0) { throw CommandFailure("--duration \(duration): expected seconds > 0") }
    }
}
