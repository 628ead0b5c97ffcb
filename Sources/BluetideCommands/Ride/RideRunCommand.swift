import ArgumentParser
import Synchronization
import Bluetide
import BluetideRecording
import BluetideGateway
import BluetideRide
import BluetideSerial
import BluetideSupport
import Foundation

/// `bluetide ride [run]`: connects the trainer and sensors (or replays a recorded ride), shows the
/// merged samples live, keeps the trainer on its target and records.
struct RideRunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Ride live (the default): merged speed, cadence, power, heart rate and distance, trainer control.",
        discussion: """
            Without --trainer/--power/--cadence/--speed/--hr, devices are found by the services they advertise \
            (a trainer: FTMS or Tacx FE-C; a power meter; a speed/cadence sensor; a heart-rate strap). On a terminal \
            one screen is updated in place; otherwise one line (or --json object) per second.

            During a live ride, type a command and Enter on standard input to change the target: \
            `erg 220` (watts), `grade 3.5` (percent; negative downhill), `resistance 30` (percent), \
            `free` (back to free riding), `pause`, `start` (go on), `lap`, `workout` (start it again) or `help`; \
            a target command ends a running workout. When a --workout \
            finishes the ride ends with a summary, unless --keep-riding.

            Examples:
              bluetide ride --emulate tacx-fec,heart-rate --erg 200
              bluetide ride --emulate ftms-bike --grade 4.5 --duration 60 --json
              bluetide ride --trainer "Tacx Neo 2T" --hr "HRM-Pro" \\
                  --transport hci-socket:0 --workout ftp-test.zwo --ftp 240
              bluetide ride --emulate csc,cycling-power,heart-rate --circumference 2.096 \\
                  --record ride.jsonl
              bluetide ride --replay ride.jsonl --pace 10 --loop
              bluetide ride --emulate ftms-bike --mqtt mqtt://127.0.0.1:1883 --duration 60
            """)

    @OptionGroup var options: RideRunOptions

    func run() async throws {
        // Typed commands (`erg 220`, `grade 3.5`, …) come on standard input, a line each.
        let input = try? FileDescriptorPort(input: STDIN_FILENO, output: STDOUT_FILENO)
        defer { input?.stop() }
        try await options.execute(CommandOutput.standardOutput(), stopOnSignals: true, commands: input.map(RideCommandInput.lines))
    }

    /// Rides as ``RideRunOptions/execute(_:stopOnSignals:commands:observe:onSession:clock:)`` does
    /// (on `clock`: a test's manual clock runs the emulated world, the ride and --duration in
    /// virtual time).
    func execute(
        _ output: CommandOutput, stopOnSignals: Bool = false, observe: (@Sendable (RideSample) async -> Void)? = nil,
        clock: BluetideClock = .continuous
    ) async throws {
        try await options.execute(output, stopOnSignals: stopOnSignals, observe: observe, clock: clock)
    }
}

/// What `bluetide ride` and `ride serve` take: the devices (or a replay), the target, the
/// recording and the output, and the ride they make.
struct RideRunOptions: ParsableArguments {
    @OptionGroup var session: DeviceSessionOptions

    @OptionGroup var devices: RideDeviceOptions

    @Option(name: .long, help: "ERG: hold this power, watts.")
    var erg: Int?
    @Option(name: .long, help: "Simulation: ride this grade, percent (e.g. 4.5, -2).")
    var grade: Double?
    @Option(name: .long, help: "Basic resistance, percent of the trainer's range.")
    var resistance: Double?
    @Option(name: .long, help: "Ride a structured workout: a .zwo, .erg, .mrc or FIT workout (.fit) file.")
    var workout: String?
    @Option(name: .long, help: "Your FTP in watts, for workouts in percent of FTP.")
    var ftp: Double = 200

