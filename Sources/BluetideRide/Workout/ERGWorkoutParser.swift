import Foundation

/// Reads `.erg` (minutes and watts) and `.mrc` (minutes and percent of FTP) workout files: a
/// `[COURSE HEADER]` (with `FTP =` in `.erg` files, and a `MINUTES WATTS` or `MINUTES PERCENT`
/// line) and `[COURSE DATA]` rows `minute<TAB>value`. Consecutive rows bound a step: equal values
/// hold, different values ramp, and two rows at one minute change the target at once.
public enum ERGWorkoutParser {
    /// The workout in `text`; throws ``WorkoutParseError`` naming the line.
    public static func parse(_ text: String, fallbackName: String = "workout") throws -> Workout {
        var name: String?
        var summary: String?
        var ftp: Double?
        var percent: Bool?
        var section = ""
        var points: [(minute: Double, value: Double, line: Int)] = []
        for (offset, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = offset + 1
            let text = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if text.isEmpty || text.hasPrefix(";") || text.hasPrefix("#") { continue }
            if text.hasPrefix("[") {
                section = text.uppercased()
                continue
            }
            if section.hasPrefix("[COURSE HEADER") {
                let upper = text.uppercased()
                if let equals = text.firstIndex(of: "=") {
                    let key = text[..<equals].trimmingCharacters(in: .whitespaces).uppercased()
                    let value = text[text.index(after: equals)...].trimmingCharacters(in: .whitespaces)
                    switch key {
                    case "FTP":
                        guard let number = Double(value), number > 0 else { throw WorkoutParseError(line: line, message: "FTP = \(value): expected watts > 0") }
                        ftp = number
                    case "FILE NAME": name = value.isEmpty ? nil : value
                    case "DESCRIPTION": summary = value.isEmpty ? nil : value
                    default: break
                    }
                } else if upper.hasPrefix("MINUTES") {
                    if upper.contains("PERCENT") { percent = true } else if upper.contains("WATTS") { percent = false }
                }
            } else if section.hasPrefix("[COURSE DATA") {
                let fields = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," })
                guard fields.count >= 2, let minute = Double(fields[0]), let value = Double(fields[1]),
                      minute.isFinite, value.isFinite, minute >= 0, value >= 0 else {
                    throw WorkoutParseError(line: line, message: "\"\(text)\": expected minutes and a value, e.g. 5.00\t200")
                }
                if let last = points.last, minute < last.minute {
                    throw WorkoutParseError(line: line, message: "minute \(minute) comes before the previous row's \(last.minute)")
                }
                points.append((minute, value, line))
            }
        }
        guard let percent else {
            throw WorkoutParseError(line: nil, message: "no MINUTES WATTS or MINUTES PERCENT line in [COURSE HEADER]")
        }
        guard points.count >= 2 else { throw WorkoutParseError(line: nil, message: "[COURSE DATA] needs at least two rows") }
        var steps: [WorkoutStep] = []
        for (a, b) in zip(points, points.dropFirst()) where b.minute > a.minute {
            let start: WorkoutPower = percent ? .ftpFraction(a.value / 100) : .watts(a.value)
            let end: WorkoutPower = percent ? .ftpFraction(b.value / 100) : .watts(b.value)
            steps.append(WorkoutStep(
                kind: a.value == b.value ? "steady" : "ramp", durationSeconds: (b.minute - a.minute) * 60, startPower: start,
                endPower: end))
        }
        return Workout(name: name ?? fallbackName, summary: summary, steps: steps, fileFTP: ftp)
    }
}
