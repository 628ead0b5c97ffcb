import BluetideSupport
import Foundation

/// Writes samples as tidy tables for analysis: one row per sample with the columns
/// `time` (UTC, ISO 8601 with `Z`), `kind`, `value`, `unit`.
///
/// CSV is RFC 4180 with a header row, so `pandas.read_csv(path, parse_dates=["time"])` gives a
/// UTC datetime column, a float `value` and text `kind`/`unit`. JSON Lines has one object per
/// line with the same keys (`pandas.read_json(path, lines=True)`).
public enum RingExport {
    /// Output format.
    public enum Format: String, Sendable, CaseIterable {
        case csv, jsonl
    }

    /// The file name written in the output folder.
    public static func fileName(_ format: Format) -> String { "samples.\(format.rawValue)" }

    /// `2026-11-23T08:05:00Z`.
    public static func timeText(_ date: Date) -> String {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        let (days, rest) = CivilCalendar.floorDivide(seconds, 86_400)
        let p = RingCalendar.pad
        return "\(RingCalendar.label(day: Int(days)))T\(p(rest / 3600, 2)):\(p(rest / 60 % 60, 2)):\(p(rest % 60, 2))Z"
    }

    /// A value without a trailing `.0` when whole (`72`, `0.5`).
    public static func valueText(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    /// The whole table as text.
    public static func render(_ samples: [RingSample], format: Format) -> String {
        var out = ""
        switch format {
        case .csv:
            out = "time,kind,value,unit\n"
            for s in samples { out += "\(timeText(s.time)),\(csvField(s.kind)),\(valueText(s.value)),\(csvField(s.unit))\n" }
        case .jsonl:
            for s in samples {
                out += "{\"time\":\"\(timeText(s.time))\",\"kind\":\(jsonString(s.kind)),\"value\":\(valueText(s.value)),\"unit\":\(jsonString(s.unit))}\n"
            }
        }
        return out
    }

    /// Writes `samples` to `folder/samples.csv` (or `.jsonl`), creating the folder; returns the file.
    @discardableResult
    public static func write(_ samples: [RingSample], to folder: URL, format: Format) throws -> URL {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent(fileName(format))
        try Data(render(samples, format: format).utf8).write(to: file, options: .atomic)
        return file
    }

    private static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    private static func jsonString(_ text: String) -> String {
        (try? JSONEncoder().encode(text)).map { String(decoding: $0, as: UTF8.self) } ?? "\"\""
    }
}