    @Option(name: .long, help: "Record every device's values to this value log (export it with `bluetide ride export`).")
    var record: String?
    @Option(name: .long, help: "Replay a recorded ride (value log) instead of live devices.")
    var replay: String?
    @Option(name: .long, help: "Replay pace: original, a speed factor (4 = four times as fast, 0.5 = half speed) or fast (no waiting); as `replay --pace` takes it.")
    var pace: String = "original"
    @Flag(name: .long, help: "Replay: start again at the end.")
    var loop = false
    @Flag(name: .long, help: ArgumentHelp(
        "Replay: stop at the first damaged line (exit 1) instead of warning and playing on.",
        discussion: "Damaged: a malformed line, a truncated last line, or a record whose time runs backwards."))
    var strict = false

    @OptionGroup var stop: DurationOption
    @OptionGroup var broker: MQTTPublishOptions
    @Flag(name: .long, help: "One JSON object per sample (and per notice).")
    var json = false
    @Flag(name: .long, help: "A sample on every device update, not only once a second.")
    var allUpdates = false
    @Flag(name: .long, help: "After a --workout finishes, go on riding (until Ctrl-C or --duration) instead of ending with a summary.")
    var keepRiding = false

    /// The target the options ask for (at most one of --erg, --grade, --resistance, --workout).
    func target() throws -> RideTarget? {
        let chosen = [erg != nil, grade != nil, resistance != nil, workout != nil].filter { $0 }.count
        guard chosen <= 1 else { throw CommandFailure.usage("choose one of --erg, --grade, --resistance and --workout", field: "--erg") }
        if let erg {
            guard (0...4000).contains(erg) else { throw CommandFailure("--erg \(erg): expected 0…4000 watts") }
            return .power(watts: erg)
        }
        if let grade {
            guard grade.isFinite, (-40...40).contains(grade) else { throw CommandFailure("--grade \(grade): expected −40…40 percent") }
            return .grade(percent: grade)
        }
        if let resistance {
            guard resistance.isFinite, (0...100).contains(resistance) else { throw CommandFailure("--resistance \(resistance): expected 0…100 percent") }
            return .resistance(percent: resistance)
        }
        return nil
    }

    static func parsePace(_ text: String) throws -> ReplayPace {
        switch text.lowercased() {
        case "original", "1": return .original
        case "fast", "max": return .asFastAsPossible
        default:
            guard let factor = Double(text), factor.isFinite, factor > 0 else {
                throw CommandFailure("--pace \(text): expected original, fast or a speed factor above 0 such as 4 or 0.5")
            }
            return .speed(factor)
        }
    }

    /// Rides until --duration, the end of a replay, the end of a --workout (unless --keep-riding)
    /// or (with `stopOnSignals`) Ctrl-C; `observe` sees every sample (`ride serve` feeds its page
    /// with it); `commands` are typed lines that change the target (``RideControlCommand``).
    /// The emulated world, the central and --duration run on `clock` (the CLI's is the
    /// monotonic clock; a test passes a manual clock and drives it with `advancing`).
    func execute(
        _ output: CommandOutput, stopOnSignals: Bool = false, commands: AsyncStream<String>? = nil,
        observe: (@Sendable (RideSample) async -> Void)? = nil, onSession: (@Sendable (RideSession) async -> Void)? = nil,
        clock: BluetideClock = .continuous
    ) async throws {
        try stop.validated()
        try devices.validated()
        guard ftp.isFinite, (30...1000).contains(ftp) else { throw CommandFailure("--ftp \(ftp): expected 30…1000 watts") }
        let target = try target()
        let plan: Workout? = try workout.map { path in
            guard let data = FileManager.default.contents(atPath: path) else {
                throw CommandFailure("--workout \(path): cannot read the file")
            }
            do { return try Workout.parse(bytes: [UInt8](data), fileName: path) } catch {
                throw CommandFailure("--workout \(path): \(error)")
            }
        }
        let configuration = RideSession.Configuration(
            merger: .init(wheelCircumferenceMeters: devices.wheel.circumference), ftpWatts: ftp, recordPath: record)

        try broker.validate(app: "ride")
        let publisher = try await broker.connect(app: "ride")
        do {
            try await execute(
                output, target: target, plan: plan, configuration: configuration, publisher: publisher, stopOnSignals: stopOnSignals,
                commands: commands, observe: observe, onSession: onSession, clock: clock)
        } catch {
            await publisher?.finishReporting()
            throw error
        }
        if let publisher, let problem = await publisher.finishReporting() { throw CommandFailure(problem) }
    }

