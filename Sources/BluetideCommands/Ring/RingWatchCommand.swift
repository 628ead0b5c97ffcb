import ArgumentParser
import Bluetide
import BluetideRing
import Foundation
import BluetideSupport

/// `bluetide ring watch`: live readings until Ctrl-C.
struct RingWatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Measure heart rate (or SpO2) live and print each reading, today's steps and battery changes, until Ctrl-C.",
        discussion: """
            The ring needs 10-20 s before the first value. --continuous uses the ring's continuous heart-rate stream (1E, about one value a second) instead of a measurement (69). --steps prints today's steps, distance and calories each time the ring pushes them (73 12); alone it starts no measurement (no LED), with --spo2 or --continuous it adds them. Ctrl-C stops the measurement on the ring before disconnecting (a measurement left running drains the battery).

            Examples:
              bluetide ring watch
              bluetide ring watch --spo2
              bluetide ring watch --continuous
              bluetide ring watch --steps
              bluetide ring watch --json --duration 60
            """)

    @OptionGroup var connection: RingConnectionOptions
    @Flag(name: .long, help: "Measure SpO2 instead of heart rate.") var spo2 = false
    @Flag(name: .long, help: "Heart rate from the continuous stream (1E) instead of a measurement (69).") var continuous = false
    @Flag(name: .long, help: "Print today's steps as the ring pushes them (alone: no measurement).") var steps = false
    @Option(name: .long, help: "Stop after this many seconds.") var duration: Double?
    @Flag(name: .long, help: "One JSON object per reading.") var json = false

    func run() async throws {
        try await execute(CommandOutput.standardOutput()) { [duration] in await StopSignal.install(duration: duration).wait() }
    }

    /// Watches until `stop` returns (with the reason) or the link drops. Tests pass a timer
    /// instead of the signal handlers (which a child process would inherit as ignored signals).
    func execute(_ output: CommandOutput, until stop: @escaping @Sendable () async -> String) async throws {
        if let duration, !(duration.isFinite && duration > 0) { throw CommandFailure("--duration \(duration): expected seconds > 0") }
        if spo2 && continuous { throw CommandFailure.usage("give --spo2 or --continuous, not both: the continuous stream is heart rate only", field: "--spo2") }
        let type: COLMIRealTimeType = spo2 ? .spo2 : .heartRate
        // --steps alone watches the step pushes without lighting the sensor.
        let measures = !steps || spo2 || continuous
        let link = try await connection.open()
        let clock = RingWatchClock(device: link.device)
        if !json {
            var what: [String] = []
            if measures { what.append(spo2 ? "SpO2" : continuous ? "heart rate (continuous stream)" : "heart rate") }
            if steps { what.append("today's steps") }
            output.emit("\(link.label): watching \(what.joined(separator: " and ")); Ctrl-C stops")
        }
        let measurement: RingWatch.Measurement = measures ? (continuous ? .continuousHeartRate : .realTime(type)) : .none
        let watch = RingWatch(measurement: measurement, includesActivity: steps)
        let jsonClock = json ? clock : nil
        let ending: RingWatch.Ending
        do {
            ending = try await watch.run(link.ring, stopWhen: stop) { event in
                if let line = Self.line(event, json: jsonClock) { output.emit(line) }
            }
        } catch {
            await link.close()
            throw CommandFailure("\(link.label): \(error)")
        }
        await link.close()
        switch ending {
        case .linkLost:
            throw CommandFailure("\(link.label): the link was lost; bring the ring closer and run watch again")
        case let .stopped(reason):
            if !json { output.emit("stopped (\(reason))\(measures ? "; measurement ended on the ring" : "")") }
        }
    }

    /// The line for `event`: human text, or with `json` (the clock and the ring) a `reading`
    /// record (`kind` `heart-rate` with `heartRateBPM`, or `spo2` with `spo2Percent`; `measuring`
    /// while the ring has no value yet, `errorCode` when it reports one; or `steps` with `steps`,
    /// `distanceMetres`, `caloriesRaw` for today's totals) or a `battery` record.
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
        case let .activity(a):
            if let json {
                return json.line("reading", [
                    "kind": "steps", "steps": .integer(Int64(a.steps)), "distanceMetres": .integer(Int64(a.distanceMeters)),
                    "caloriesRaw": .integer(Int64(a.caloriesRaw)),
                ])
            }
            return "today \(a.steps) steps, \(a.distanceMeters) m"
        case .notice:
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
        let seconds = elapsed.inSeconds
        var fields = fields
        fields["device"] = device
        fields["time"] = JSONOutput.time(monotonic: seconds)
        return JSONOutput.line(type, fields)
    }
}
