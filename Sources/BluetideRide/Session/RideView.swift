import Foundation

/// Text views of a ride's samples: one line per sample (logs, pipes), a one-screen live view for
/// a terminal, and one JSON object per sample.
public enum RideView {
    /// `0:42  31.2 km/h  90 rpm  201 W  128 bpm  0.36 km  → 200 W`.
    public static func line(_ s: RideSample) -> String {
        var parts: [String] = [RideFormat.clock(s.time)]
        parts.append(s.speedKmh.map { "\(RideFormat.fixed($0, 1)) km/h" } ?? "– km/h")
        parts.append(s.cadenceRpm.map { "\(RideFormat.fixed($0, 0)) rpm" } ?? "– rpm")
        parts.append(s.powerWatts.map { "\($0) W" } ?? "– W")
        parts.append(s.heartRateBpm.map { "\($0) bpm" } ?? "– bpm")
        parts.append("\(RideFormat.fixed(s.distanceMeters / 1000, 2)) km")
        if let target = s.target { parts.append("→ \(target)") }
        if let w = s.workout {
            parts.append("step \(w.stepIndex + 1)/\(w.stepCount) \(RideFormat.fixed(w.progress * 100, 0)) %")
        }
        return parts.joined(separator: "  ")
    }

    /// The live screen: big numbers, sources, target, workout step and a progress bar, drawn from
    /// the top-left corner (ANSI: cursor home, clear to end of screen) so it updates in place.
    public static func screen(_ s: RideSample, title: String, notices: [String]) -> String {
        func row(_ label: String, _ value: String, _ metric: RideMetric?) -> String {
            let source = metric.flatMap { s.sources[$0] }.map { "  (\($0))" } ?? ""
            return label.padding(toLength: 12, withPad: " ", startingAt: 0) + value + source
        }
        var lines: [String] = ["\u{1B}[1m\(title)\u{1B}[0m   \(RideFormat.clock(s.time))", ""]
        lines.append(row("Speed", s.speedKmh.map { "\(RideFormat.fixed($0, 1)) km/h" } ?? "–", .speed))
        lines.append(row("Cadence", s.cadenceRpm.map { "\(RideFormat.fixed($0, 0)) rpm" } ?? "–", .cadence))
        lines.append(row("Power", s.powerWatts.map { "\($0) W" } ?? "–", .power))
        lines.append(row("Heart rate", s.heartRateBpm.map { "\($0) bpm" } ?? "–", .heartRate))
        lines.append(row("Distance", "\(RideFormat.fixed(s.distanceMeters / 1000, 2)) km", nil))
        lines.append(row("Target", s.target.map { "\($0)" } ?? "none", nil))
        if let w = s.workout {
            lines.append(row(
                "Workout", w.isFinished ? "finished" : "step \(w.stepIndex + 1)/\(w.stepCount), "
                    + "\(RideFormat.clock(w.stepDurationSeconds - w.stepElapsedSeconds)) left in step", nil))
            lines.append(row("", progressBar(w.progress, width: 40) + " \(RideFormat.fixed(w.progress * 100, 0)) %", nil))
        }
        lines.append("")
        lines += notices.suffix(4)
        lines.append("Ctrl-C to stop")
        return "\u{1B}[H\u{1B}[J" + lines.joined(separator: "\n") + "\n"
    }

    /// `[#########---------]`.
    public static func progressBar(_ fraction: Double, width: Int) -> String {
        let filled = Int((min(max(fraction, 0), 1) * Double(width)).rounded())
        return "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "]"
    }

    /// One sample as a record of `bluetide`'s one JSON schema (docs/json-output.md): `type`
    /// `sample`, `time` (`monotonic`: ride seconds; `utc`: `startedAt` plus those seconds),
    /// lowerCamelCase fields with their unit (`speedKilometresPerHour`, `cadenceRPM`,
    /// `powerWatts`, `heartRateBPM`, `distanceMetres`), `sources` by metric, `target` and
    /// `workout`. Missing values are left out, never zero.
    public static func jsonObject(_ s: RideSample, startedAt: Date) -> [String: Any] {
        var object: [String: Any] = ["type": "sample", "trigger": s.trigger.rawValue]
        object["time"] = [
            "monotonic": (s.time * 1_000_000).rounded() / 1_000_000,
            "utc": TCXWriter.timestamp(startedAt.addingTimeInterval(s.time)),
        ]
        object["distanceMetres"] = (s.distanceMeters * 100).rounded() / 100
        if let v = s.speedKmh { object["speedKilometresPerHour"] = (v * 100).rounded() / 100 }
        if let v = s.cadenceRpm { object["cadenceRPM"] = (v * 10).rounded() / 10 }
        if let v = s.powerWatts { object["powerWatts"] = v }
        if let v = s.heartRateBpm { object["heartRateBPM"] = v }
        if !s.sources.isEmpty { object["sources"] = Dictionary(uniqueKeysWithValues: s.sources.map { ($0.key.rawValue, $0.value) }) }
        if let target = s.target {
            switch target {
            case let .power(watts): object["target"] = ["powerWatts": watts]
            case let .grade(percent): object["target"] = ["gradePercent": percent]
            case let .resistance(percent): object["target"] = ["resistancePercent": percent]
            }
        }
        if let w = s.workout {
            object["workout"] = [
                "step": w.stepIndex + 1, "steps": w.stepCount, "progress": (w.progress * 1000).rounded() / 1000, "finished": w.isFinished,
            ] as [String: Any]
        }
        return object
    }

    /// ``jsonObject(_:startedAt:)`` as one line of JSON (sorted keys).
    public static func json(_ s: RideSample, startedAt: Date) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: jsonObject(s, startedAt: startedAt), options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return "{}"
        }
        return String(decoding: data, as: UTF8.self)
    }
}