    private func execute(
        _ output: CommandOutput, target: RideTarget?, plan: Workout?, configuration: RideSession.Configuration, publisher: AppPublisher?,
        stopOnSignals: Bool, commands: AsyncStream<String>?, observe: (@Sendable (RideSample) async -> Void)?,
        onSession: (@Sendable (RideSession) async -> Void)?, clock: BluetideClock
    ) async throws {
        var opened: DeviceSession?
        let source: any RideDataSource
        if let replay {
            guard target == nil, plan == nil else { throw CommandFailure.usage("a replay has no trainer to control; drop --erg/--grade/--resistance/--workout", field: "--replay") }
            // Read as it plays: the first sample comes before the rest of the file is read.
            source = RecordedRideSource(path: replay, pace: try Self.parsePace(pace), loop: loop, strict: strict) { warning in
                appLogger.warning("\(replay): \(warning); played on (--strict stops here instead)")
            }
        } else {
            let live = try await DeviceSession.open(session, clock: clock)
            opened = live
            source = LiveRideSource(
                central: live.central, requests: devices.requests(), configuration: .init(scanSeconds: devices.scan))
        }
        let ride = RideSession(source: source, configuration: configuration)
        do {
            try await run(
                ride, target: target, workout: plan, output: output, publisher: publisher, stopOnSignals: stopOnSignals, commands: commands,
                observe: observe, onSession: onSession, clock: clock)
        } catch {
            await ride.stop()
            await opened?.close()
            throw error
        }
        await ride.stop()
        await opened?.close()
    }

