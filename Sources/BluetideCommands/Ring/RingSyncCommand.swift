import ArgumentParser
import Bluetide
import BluetideRing
import Foundation

/// `bluetide ring sync`: history into SQLite.
struct RingSyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Copy the ring's history (heart rate, steps, sleep, SpO2, stress, HRV, temperature) into a SQLite database.",
        discussion: """
            Fetches every day since the last sync (at most 7, the ring's memory) into one tidy table, samples(time UTC, kind, value, unit); see docs/ring.md. Running it twice adds nothing, and days already complete are not fetched again. If the link drops, what arrived is kept and the next sync fetches the rest.

            Examples:
              bluetide ring sync
              bluetide ring sync --days 7 --db ~/ring.sqlite
              bluetide ring sync --json
            """)

    @OptionGroup var connection: RingConnectionOptions

    @Option(name: .long, help: "Ring days to fetch, today included (1-7; default: back to the last sync, 7 the first time).")
    var days: Int?

    @Option(name: .long, help: "Database file (default: \(RingStore.defaultPath())).")
    var db: String?

    @Flag(name: .long, help: "Print the result as JSON.") var json = false

    @Option(name: .long, help: .hidden)
    var now: String?

    func run() async throws { try await execute(CommandOutput.standardOutput()) }

    func execute(_ output: CommandOutput) async throws {
        var options = Ring.Options()
        if let now {
            // Replaying a capture: set the ring's clock to this time and sync relative to it.
            guard let fixed = ISO8601DateFormatter().date(from: now) else {
                throw CommandFailure("--now \(now): expected an ISO 8601 time like 2024-08-10T12:00:00Z")
            }
            options.clock = { fixed }
        }
        if let days, !(1...7).contains(days) {
            throw CommandFailure("--days \(days): expected 1 to 7 (the ring keeps about a week), e.g. --days 7")
        }
        let path = db ?? RingStore.defaultPath()
        let store: RingStore
        do { store = try RingStore(path: path) } catch { throw CommandFailure("\(error)") }
        let link = try await connection.open(options: options)
        let showProgress = output.isTerminal && !json && isatty(STDERR_FILENO) == 1
        let report: RingSyncReport
        do {
            report = try await link.use { ring in
                let sync = RingSync(ring: ring, store: store, ringID: await ring.connection.address.description)
                return try await sync.run(days: try days ?? sync.defaultDays()) { progress in
                    if showProgress { Self.drawProgress(progress) }
                }
            }
        } catch {
            if showProgress { StandardStreams.error.write("\n") }
            throw error
        }
        if showProgress { StandardStreams.error.write("\r\u{1B}[K") }
        if json {
            output.emit(RingJSON.line("synced", device: link.device, Synced(report: report, database: path)))
            return
        }
        let span = report.days.count == 1 ? report.days[0] : "\(report.days.first ?? "")…\(report.days.last ?? "")"
        var line = "synced \(span) from \(link.label): \(report.added) new samples into \(path)"
        if report.skipped > 0 { line += " (\(report.skipped) day-kinds already complete)" }
        if !report.unavailable.isEmpty { line += "; the ring does not provide: \(report.unavailable.joined(separator: ", "))" }
        output.emit(line)
    }

    /// The `synced` record's fields beside `device`: the report's, and the database written.
    struct Synced: Encodable {
        let report: RingSyncReport
        let database: String

        func encode(to encoder: any Encoder) throws {
            try report.encode(to: encoder)
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(database, forKey: .database)
        }

        enum Key: String, CodingKey { case database }
    }

    /// `[#########-----------]  12/31  steps 2026-11-20` on standard error.
    static func drawProgress(_ p: RingSyncProgress) {
        let width = 24
        let filled = p.total == 0 ? 0 : p.done * width / p.total
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        StandardStreams.error.write("\r\u{1B}[K[\(bar)] \(p.done)/\(p.total)  \(p.step)")
    }
}

/// `bluetide ring export`: tidy tables for pandas.
struct RingExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write the synced history as a tidy CSV or JSON Lines table (time UTC, kind, value, unit).",
        discussion: """
            Writes DIR/samples.csv (or samples.jsonl): one row per sample, times in UTC (ISO 8601, Z). pandas.read_csv("DIR/samples.csv", parse_dates=["time"]) loads it; see docs/ring-analysis.md.

            Examples:
              bluetide ring export --out ring-data
              bluetide ring export --db ~/ring.sqlite --out ring-data --format jsonl
              bluetide ring export --out ring-data --from 2026-11-01 --to 2026-11-07
            """)

    @Option(name: .long, help: "Database file (default: \(RingStore.defaultPath())).")
    var db: String?

    @Option(name: .long, help: ArgumentHelp("Folder to write into (created if needed; default: the current folder).", valueName: "dir"))
    var out: String = "."

    @Option(name: .long, help: "csv or jsonl.")
    var format: String = "csv"

    @Option(name: .long, help: ArgumentHelp("First UTC day to include, YYYY-MM-DD.", valueName: "date"))
    var from: String?

    @Option(name: .long, help: ArgumentHelp("Last UTC day to include, YYYY-MM-DD.", valueName: "date"))
    var to: String?

    @Flag(name: .long, help: "Print the result as JSON.") var json = false

    func run() async throws { try await execute(CommandOutput.standardOutput()) }

    static func day(_ text: String, option: String) throws -> Date {
        guard let day = RingCalendar.day(label: text) else {
            throw CommandFailure("\(option) \(text): expected a date YYYY-MM-DD, e.g. \(option) 2026-11-01")
        }
        return Date(timeIntervalSince1970: TimeInterval(day) * 86_400)
    }

    func execute(_ output: CommandOutput) async throws {
        guard let format = RingExport.Format(rawValue: format.lowercased()) else {
            throw CommandFailure("--format \(format): expected csv or jsonl")
        }
        let start = try from.map { try Self.day($0, option: "--from") }
        let end = try to.map { try Self.day($0, option: "--to").addingTimeInterval(86_400) }
        if let start, let end, end <= start { throw CommandFailure("--to \(to ?? "") is before --from \(from ?? "")") }
        let path = db ?? RingStore.defaultPath()
        guard FileManager.default.fileExists(atPath: path) else {
            throw CommandFailure("no ring database at \(path); run `bluetide ring sync` first (or pass --db FILE)")
        }
        let samples: [RingSample]
        do { samples = try RingStore(path: path).samples(from: start, to: end) } catch { throw CommandFailure("\(error)") }
        let file: URL
        do { file = try RingExport.write(samples, to: URL(fileURLWithPath: out), format: format) } catch {
            throw CommandFailure("cannot write into \(out): \(error.localizedDescription); pick another --out folder")
        }
        if json {
            struct Out: Encodable { let file: String; let format: String; let rows: Int; let kinds: [String] }
            let kinds = Array(Set(samples.map(\.kind))).sorted()
            output.emit(RingJSON.line("exported", Out(file: file.path, format: format.rawValue, rows: samples.count, kinds: kinds)))
        } else {
            output.emit("wrote \(samples.count) samples to \(file.path)\(samples.isEmpty ? " (the database has none in that range: run `bluetide ring sync`)" : "")")
        }
    }
}
