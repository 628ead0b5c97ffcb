import ArgumentParser
import Bluetide
import BluetideGPIO
import BluetideProfiles
import BluetideReflexDevice
import BluetideGateway
import Foundation
import Synchronization

/// `bluetide reflex …`: the boxing reflex trainer (reflex-trainer.md): `device` runs the trainer,
/// `coach` keeps athletes and sequences, runs sessions and shows history.
struct ReflexCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reflex",
        abstract: "The boxing reflex trainer: the device daemon and the coach.",
        subcommands: [ReflexDeviceCommand.self, ReflexCoachCommand.self])
}

/// `bluetide reflex device`: serves the Punch service and drives the six targets.
struct ReflexDeviceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device",
        abstract: "Run the reflex trainer device: Punch service over BLE, targets on GPIO or simulated.",
        discussion: """
            Advertises Reflex-XXXX (or the configured name) with the Punch service, accepts coaches and runs the sequences they write: each step lights the target's LED until its sensor fires or the step's time is up, then notifies a PunchResponse. When the last coach disconnects during a run, the run stops and the LEDs go off; the device keeps running.

            One line is printed per coach connect/disconnect, sequence received, run start/finish and step result.

            The GPIO configuration file (docs/gpio-config.md) gives the backend, chip, line map, debounce and device name; without one, the default map is used. Exit status 2 on a bad configuration, with the line and key at fault.

            Examples:
              bluetide reflex device --gpio sim
              bluetide reflex device --config /etc/reflex.conf --transport hci-socket:0
              bluetide reflex device --gpio sim --transport bluez   # beside bluetoothd
              bluetide reflex device --gpio sim --transport tcp-client:127.0.0.1:9000 \\
                  --duration 60

            With --mqtt URL every record (as --json prints it) is also published on bluetide/app/reflex-device/<type>, each punch as a step record, and a session record (steps, hits, misses, wrongTargets, meanReactionMilliseconds, bestReactionMilliseconds, ending) when a run finishes or stops; see docs/gateway.md.
            """)

    @Option(name: .long, help: "GPIO configuration file (docs/gpio-config.md).")
    var config: String?

    @Option(name: .long, help: "GPIO backend: sim (simulated athlete) or linux (/dev/gpiochipN); overrides the file.")
    var gpio: String?

    @Option(name: .long, help: "Transport: virtual[:NAME], tcp-client:HOST:PORT, serial:DEV, hci-socket:N, bluez[:hciN] (beside the system's Bluetooth), …")
    var transport: String = "virtual"

    @Option(name: .long, help: "Advertised name (default: the file's device-name, else Reflex-XXXX).")
    var name: String?

    @Option(name: .long, help: "Stop after this many seconds (default: run until interrupted).")
    var duration: Double?

    @OptionGroup var output: CoachOutputOptions

    @OptionGroup var broker: MQTTPublishOptions

    /// The configuration the options and the file give.
    func resolvedOptions() throws -> ReflexDeviceOptions {
        var configuration = GPIOConfiguration.reflexDefault
        if let config {
            do { configuration = try GPIOConfiguration.load(path: config) } catch {
                throw CommandFailure.usage("\(config): \(error)", field: "--config")
            }
        }
        if let gpio {
            guard let kind = GPIOBackendKind(rawValue: gpio) else {
                throw CommandFailure("--gpio \(gpio): expected sim or linux")
            }
            configuration.backend = kind
        }
        if let name {
            let bytes = name.utf8.count
            guard bytes >= 1, bytes <= GPIOConfiguration.maxDeviceNameBytes else {
                throw CommandFailure("--name \"\(name)\": expected 1…\(GPIOConfiguration.maxDeviceNameBytes) UTF-8 bytes")
            }
        }
        if let duration, !(duration > 0 && duration.isFinite) {
            throw CommandFailure("--duration \(duration): expected seconds > 0")
        }
        return ReflexDeviceOptions(configuration: configuration, name: name)
    }

    func run() async throws {
        // Unbuffered, so a pipe sees each line as it happens.
        let printer = output
        try await servePublishing(until: Self.interruptions()) { printer.emit([$0]) }
    }

    /// Runs the device as ``run()`` does, each event's output to `emit`, and with `--mqtt` each
    /// record (and each run's `session` summary) to the broker.
    func servePublishing(until interrupts: AsyncStream<Int32>, emit: @escaping @Sendable (CoachOutput) -> Void) async throws {
        try broker.validate(app: "reflex-device")
        _ = try resolvedOptions()
        let publisher = try await broker.connect(app: "reflex-device")
        let tally = ReflexRunTally()
        do {
            try await serveEvents(until: interrupts, events: { event in
                let output = Self.record(of: event)
                emit(output)
                guard let publisher else { return }
                publisher.publish(output)
                if let session = tally.add(event) { publisher.publish(session, type: "session") }
            })
        } catch {
            await publisher?.finishReporting()
            throw error
        }
        if let publisher, let problem = await publisher.finishReporting() { throw CommandFailure(problem) }
    }

    /// An event as its line and its record (docs/json-output.md, `reflex device`): the record
    /// carries the event's fields, not its line.
    static func record(of event: ReflexDeviceEvent) -> CoachOutput {
        let line = event.line
        switch event {
        case let .started(name, address):
            return CoachOutput(line, type: "advertising", ["device": JSONOutput.device(address, name: name)])
        case let .coachConnected(address):
            return CoachOutput(line, type: "coach-connected", ["peer": JSONOutput.device(address)])
        case let .coachDisconnected(address, stopped):
            return CoachOutput(line, type: "coach-disconnected", ["peer": JSONOutput.device(address), "runStopped": .bool(stopped)])
        case let .sequenceReceived(sequence):
            return CoachOutput(line, type: "sequence-received", ["targets": .array(sequence.targets.map { .integer(Int64($0)) })])
        case let .timeSequenceReceived(times):
            return CoachOutput(line, type: "time-sequence-received", ["timesMilliseconds": .array(times.milliseconds.map { .integer(Int64($0)) })])
        case let .command(command):
            return CoachOutput(line, type: "command", ["command": .string(command.summary)])
        case let .status(status):
            var fields: [String: JSONOutputValue] = ["status": .string(status.summary)]
            if case let .finished(steps) = status { fields["steps"] = .integer(Int64(steps)) }
            return CoachOutput(line, type: "status", fields)
        case let .response(response):
            return CoachOutput(line, type: "step", [
                "step": response.step.map { .integer(Int64($0)) } ?? .null, "target": .integer(Int64(response.target)), "hit": .bool(response.hit),
                "wrongTarget": .bool(response.wrongTargetFirst),
                "reactionMilliseconds": response.hit ? .integer(Int64(response.reactionTimeMilliseconds)) : .null,
            ])
        }
    }

    /// Runs the device until `--duration` is up or `interrupts` yields, handing each event's
    /// line to `output`.
    func serve(until interrupts: AsyncStream<Int32>, output: @escaping @Sendable (String) -> Void) async throws {
        try await serveEvents(until: interrupts, events: { output($0.line) })
    }

    /// Runs the device until `--duration` is up or `interrupts` yields, handing each event to `events`.
    func serveEvents(until interrupts: AsyncStream<Int32>, events output: @escaping @Sendable (ReflexDeviceEvent) -> Void) async throws {
        let options = try resolvedOptions()
        // The controller's own address: the device keeps its name (Reflex-XXXX) from run to run.
        let configuration = Bluetooth.Configuration(
            deviceName: options.name ?? options.configuration.deviceName ?? "Reflex", usesControllerAddress: true)
        let bluetooth: Bluetooth
        do { bluetooth = try await Bluetooth.open(transport: transport, configuration: configuration) } catch let error as BluetideError {
            if case .transportUnavailable(_, let reason) = error, !reason.hasPrefix("the controller did not start") {
                throw CommandFailure("--transport \(transport): \(reason)")
            }
            throw CommandFailure("cannot start the Bluetooth host on \(transport): \(error)")
        }
        let device: ReflexDevice<ContinuousClock>
        do {
            device = try await ReflexDevice.start(bluetooth: bluetooth, options: options, clock: ContinuousClock())
        } catch let error as GPIOError {
            await bluetooth.close()
            throw CommandFailure("\(error)")
        } catch {
            await bluetooth.close()
            throw CommandFailure("cannot start the device: \(error)")
        }
        let printer = Task {
            for await event in device.events { output(event) }
        }
        // Until the duration is up or SIGINT/SIGTERM arrives, unless the controller goes away
        // first (exit 2 with one line); then LEDs off and lines released.
        let controllerGone = await withTaskGroup(of: BluetideError?.self) { group in
            group.addTask {
                if let duration { try? await Task.sleep(for: .seconds(duration)) } else {
                    while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
                }
                return nil
            }
            group.addTask {
                var iterator = interrupts.makeAsyncIterator()
                _ = await iterator.next()
                return nil
            }
            group.addTask { await bluetooth.waitUntilClosed() }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        await device.stop()
        await printer.value
        await bluetooth.close()
        if let controllerGone {
            throw CommandFailure("the controller on \(transport) went away (\(controllerGone)); restart it, then run bluetide reflex device again")
        }
    }

    /// SIGINT and SIGTERM, delivered as stream elements instead of ending the process.
    static func interruptions() -> AsyncStream<Int32> {
        AsyncStream { continuation in
            let sources = SignalSources([SIGINT, SIGTERM].map { number in
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { continuation.yield(number) }
                source.resume()
                return source
            })
            continuation.onTermination = { _ in sources.cancel() }
        }
    }
}

