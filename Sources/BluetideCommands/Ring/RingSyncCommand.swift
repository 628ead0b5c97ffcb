import ArgumentParser
import Bluetide
import BluetideRing
import BluetideGateway
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
              bluetide ring sync --every 1h   (until Ctrl-C)
              bluetide ring sync --every 10m --ring R02_341C --ring "COLMI R10_1A2B"
              bluetide ring sync --mqtt mqtt://127.0.0.1:1883

            With --every, the rings (--ring, repeatable; default the paired one) are synced one after another, as a ring takes one connection at a time, and again every DURATION (90, 90s, 10m, 1h) until Ctrl-C, into one database; a ring out of reach is reported and tried again next round.

            With --mqtt, every new sample is also published, with its own time, as a ring-sample record on bluetide/app/ring-sync/ring-sample (docs/gateway.md); samples an earlier sync stored are not published again.
            """)

    @OptionGroup var connection: RingConnectionOptions

    @Option(name: .long, help: "Ring days to fetch, today included (1-7; default: back to the last sync, 7 the first time).")
    var days: Int?

    @Option(name: .long, help: "Database file (default: \(RingStore.defaultPath())).")
    var db: String?

    @Flag(name: .long, help: "Print the result as JSON.") var json = false

    @Option(name: .long, help: ArgumentHelp("Sync again every DURATION (90, 90s, 10m, 1h) until Ctrl-C.", valueName: "duration"))
    var every: String?

    @Option(name: .long, help: ArgumentHelp("With --every: a ring to sync (repeatable; ADDRESS/R or its name; default the paired ring).", valueName: "ring"))
    var ring: [String] = []

    @OptionGroup var broker: MQTTPublishOptions

    @Option(name: .long, help: .hidden)
    var now: String?

    @Option(name: .long, help: .hidden)
    var rounds: Int?

    func run() async throws {
        guard every != nil else { try await execute(CommandOutput.standardOutput()); return }
        let signal = StopSignal.install()
        let work = Task { try await executeScheduled(CommandOutput.standardOutput()) { pause in
            (try? await Task.sleep(for: pause)) != nil
        } }
        let watcher = Task {
            _ = await signal.wait()
            work.cancel()
        }
        defer { watcher.cancel() }
        try await work.value
    }

    /// `--every`'s value as a duration: seconds, or a number with `s`, `m` or `h`.
    static func interval(_ text: String) throws -> Duration {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        let units: [(String, Double)] = [("h", 3600), ("m", 60), ("s", 1)]
        let (number, scale) = units.first { trimmed.hasSuffix($0.0) }.map { (String(trimmed.dropLast()), $0.1) } ?? (trimmed, 1)
        guard let value = Double(number), value.isFinite, value * scale >= 1, value * scale <= 7 * 86_400 else {
            throw CommandFailure.usage("--every \(text): expected a duration of 1 s to 7 days like 90, 90s, 10m or 1h", field: "--every")
        }
        return .milliseconds(Int64(value * scale * 1000))
    }

    /// `--every`: rounds over the rings until `wait` (given the pause before the next round)
    /// returns false. One `synced` line or record per ring per round, or one failure line
    /// (`sync-failed` record with `--json`) saying what to try; the rings are retried next round.
    func executeScheduled(_ output: CommandOutput, wait: (Duration) async -> Bool) async throws {
        let interval = try Self.interval(every ?? "")
        if let days, !(1...7).contains(days) {
            throw CommandFailure("--days \(days): expected 1 to 7 (the ring keeps about a week), e.g. --days 7")
        }
        if let rounds, rounds < 1 { throw CommandFailure.usage("--rounds \(rounds): expected 1 or more", field: "--rounds") }
        try connection.check()
        try broker.validate(app: "ring-sync")
        let remembered: RingPairing?
        do { remembered = try connection.pairing.load() } catch { throw CommandFailure("\(error)") }
        let targets: [(target: String, label: String)] = ring.isEmpty
            ? (remembered.map { [($0.address.description, $0.label)] } ?? [])
            : ring.map { ($0, $0) }
        guard !targets.isEmpty else {
            throw CommandFailure("no ring to sync: run `bluetide ring pair` first, or name rings with --ring ADDRESS/R")
        }
        let path = db ?? RingStore.defaultPath()
        let store: RingStore
        do { store = try RingStore(path: path) } catch { throw CommandFailure("\(error)") }
        let publisher = try await broker.connect(app: "ring-sync")
        let session = try await DeviceSession.open(try connection.sessionOptions(remembered: remembered))
        var scheduled = RingScheduledSync(session: session, rings: targets, store: store, timeout: connection.timeout, options: Ring.Options(), days: days)
        if let publisher {
            scheduled.added = { device, samples in for sample in samples { publisher.publish(Self.sampleRecord(sample, device: device), type: "ring-sample") } }
        }
        if !json {
            output.emit("syncing \(targets.map(\.label).joined(separator: ", ")) into \(path) every \(every ?? ""); Ctrl-C stops")
        }
        var last = 0
        await scheduled.run(rounds: rounds, every: interval, wait: wait) { outcome in
            last = outcome.round
            output.emit(Self.line(outcome, database: path, json: json))
        }
        await session.close()
        await publisher?.finishReporting()
        if !json { output.emit("stopped after \(last) round\(last == 1 ? "" : "s")\(Task.isCancelled ? " (Ctrl-C)" : "")") }
    }

    /// The line for one ring's round.
    static func line(_ o: RingScheduledSync.Outcome, database: String, json: Bool) -> String {
        let time = RingRawFormat.timeText(Date())
        if let report = o.report {
            if json {
                var fields: [String: JSONOutputValue] = [:]
                if case let .object(members) = JSONOutputValue.encoding(Synced(report: report, database: database)) { fields = members }
                fields["ring"] = .string(o.ring)
                fields["round"] = .integer(Int64(o.round))
                return JSONOutput.line("synced", fields)
            }
            return "\(time) round \(o.round): \(o.ring): \(report.added) new samples (\(report.days.first ?? "")…\(report.days.last ?? ""))"
        }
        let failure = o.failure ?? "failed"
        if json { return JSONOutput.line("sync-failed", ["ring": .string(o.ring), "round": .integer(Int64(o.round)), "reason": .string(failure)]) }
        let next = failure.hasPrefix("stopped while syncing") ? "" : "; trying again next round"
        return "\(time) round \(o.round): \(o.ring): not synced (\(failure))\(next)"
    }

    func execute(_ output: CommandOutput) async throws {
        if !ring.isEmpty { throw CommandFailure.usage("--ring needs --every: without it, sync takes the paired ring or --device", field: "--ring") }
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
        let publisher = try await broker.connect(app: "ring-sync")
        let link: RingLink
        do { link = try await connection.open(options: options) } catch {
            await publisher?.finishReporting()
            throw error
        }
        let showProgress = output.isTerminal && !json && isatty(STDERR_FILENO) == 1
        let report: RingSyncReport
        do {
            let device = link.device
            report = try await link.use { ring in
                let sync = RingSync(ring: ring, store: store, ringID: await ring.connection.address.description)
                return try await sync.run(days: try days ?? sync.defaultDays(), progress: { progress in
                    if showProgress { Self.drawProgress(progress) }
                }, added: { samples in
                    for sample in samples { publisher?.publish(Self.sampleRecord(sample, device: device), type: "ring-sample") }
                })
            }
        } catch {
            if showProgress { StandardStreams.error.write("\n") }
            await publisher?.finishReporting()
            throw error
        }
        if let publisher, let problem = await publisher.finishReporting() { throw CommandFailure(problem) }
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

    /// One new sample as its `ring-sample` record (published with --mqtt): `device`, `kind`,
    /// `reading` in `unit`, and `measuredAt`, the sample's own time (UTC, ISO 8601).
    static func sampleRecord(_ sample: RingSample, device: JSONOutputValue) -> String {
        JSONOutput.line("ring-sample", [
            "device": device, "kind": .string(sample.kind), "reading": .number(sample.value), "unit": .string(sample.unit),
            "measuredAt": .string(RingExport.timeText(sample.time)),
        ])
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
