import ArgumentParser
import Bluetide
import BluetideRecording
import BluetideRing
import Foundation
import Synchronization

/// `bluetide ring raw`: the ring's raw PPG, accelerometer and SpO2 streams, to CSV or JSON Lines.
struct RingRawCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "raw",
        abstract: "Stream the ring's raw PPG, accelerometer and SpO2 sensor samples to CSV or JSON Lines, until Ctrl-C.",
        discussion: """
            Each sample is one row with its arrival time (UTC, milliseconds) and seconds since the start: time,seconds,kind,raw,max,min,diff,x,y,z. Without --out the rows go to standard output. --values also records the ring's packets as a value log (bluetide replay plays it back). Ctrl-C or --seconds stops the stream on the ring, then disconnects; the last line says how many samples came, how fast, and how many were dropped (on a terminal, a live count runs on standard error meanwhile).

            Stock firmware sends a few samples a second (atc1441's patched firmware 40 Hz and more).

            Examples:
              bluetide ring raw --seconds 10 --out raw.csv
              bluetide ring raw --seconds 5 --out raw.jsonl --values raw.values.jsonl
              bluetide ring raw --seconds 5 --out raw.csv --json
              bluetide ring raw --out raw.csv   (until Ctrl-C)
            """)

    @OptionGroup var connection: RingConnectionOptions
    @Option(name: .long, help: "Stop after this many seconds (default: until Ctrl-C).") var seconds: Double?
    @Option(name: .long, help: ArgumentHelp("Write the samples to this file (default: standard output).", valueName: "file"))
    var out: String?
    @Option(name: .long, help: "csv or jsonl (default: from --out's extension, else csv).") var format: String?
    @Option(name: .long, help: ArgumentHelp("Also record the ring's packets as a value log.", valueName: "file"))
    var values: String?
    @Option(name: .long, help: "The start request's mode byte: 0 (A1 04, colmi_r02_client) or 4 (A1 04 04, atc1441).") var mode: Int = 0
    @Flag(name: .long, help: "Print the summary as a JSON record (needs --out).") var json = false

    func run() async throws {
        try await execute(CommandOutput.standardOutput(), errors: Self.standardError) { [seconds] in
            await StopSignal.install(duration: seconds).wait()
        }
    }

    /// Standard error, a line at a time.
    static let standardError = CommandOutput(emit: { line in FileHandle.standardError.write(Data((line + "\n").utf8)) })

    /// The file format in force.
    func resolvedFormat() throws -> RingRawFormat {
        if let format {
            guard let f = RingRawFormat(rawValue: format.lowercased()) else {
                throw CommandFailure.usage("--format \(format): expected csv or jsonl, e.g. --format csv", field: "--format")
            }
            return f
        }
        return out.map { $0.lowercased().hasSuffix(".jsonl") || $0.lowercased().hasSuffix(".json") } == true ? .jsonl : .csv
    }

    func checkOptions() throws {
        if let seconds, !(seconds.isFinite && seconds > 0) {
            throw CommandFailure.usage("--seconds \(seconds): expected seconds > 0, e.g. --seconds 10", field: "--seconds")
        }
        guard (0...255).contains(mode) else { throw CommandFailure.usage("--mode \(mode): expected 0 to 255 (0 or 4 in practice)", field: "--mode") }
        if json && out == nil {
            throw CommandFailure.usage("--json needs --out FILE: without it the samples themselves go to standard output", field: "--json")
        }
        _ = try resolvedFormat()
    }

    /// The summary: the `raw-stream` record's fields (docs/json-output.md).
    struct Summary: Encodable {
        let file: String?
        let format: String
        let samples: Int
        let ppgSamples: Int
        let accelerometerSamples: Int
        let spo2Samples: Int
        let seconds: Double
        let samplesPerSecond: Double
        let dropped: Int
        let valueLog: String?
        let stopReason: String
    }

    /// Streams until `stop` returns or the link drops. Tests pass a timer for `stop`, and follow
    /// the stream with `written` (the samples written so far, after each one).
    func execute(
        _ output: CommandOutput, errors: CommandOutput, written: (@Sendable (Int) -> Void)? = nil,
        until stop: @escaping @Sendable () async -> String
    ) async throws {
        try checkOptions()
        let format = try resolvedFormat()
        var file: RawFile?
        if let out { file = try RawFile(path: out) }
        var log: ValueLogWriter?
        if let values {
            do { log = try ValueLogWriter(path: values, header: ValueLogHeader(startedAt: WallClockTime.now()), flushEvery: 64) } catch {
                throw CommandFailure("cannot write the value log \(values): \(error)")
            }
        }
        let link = try await connection.open()
        let ring = link.ring
        let address = ring.connection.address
        // As `bluetide record` writes it: the address with its /R, the advertised name.
        let device = DeviceIdentity(address: address.description, name: await ring.deviceName)
        let started = Date()
        let clock = ContinuousClock.now
        do { try await ring.startRawStream(mode: UInt8(mode)) } catch {
            await link.close()
            throw CommandFailure("\(link.label): \(error)")
        }
        if let header = format.header {
            if let file { try file.write(header) } else { output.emit(header) }
        }
        let reason = Mutex<String?>(nil)
        let stopper = Task {
            let why = await stop()
            reason.withLock { $0 = $0 ?? why }
            await ring.close()
        }
        var statistics = RingRawStatistics()
        var failure: CommandFailure?
        // On a terminal, with the samples going to a file: a live count on standard error.
        let live = out != nil && !json && isatty(STDERR_FILENO) == 1
        var lastShown = ContinuousClock.now
        for await sample in ring.rawSamples {
            statistics.add(sample)
            if live, ContinuousClock.now - lastShown >= .seconds(1) {
                lastShown = .now
                let rate = sample.seconds > 0 ? Double(statistics.total) / sample.seconds : 0
                let dropped = await ring.rawDropped
                StandardStreams.error.write("\r\u{1B}[K\(statistics.total) samples (ppg \(statistics.counts["ppg"] ?? 0), accelerometer \(statistics.counts["accelerometer"] ?? 0), spo2 \(statistics.counts["spo2"] ?? 0)), \(String(format: "%.1f", rate))/s, dropped \(dropped)")
            }
            let line = format.line(sample, start: started)
            do {
                if let file { try file.write(line) } else { output.emit(line) }
                try log?.append(ValueRecord(
                    timestamp: sample.seconds, device: device, service: COLMIUUID.service, characteristic: COLMIUUID.notify,
                    operation: .notify, value: sample.packet, profile: "colmi"))
                written?(statistics.total)
            } catch {
                failure = CommandFailure("could not write sample \(statistics.total) (\(error)); the \(statistics.total - 1) before it are kept")
                break
            }
        }
        let linkLost = reason.withLock { $0 == nil } && failure == nil
        if linkLost || failure != nil { reason.withLock { $0 = $0 ?? (failure != nil ? "write failed" : "link lost") } }
        if live { StandardStreams.error.write("\r\u{1B}[K") }
        stopper.cancel()
        await stopper.value
        statistics.dropped = await ring.rawDropped
        await link.close()
        let elapsed = ContinuousClock.now - clock
        let duration = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        var closeProblem: String?
        do { try file?.close() } catch { closeProblem = "could not finish \(out ?? "the output"): \(error)" }
        do { try log?.close() } catch { closeProblem = closeProblem ?? "could not finish the value log \(values ?? ""): \(error)" }
        let summary = Summary(
            file: out, format: format.rawValue, samples: statistics.total, ppgSamples: statistics.counts["ppg"] ?? 0,
            accelerometerSamples: statistics.counts["accelerometer"] ?? 0, spo2Samples: statistics.counts["spo2"] ?? 0,
            seconds: (duration * 1000).rounded() / 1000, samplesPerSecond: (statistics.samplesPerSecond(over: duration) * 10).rounded() / 10,
            dropped: statistics.dropped, valueLog: values, stopReason: reason.withLock { $0 } ?? "stopped")
        if json {
            output.emit(RingJSON.line("raw-stream", device: link.device, summary))
        } else {
            let counts = "ppg \(summary.ppgSamples), accelerometer \(summary.accelerometerSamples), spo2 \(summary.spo2Samples)"
            let line = "\(link.label): \(summary.samples) raw samples in \(String(format: "%.1f", duration)) s (\(String(format: "%.1f", summary.samplesPerSecond))/s: \(counts)), dropped \(summary.dropped)\(out.map { ", written to \($0)" } ?? "")\(values.map { ", value log \($0)" } ?? "")"
            (out == nil ? errors : output).emit(line)
        }
        if let failure { throw failure }
        if let closeProblem { throw CommandFailure(closeProblem) }
        if linkLost { throw CommandFailure("\(link.label): the link was lost after \(summary.samples) samples (they are kept); bring the ring closer and run raw again") }
    }
}

/// The output file: lines buffered and written at least once a second; a write error (disk full) is thrown.
final class RawFile {
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private var pendingLines = 0
    private var lastFlush = ContinuousClock.now
    let path: String

    init(path: String) throws {
        self.path = path
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
            throw CommandFailure("cannot create \(path): check the folder exists and is writable")
        }
        self.handle = handle
    }

    func write(_ line: String) throws {
        buffer.append(contentsOf: line.utf8)
        buffer.append(0x0A)
        pendingLines += 1
        // At most a second behind, so `tail -f` follows the stream.
        if pendingLines >= 64 || buffer.count >= 16 * 1024 || ContinuousClock.now - lastFlush >= .seconds(1) { try flush() }
    }

    func flush() throws {
        guard !buffer.isEmpty else { return }
        try handle.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
        pendingLines = 0
        lastFlush = .now
    }

    func close() throws {
        defer { try? handle.close() }
        try flush()
        try handle.synchronize()
    }
}
