import ArgumentParser
import Bluetide
import BluetideRing
import Foundation

/// `bluetide ring watch`: live readings until Ctrl-C.
struct RingWatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Measure heart rate (or SpO2) live and print each reading, and battery changes, until Ctrl-C.",
        discussion: """
            The ring needs 10-20 s before the first value. Ctrl-C stops the measurement on the ring before disconnecting (a measurement left running drains the battery).

            Examples:
              bluetide ring watch
              bluetide ring watch --spo2
              bluetide ring watch --json --duration 60
            """)

    @OptionGroup var connection: RingConnectionOptions
    @Flag(name: .long, help: "Measure SpO2 instead of heart rate.") var spo2 = false
    @Option(name: .long, help: "Stop after this many seconds.") var duration: Double?
    @Flag(name: .long, help: "One JSON object per reading.") var json = false

    func run() async throws {
        try await execute(CommandOutput.standardOutput()) { [duration] in await StopSignal.install(duration: duration).wait() }
    }

    /// Watches until `stop` returns (with the reason) or the link drops. Tests pass a timer
    /// instead of the signal handlers (which a child process would inherit as ignored signals).
    func execute(_ output: CommandOutput, until stop: @escaping @Sendable () async -> String) async throws {
        if let duration, !(duration.isFinite && duration > 0) { throw CommandFailure("--duration \(duration): expected seconds > 0") }
        let type: COLMIRealTimeType = spo2 ? .spo2 : .heartRate
        let link = try await connection.open()
        let clock = RingWatchClock(device: link.device)
        if !json { output.emit("\(link.label): measuring \(spo2 ? "SpO2" : "heart rate"); Ctrl-C stops") }
        let ring = link.ring
        do {
            if let battery = try? await ring.battery(), let line = Self.line(.battery(battery), json: json ? clock : nil) { output.emit(line) }
            try await ring.startMeasurement(type)
        } catch {
            await link.close()
            throw CommandFailure("\(link.label): \(error)")
        }
        // Whichever ends first: Ctrl-C / --duration, or the ring's events (the link dropped).
        // Both waits end when cancelled (AsyncStream iteration), so the group always returns.
        let jsonClock = json ? clock : nil
        let reason = await withTaskGroup(of: String.self) { group in
            group.addTask { await stop() }
            group.addTask {
                var sinceContinue = 0
                for await event in ring.events {
                    if let line = Self.line(event, json: jsonClock) { output.emit(line) }
                    guard case .reading = event else { continue }
                    sinceContinue += 1
                    if sinceContinue >= 25 {
                        sinceContinue = 0
                        try? await ring.continueMeasurement(type)
                    }
                }
                return Task.isCancelled ? "stopped" : "link lost"
            }
            let first = await group.next() ?? "stopped"
            group.cancelAll()
            return first
        }
        await link.close()
        if reason == "link lost" { throw CommandFailure("\(link.label): the link was lost; bring the ring closer and run watch again") }
        if !json { output.emit("stopped (\(reason)); measurement ended on the ring") }
    }

    /// The line for `event`: human text, or with `json` (the clock and the ring) a `reading`
    /// record (`kind` `heart-rate` with `heartRateBPM`, or `spo2` with `spo2Percent`; `measuring`
    /// while the ring has no value yet, `errorCode` when it reports one) or a `battery` record.
    static func line(_ event: RingEvent, json: RingWatchClock?) -> String? {
        switch event {
        case let .reading(r):
            if let json {
                let value: [String: JSONOutputValue] = r.type == .spo2
                    ? ["kind": "spo2", "spo2Percent": .integer(Int64(r.value))]
                    : ["kind": "heart-rate", "heartRateBPM": .integer(Int64(r.value))]
                return json.line("reading", value.merging([
                    "errorCode": .integer(Int64(r.errorCode)), "measuring": .bool(r.value == 0 && r.errorCode == 0),
                ]) { a, _ in a })
            }
            if let e = r.errorDescription { return "\(r.type): \(e)" }
            return r.value == 0 ? "\(r.type): measuring…" : "\(r.type) \(r.value) \(r.type.unit)"
        case let .battery(b):
            if let json { return json.line("battery", ["levelPercent": .integer(Int64(b.levelPercent)), "charging": .bool(b.isCharging)]) }
            return "battery \(b.levelPercent) %\(b.isCharging ? ", charging" : "")"
        case let .continuousHeartRate(bpm):
            if let json { return json.line("reading", ["kind": "heart-rate", "heartRateBPM": .integer(Int64(bpm)), "measuring": .bool(false)]) }
            return "heart rate \(bpm) bpm"
        case .activity, .notice:
            return nil
        }
    }
}

/// What every `ring watch --json` record shares: the ring as `device`, and `time` since the
/// command started.
struct RingWatchClock: Sendable {
    let device: JSONOutputValue
    let start = ContinuousClock.now

    func line(_ type: String, _ fields: [String: JSONOutputValue]) -> String {
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        var fields = fields
        fields["device"] = device
        fields["time"] = JSONOutput.time(monotonic: seconds)
        return JSONOutput.line(type, fields)
    }
}
