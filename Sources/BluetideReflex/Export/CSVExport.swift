import BluetideCharts
import Foundation

/// CSV files of sessions and steps for spreadsheets (RFC 4180): a header row, fields quoted
/// when they contain a comma, quote, CR or LF (quotes doubled), CRLF line ends, times as
/// ISO-8601 UTC with milliseconds, numbers with a decimal point whatever the locale.
public enum CSVExport {
    /// Header of ``sessions(_:athletes:)``.
    public static let sessionColumns = [
        "session_id", "athlete_id", "athlete_name", "sequence_name", "started", "ended", "complete",
        "device_name", "device_address", "steps_planned", "steps_reported", "hits", "misses", "wrong_target_first",
        "hit_rate", "mean_ms", "median_ms", "best_ms", "worst_ms", "stddev_ms", "notes",
    ]

    /// Header of ``steps(_:athletes:)``. `step` counts from 1, as everywhere the coach shows steps;
    /// `reaction_ms` is empty for a missed step (the time the trainer reports then is only when it gave up).
    public static let stepColumns = [
        "session_id", "athlete_id", "athlete_name", "session_started", "step", "target", "target_colour",
        "time_allowed_ms", "hit", "wrong_target_first", "reaction_ms", "heart_rate_bpm",
    ]

    /// One row per session with its summary figures. Empty fields where a figure is undefined
    /// (no hits). `athletes` supplies names; unknown ids give an empty name.
    public static func sessions(_ sessions: [SessionResults], athletes: [Athlete]) -> String {
        let names = names(of: athletes)
        var rows = [sessionColumns]
        for results in sessions {
            let s = results.session
            let stats = ReflexStatistics.session(results)
            let o = stats.overall
            rows.append([
                s.id.map { "\($0)" } ?? "", "\(s.athleteId)", names[s.athleteId] ?? "", s.sequenceName ?? "",
                UTCCalendar.iso8601(s.started), s.ended.map(UTCCalendar.iso8601) ?? "", s.complete ? "true" : "false",
                s.deviceName ?? "", s.deviceAddress ?? "", "\(s.stepCount)", "\(results.steps.count)", "\(o.hits)",
                "\(o.misses)", "\(o.wrongTargetFirst)", number(o.hitRate, 4), number(o.meanMilliseconds, 1),
                number(o.medianMilliseconds, 1), number(o.bestMilliseconds, 0), number(o.worstMilliseconds, 0),
                number(o.standardDeviationMilliseconds, 1), s.notes ?? "",
            ])
        }
        return document(rows)
    }

    /// One row per stored step result, sessions in the given order, steps by index.
    public static func steps(_ sessions: [SessionResults], athletes: [Athlete]) -> String {
        let names = names(of: athletes)
        var rows = [stepColumns]
        for results in sessions {
            let s = results.session
            for step in results.steps {
                let allowed = s.milliseconds.indices.contains(step.stepIndex) ? "\(s.milliseconds[step.stepIndex])" : ""
                rows.append([
                    s.id.map { "\($0)" } ?? "", "\(s.athleteId)", names[s.athleteId] ?? "", UTCCalendar.iso8601(s.started),
                    stepNumber(step.stepIndex), "\(step.target)", TargetPalette.colour(of: step.target)?.name ?? "", allowed,
                    step.hit ? "true" : "false", step.wrongTarget ? "true" : "false", step.hit ? "\(step.reactionMilliseconds)" : "",
                    step.heartRateBpm.map { "\($0)" } ?? "",
                ])
            }
        }
        return document(rows)
    }

    /// Sessions CSV straight from the store for one athlete (or everyone when nil).
    public static func sessions(from store: CoachStore, athleteID: Int64? = nil) throws -> String {
        sessions(try store.results(athleteID: athleteID), athletes: try store.athletes())
    }

    /// Steps CSV straight from the store for one athlete (or everyone when nil).
    public static func steps(from store: CoachStore, athleteID: Int64? = nil) throws -> String {
        steps(try store.results(athleteID: athleteID), athletes: try store.athletes())
    }

    /// A file name for an athlete's export: `ana-ruiz-steps.csv` (letters and digits kept,
    /// lower-cased, everything else one hyphen; `athlete` when nothing is left).
    public static func fileName(athlete name: String, perSession: Bool) -> String {
        var slug = ""
        for character in name.lowercased() {
            if character.isASCII, character.isLetter || character.isNumber { slug.append(character) } else if !slug.hasSuffix("-") { slug += "-" }
        }
        slug = String(slug.trimmingCharacters(in: CharacterSet(charactersIn: "-")).prefix(60))
        return (slug.isEmpty ? "athlete" : slug) + (perSession ? "-sessions.csv" : "-steps.csv")
    }

    /// Writes CSV text to `path` as UTF-8, replacing the file atomically.
    public static func write(_ csv: String, toPath path: String) throws {
        try Data(csv.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    /// One field, neutralised (``neutralised(_:)``) and quoted if needed:
    /// `Smith, "Kid"` → `"Smith, ""Kid"""`, `=HYPERLINK("x")` → `"'=HYPERLINK(""x"")"`.
    public static func field(_ value: String) -> String {
        let value = neutralised(value)
        guard value.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) else { return value }
        return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// `value` made safe from spreadsheet formula injection (OWASP's advice): a cell that starts
    /// with `=`, `+`, `-`, `@`, a tab or a CR gets a leading `'`, so a spreadsheet shows it as
    /// text instead of running it. Plain decimal numbers (`-1.5`) are left as they are.
    public static func neutralised(_ value: String) -> String {
        guard let first = value.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first) else { return value }
        if first == "-" || first == "+", InputRules.decimal(value) != nil, !value.contains(",") { return value }
        return "'" + value
    }

    /// Rows joined with commas and CRLF, ending with CRLF.
    public static func document(_ rows: [[String]]) -> String {
        rows.map { $0.map(field).joined(separator: ",") + "\r\n" }.joined()
    }

    /// A stored 0-based step index as the 1-based number shown everywhere ("" if out of range).
    static func stepNumber(_ index: Int) -> String {
        (0..<Int.max).contains(index) ? "\(index + 1)" : ""
    }

    private static func number(_ value: Double?, _ digits: Int) -> String {
        value.map { DecimalText.fixed($0, digits) } ?? ""
    }

    private static func names(of athletes: [Athlete]) -> [Int64: String] {
        var names: [Int64: String] = [:]
        for a in athletes { if let id = a.id { names[id] = a.name } }
        return names
    }
}
