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
            The ring needs 10-20 s before the first value. Ctrl-C stops the measurement on the ring
            before disconnecting (a measurement left running drains the battery).

            Examples:
              bluetide ring watch
              bluetide ring watch --spo2
              bluetide ring watch --json --duration 60
            """)

    @OptionGroup var connection: RingConnectionOptions
    @Flag(name: .long, help: "Measure SpO2 instead of heart rate.") var spo2 = false
    @Option(name: .long, help: "Stop after this many seconds.") var duration: Double?
    @Flag(name: .long, help: "One JSON object per reading.") var json = false

    func run() async throws { try await execute(CommandOutput.standardOutput()) }

    func execute(_ output: CommandOutput) async throws {
        if let duration, !(duration.isFinite && duration > 0) { throw CommandFailure("--duration \(duration): expected seconds > 0") }
        let type: COLMIRealTimeType = spo2 ? .spo2 : .heartRate
        let link = try await connection.open()
        if !json { output.emit("\(link.label): measuring \(spo2 ? "SpO2" : "heart rate"); Ctrl-C stops") }
        let ring = link.ring
        do {
            if let battery = try? await ring.battery(), let line = Self.line(.battery(battery), json: json) { output.emit(line) }
            try await ring.startMeasurement(type)
        } catch {
            await link.close()
            throw CommandFailure("\(link.label): \(error)")
        }
        // Whichever ends first: Ctrl-C / --duration, or the ring's events (the link dropped).
        // Both waits end when cancelled (AsyncStream iteration), so the group always returns.
        let json = json
        let reason = await withTaskGroup(of: String.self) { group in
            group.addTask { [duration] in await StopSignal.install(duration: duration).wait() }
            group.addTask {
                var sinceContinue = 0
                for await event in ring.events {
                    if let line = Self.line(event, json: json) { output.emit(line) }
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

    static func line(_ event: RingEvent, json: Bool) -> String? {
        let time = RingExport.timeText(Date())
        switch event {
        case let .reading(r):
            if json {
                return JSONObjectLine.line([
                    "time": time, "kind": r.type == .spo2 ? "spo2" : "heart_rate", "value": Int(r.value),
                    "unit": r.type.unit, "error": Int(r.errorCode), "measuring": r.value == 0 && r.errorCode == 0,
                ])
            }
            if let e = r.errorDescription { return "\(r.type): \(e)" }
            return r.value == 0 ? "\(r.type): measuring…" : "\(r.type) \(r.value) \(r.type.unit)"
        case let .battery(b):
            if json { return JSONObjectLine.line(["time": time, "kind": "battery", "value": Int(b.levelPercent), "unit": "%", "charging": b.isCharging]) }
            return "battery \(b.levelPercent) %\(b.isCharging ? ", charging" : "")"
        case let .continuousHeartRate(bpm):
            if json { return JSONObjectLine.line(["time": time, "kind": "heart_rate", "value": Int(bpm), "unit": "bpm"]) }
            return "heart rate \(bpm) bpm"
        case .activity, .notice:
            return nil
        }
    }
}
