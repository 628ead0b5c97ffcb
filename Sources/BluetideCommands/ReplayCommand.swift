import ArgumentParser
import BluetideBase
import BluetideEmulation
import Bluetide
import BluetideProfiles
import BluetideRecording
import BluetideTransport
import Foundation

/// `bluetide replay FILE`: play a value log back, printing decoded values or serving them.
struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Play a value log back at its recorded pace: print decoded values, or serve them as a device.",
        discussion: """
            Records are released as far apart as they were recorded (divided by --pace N), or all at once with \
            --pace fast. Stateful profiles (csc, cycling-power, fec) derive speed and cadence from the \
            recorded times, so any pace prints the same values.

            With --as-peripheral the log is served as an emulated device: one characteristic per recorded \
            (service, characteristic), notifying the recorded values at their pace once a central subscribes; \
            reads return the latest value. The command ends when every value has been played (or on Ctrl-C).

            Examples:
              bluetide replay ride.jsonl
              bluetide replay ride.jsonl --pace 10 --json
              bluetide replay ride.jsonl --as-peripheral \\
                  --transport serial:/dev/ttyACM0 --name "Replayed CSC"
            """)

    @Argument(help: "Value log to play (docs/value-log-format.md).")
    var file: String

    @Option(name: .long, help: "Pace: original, a speed factor (4 = four times as fast, 0.5 = half speed) or fast (no waiting); as `ride --pace` takes it. --speed N and --as-fast-as-possible, the old names, still work.")
    var pace: String?

    /// `--speed N`, the old name of `--pace N` (hidden, deprecated).
    @Option(name: .customLong("speed"), help: .hidden)
    var deprecatedSpeed: Double?

    /// `--as-fast-as-possible`, the old name of `--pace fast` (hidden, deprecated).
    @Flag(name: .customLong("as-fast-as-possible"), help: .hidden)
    var deprecatedAsFastAsPossible = false

    @Flag(name: .long, help: "Print one JSON object per record.")
    var json = false

    @Option(name: .long, help: "Decode every record with this profile (see bluetide decode --list).")
    var profile: String?

    @OptionGroup var wheel: WheelOptions

    @Flag(name: .long, help: "Serve the values as an emulated device instead of printing them.")
    var asPeripheral = false

    @Option(name: .long, help: "Controller transport for --as-peripheral: \(TransportSpec.syntaxSummary)")
    var transport: String = "virtual"

    @Option(name: .long, help: "Advertised name for --as-peripheral (default: the recorded device name).")
    var name: String?

    @Flag(name: .long, help: ArgumentHelp(
        "Stop at the first damaged line (exit 1) instead of warning and playing on.",
        discussion: "Damaged: a malformed line, a truncated last line, or a record whose time runs backwards."))
    var strict = false

    func run() async throws {
        let (pace, decoder) = try settings()
        // The first few damaged lines are named, the rest counted (a garbage body is one count, not a warning per line).
        let warnings = ValueLogWarningLimit { [self] warning in warn(warning) }
        defer { if let summary = warnings.summary { appLogger.warning("\(file): \(summary)") } }
        if asPeripheral {
            try await serve(pace: pace, decoder: decoder, warn: { warnings.warn($0) })
        } else {
            let printer = LinePrinter()
            try await playStreamed(pace: pace, decoder: decoder, emit: { printer.emit($0) }, warn: { warnings.warn($0) })
        }
    }

    /// The pace and the decoder the options ask for; problems are ``CommandFailure``s.
    func settings() throws -> (ReplayPace, ValueLogDecoder) {
        try wheel.validated()
        let given = [pace != nil, deprecatedSpeed != nil, deprecatedAsFastAsPossible].filter { $0 }.count
        guard given <= 1 else { throw CommandFailure("--pace: given more than once (--speed and --as-fast-as-possible are its old names); give one") }
        var pace = ReplayPace.original
        if let text = self.pace {
            pace = try RideRunOptions.parsePace(text)
        } else if let speed = deprecatedSpeed {
            guard speed.isFinite, speed > 0 else {
                throw CommandFailure("--speed \(speed): expected a factor > 0 (2 = twice as fast, 0.5 = half speed); --pace is its new name")
            }
            pace = .speed(speed)
        } else if deprecatedAsFastAsPossible {
            pace = .asFastAsPossible
        }
        let decoder: ValueLogDecoder
        if let profile {
            do { decoder = try ValueLogDecoder(options: wheel.profileOptions, profileNamed: profile) } catch {
                throw CommandFailure("--profile: \(error) (see bluetide decode --list)")
            }
        } else {
            decoder = ValueLogDecoder(options: wheel.profileOptions)
        }
        return (pace, decoder)
    }

    /// Reads the whole log and checks the options: the log in memory, for callers that want it
    /// whole (tests; the command itself streams). Problems are ``CommandFailure``s.
    func prepare() throws -> (ValueLog, ReplayPace, ValueLogDecoder) {
        let (pace, decoder) = try settings()
        let log: ValueLog
        do { log = try ValueLogReader.read(path: file) } catch { throw readFailure(error) }
        return (log, pace, decoder)
    }

    /// A damaged line passed over, as one warning on standard error.
    func warn(_ warning: ValueLogWarning) {
        appLogger.warning("\(file): \(warning); played on (--strict stops here instead)")
    }

    /// What a read failure says: the file, the problem, and what to try.
    func readFailure(_ error: ValueLogError) -> CommandFailure {
        if case .malformedLine = error, strict {
            return CommandFailure("\(file): \(error) (--strict stops at a damaged line; leave it out to warn and play on)")
        }
        return CommandFailure("cannot read \(file): \(error) (a value log is JSON lines, see docs/value-log-format.md)")
    }

    /// Plays the file record by record as it is read (bounded memory whatever its size), handing
    /// each output line to `emit` as its record is released and each damaged line to `warn`;
    /// with `--strict` a damaged line ends the replay with a ``CommandFailure`` naming it. A file
    /// with damaged lines and not one record to play is a ``CommandFailure`` too (exit 1).
    func playStreamed(
        pace: ReplayPace, decoder: ValueLogDecoder, emit: (String) -> Void, warn: @escaping (ValueLogWarning) -> Void
    ) async throws {
        let damaged = DamagedLines()
        let stream: ValueLogStream
        do {
            stream = try ValueLogStream(path: file, strict: strict) { warning in
                damaged.count += 1
                warn(warning)
            }
        } catch {
            throw CommandFailure("cannot read \(file): \(error) (a value log is JSON lines, see docs/value-log-format.md)")
        }
        var replay = StreamedValueReplay(stream: stream, pace: pace)
        var decoder = decoder
        var played = 0
        do {
            while let record = try await replay.next() {
                emit(line(for: decoder.decode(record)))
                played += 1
            }
        } catch {
            throw CommandFailure(
                "\(file): \(error)\(strict ? " (--strict stops at a damaged line; leave it out to warn and play on)" : "")")
        }
        if played == 0, damaged.count > 0 {
            throw CommandFailure(
                "\(file): nothing to play: \(damaged.count) damaged line\(damaged.count == 1 ? "" : "s") and not one readable record (a value log is JSON lines, see docs/value-log-format.md)")
        }
    }

    /// How many damaged lines a replay passed over (counted where the stream reports them).
    private final class DamagedLines {
        var count = 0
    }

    /// Plays `log` and hands each output line to `emit` as its record is released.
    func play(_ log: ValueLog, pace: ReplayPace, decoder: ValueLogDecoder, emit: (String) -> Void) async {
        for await decoded in ValueReplay(log: log, pace: pace).decoded(with: decoder) {
            emit(line(for: decoded))
        }
    }

    /// One output line for a decoded record.
    func line(for decoded: DecodedValueRecord) -> String {
        let record = decoded.record
        if json {
            // The recorded moment: monotonic seconds from the log, and its wall clock when it has one.
            let wall = record.wallClock.flatMap { $0.isRepresentable ? $0.date : nil } ?? Date()
            var object: [String: JSONOutputValue] = [
                "time": JSONOutput.time(monotonic: max(0, record.timestamp), wall: wall),
                "device": JSONOutput.device(text: record.device.address, name: record.device.name),
                "characteristic": JSONOutput.characteristic(record.characteristic),
                "operation": .string(record.operation.rawValue),
                "value": JSONOutput.value(
                    record.value, decoded: decoded.packet?.value, profile: decoded.profile, summary: decoded.summary,
                    derived: decoded.packet?.derived),
            ]
            if let service = record.service { object["service"] = JSONOutput.characteristic(service) }
            return JSONOutput.line("replayed", object)
        }
        var text = String(format: "%9.3f ", record.timestamp)
        text += "\(record.characteristic) \(record.operation.rawValue)"
        text += ": \(decoded.summary)"
        if let derived = decoded.packet?.derived, case let .object(fields) = JSONOutputValue.encoding(derived), !fields.isEmpty {
            text += "  →  " + HumanFormat.describe(.object(fields))
        }
        return text
    }

    private func serve(pace: ReplayPace, decoder: ValueLogDecoder, warn: @escaping @Sendable (ValueLogWarning) -> Void) async throws {
        let spec: TransportSpec
        do { spec = try TransportSpec(parsing: transport) } catch { throw CommandFailure("--transport: \(error)") }
        // What to serve is read from the file first (bounded memory), so a bad file fails before the transport opens.
        let outline: ValueLogOutline
        do { outline = try ValueLogOutline.read(path: file, filter: ReplayPeripheral.filter(device: nil), strict: strict) } catch {
            throw readFailure(error)
        }
        guard outline.recordCount > 0 else {
            throw CommandFailure("\(file): nothing to serve: not one readable value record (a value log is JSON lines, see docs/value-log-format.md)")
        }
        // Derived from the file name (FNV-1a), so replaying the same file keeps its address.
        let digest = file.utf8.reduce(UInt64(0xCBF2_9CE4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01B3 }
        let address = BluetoothAddress.randomStatic(digest)
        let bluetooth: Bluetooth
        do {
            bluetooth = try await Bluetooth.open(
                transport: "\(spec)", configuration: .init(address: address, deviceName: name ?? "Bluetide Replay"))
        } catch {
            throw CommandFailure.cannotOpenTransport("\(spec)", error)
        }
        let peripheral: ReplayPeripheral
        do {
            peripheral = try ReplayPeripheral(
                bluetooth: bluetooth, logAt: file, outline: outline, pace: pace, name: name, strict: strict
            ) { warning in warn(warning) }
        } catch {
            await bluetooth.close()
            throw readFailure(error)
        }
        do {
            try await peripheral.start()
        } catch {
            await bluetooth.close()
            throw CommandFailure("could not start the replay device on \(spec): \(error)")
        }
        // Signals are caught from before the line that says the device is up, so one sent right after it is not lost.
        let stop = StopSignal.install()
        let stopped = Task { await stop.wait() }
        let printer = LinePrinter()
        printer.emit(json
            ? JSONOutput.line("started", [
                "device": JSONOutput.device(address, name: peripheral.advertisedName), "transport": .string("\(spec)"),
                "records": .integer(Int64(peripheral.recordCount)),
            ])
            : "replay: advertising as \"\(peripheral.advertisedName)\" from \(address.string) (random static) on \(spec); \(peripheral.recordCount) values play once a central subscribes")
        let played = peripheral.played
        let json = self.json
        let watcher = Task {
            var decoder = decoder
            for await record in played {
                let decoded = decoder.decode(record)
                printer.emit(json ? self.line(for: decoded) : "sent " + self.line(for: decoded))
            }
        }
        // What ended the serving: nil when every value was played, else the signal's name. The
        // group returns only once both of its tasks have, and they wait for unstructured tasks
        // that cancelling the group does not reach: both are cancelled by hand (the signal wait
        // then returns at once). Before, the signal wait was left running: after the last value
        // the command waited for a signal that never came.
        let signal = await withTaskGroup(of: String?.self) { group in
            group.addTask { await watcher.value; return nil }
            group.addTask { await stopped.value }
            let first = await group.next() ?? nil
            group.cancelAll()
            watcher.cancel()  // else the group waits for a stream only stop() ends, and the first signal is lost
            stopped.cancel()  // else the group waits for a signal after the last value
            return first
        }
        let failure = await peripheral.failure
        // Bounded: a controller that stopped answering must not hold the command up.
        await PromptShutdown.run({ await peripheral.stop() }, force: { await PromptShutdown.forceClose(bluetooth) })
        await PromptShutdown.close(bluetooth)
        if let failure { throw readFailure(failure) }
        // SIGINT exits 130 through StopSignal.wasInterrupted; SIGTERM says so too (128 + 15).
        if signal == "SIGTERM" { throw ExitCode(143) }
    }
}