    /// Rides `ride` with ``RideRun`` and shows what happens: the live screen on a terminal,
    /// else a line (or --json object) per sample and notice; the MQTT publisher gets the
    /// devices, the samples and the notices. Maps the run's errors to their one-line texts.
    private func run(
        _ ride: RideSession, target: RideTarget?, workout: Workout?, output: CommandOutput, publisher: AppPublisher?, stopOnSignals: Bool,
        commands: AsyncStream<String>?, observe: (@Sendable (RideSample) async -> Void)?,
        onSession: (@Sendable (RideSession) async -> Void)?, clock: BluetideClock
    ) async throws {
        let stop = RideRunning.catchStops(stopOnSignals)
        let recorded = ride.source as? RecordedRideSource<ContinuousClock>
        // The samples' wall clock: the recording's start for a replay, now for a live ride (set
        // when the ride started).
        let startedAt = Mutex(Date())
        let json = json, allUpdates = allUpdates
        let live = output.isTerminal && !json
        // A live ride knows its devices once started; a replay learns them as their first values play.
        let shown = DeviceLines(source: ride.source)
        let published = DeviceLines(source: ride.source)
        let recent = NoticeBuffer()
        let notice = { @Sendable (text: String) in
            recent.add(text)
            if !live { output.emit(json ? RideRunning.noticeLine(text) : "# \(text)") }
        }
        let publish = { @Sendable (sample: RideSample) async in
            guard let publisher, sample.trigger == .tick else { return }
            // The ride's devices once each (as --json prints them), then the sample.
            for line in await published.newLines(json: true) { publisher.publish(line, type: "device") }
            publisher.publish(RideRunning.sampleLine(sample, startedAt: startedAt.withLock { $0 }), type: "sample")
        }
        let run = RideRun(
            target: target, workout: workout, keepRiding: keepRiding, duration: self.stop.duration.map { .seconds($0) }, clock: clock)
        let show: @Sendable (RideRun.Event) async -> Void = { event in
            switch event {
            case .started:
                let recordedStart = recorded?.header?.startedAt.map { Date(timeIntervalSince1970: Double($0.millisecondsSince1970) / 1000) }
                startedAt.withLock { $0 = recordedStart ?? Date() }
                if !live { for line in await shown.newLines(json: json) { output.emit(line) } }
            case .riding:
                await onSession?(ride)
            case let .notice(text):
                publisher?.publish(RideRunning.noticeLine(text), type: "notice")
                notice(text)
            case let .answer(answer):
                notice(answer.text)
            case let .sample(sample):
                await observe?(sample)
                await publish(sample)
                guard allUpdates || sample.trigger == .tick else { return }
                if live {
                    let devices = await ride.source.devices
                    let title = devices.isEmpty ? "ride" : devices.map(\.description).joined(separator: " · ")
                    output.emit(RideView.screen(sample, title: title, notices: recent.last(4)))
                } else {
                    for line in await shown.newLines(json: json) { output.emit(line) }
                    output.emit(json ? RideRunning.sampleLine(sample, startedAt: startedAt.withLock { $0 }) : RideView.line(sample))
                }
            case let .workoutFinished(end):
                await observe?(end.sample)
                await publish(end.sample)
                let text = "workout \(end.name) done: \(end.summary.text)"
                publisher?.publish(RideRunning.noticeLine(text), type: "notice")
                output.emit(json ? RideRunning.noticeLine(text) : "# \(text)")
            }
        }
        var stopWhen: (@Sendable () async -> String)?
        if let stop { stopWhen = { await stop.wait() } }
        do throws(RideRunError) {
            _ = try await run.run(ride, commands: commands, stopWhen: stopWhen, report: show)
        } catch {
            switch error {
            case let .start(message), let .target(message):
                throw CommandFailure(message)
            case let .replayDamaged(failure):
                let replay = replay ?? "--replay"
                throw CommandFailure("\(replay): \(failure)\(strict ? " (--strict stops at a damaged line; leave it out to warn and play on)" : "")")
            case .replayWithoutValues:
                throw CommandFailure("--replay \(replay ?? ""): \(error)")
            }
        }
    }
}

/// The `# role: device` (or `--json` `device`) lines of a ride's devices, each printed once, when
/// the source first knows it.
final class DeviceLines: Sendable {
    private let source: any RideDataSource
    private let printed = Mutex<Set<RideDevice>>([])

    init(source: any RideDataSource) { self.source = source }

    /// The lines of the devices not printed yet.
    func newLines(json: Bool) async -> [String] {
        var lines: [String] = []
        for device in await source.devices where printed.withLock({ $0.insert(device).inserted }) {
            lines.append(json ? await RideRunning.deviceLine(device, source: source) : "# \(device.role): \(device.label)")
        }
        return lines
    }
}

/// The latest notices, for the live screen.
final class NoticeBuffer: Sendable {
    private let storage = Mutex<[String]>([])

    func add(_ notice: String) {
        storage.withLock {
            $0.append(notice)
            if $0.count > 16 { $0.removeFirst($0.count - 16) }
        }
    }

    func last(_ count: Int) -> [String] { storage.withLock { Array($0.suffix(count)) } }
}

/// Typed ride commands from a descriptor (standard input), a line each; ends at end of input.
enum RideCommandInput {
    static func lines(_ port: FileDescriptorPort) -> AsyncStream<String> {
        AsyncStream { continuation in
            let task = Task {
                var pending: [UInt8] = []
                while let chunk = await port.read() {
                    pending += chunk
                    while let end = pending.firstIndex(where: { $0 == 0x0A || $0 == 0x0D }) {
                        let line = String(decoding: pending[..<end], as: UTF8.self)
                        pending.removeSubrange(...end)
                        if !line.isEmpty { continuation.yield(line) }
                    }
                    // A line without an end is kept, up to 1 KB (a command is a few words).
                    if pending.count > 1024 { pending.removeAll() }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in
                task.cancel()
                port.stop()
            }
        }
    }
}