/// Keeps the signal sources alive until the stream ends.
// @unchecked Sendable: `sources` is a `let` never mutated after init, and
// `DispatchSource.cancel()` may be called from any thread (Dispatch documents it as thread-safe).
private final class SignalSources: @unchecked Sendable {
    let sources: [any DispatchSourceSignal]
    init(_ sources: [any DispatchSourceSignal]) { self.sources = sources }
    func cancel() { for source in sources { source.cancel() } }
}

/// The punches of one run on the device, summed up for the `session` record `--mqtt` publishes
/// when the run finishes or stops. One owner of its state (a lock): the event printer.
final class ReflexRunTally: Sendable {
    private struct State {
        var steps = 0, hits = 0, misses = 0, wrongTargets = 0
        var reactionTotal = 0, best: Int?
    }
    private let state = Mutex(State())

    /// Counts `event`; returns the `session` record when it ends a run (nil otherwise).
    func add(_ event: ReflexDeviceEvent) -> String? {
        state.withLock { state in
            switch event {
            case let .response(response):
                state.steps += 1
                if response.hit {
                    state.hits += 1
                    let ms = Int(response.reactionTimeMilliseconds)
                    state.reactionTotal += ms
                    state.best = min(state.best ?? ms, ms)
                } else {
                    state.misses += 1
                }
                if response.wrongTargetFirst { state.wrongTargets += 1 }
                return nil
            case .status(.finished), .status(.stopped), .coachDisconnected(_, stoppedRun: true):
                guard state.steps > 0 else { return nil }
                let ending: String = if case .status(.finished) = event { "finished" } else { "stopped" }
                let record = JSONOutput.line("session", [
                    "steps": .integer(Int64(state.steps)), "hits": .integer(Int64(state.hits)), "misses": .integer(Int64(state.misses)),
                    "wrongTargets": .integer(Int64(state.wrongTargets)), "ending": .string(ending),
                    "meanReactionMilliseconds": state.hits > 0 ? .number(Double(state.reactionTotal) / Double(state.hits)) : .null,
                    "bestReactionMilliseconds": state.best.map { .integer(Int64($0)) } ?? .null,
                ])
                state = State()
                return record
            case .sequenceReceived, .timeSequenceReceived:
                state = State()
                return nil
            default:
                return nil
            }
        }
    }
}
