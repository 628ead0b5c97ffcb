import ArgumentParser
import Bluetide
import BluetideGPIO
import BluetideProfiles
import BluetideReflexDevice
import BluetideSupport
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

            The GPIO configuration file (docs/gpio-config.md) gives the backend, chip, line map, debounce and device name; without one, the default map is used. Exit status 2 on a bad configuration, with the line and key at fault. Ctrl-C or SIGTERM stops it the orderly way (LEDs off, lines released), with exit status 130 after Ctrl-C and 143 after SIGTERM.

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
        // Ctrl-C, SIGTERM or SIGHUP ends the run the orderly way (LEDs off, lines released), then
        // exits 130 after Ctrl-C, as every command does (docs/json-output.md).
        let stop = StopSignal.install()
        let (interrupts, interrupt) = AsyncStream.makeStream(of: Int32.self)
        let waiter = Task { () -> String? in
            let reason = await stop.wait()
            guard !Task.isCancelled else { return nil }
            interrupt.yield(SIGINT)
            return reason
        }
        do {
            try await servePublishing(until: interrupts) { printer.emit([$0]) }
        } catch {
            waiter.cancel()
            throw error
        }
        waiter.cancel()
        // SIGINT exits 130 through StopSignal.wasInterrupted; SIGTERM and SIGHUP say so too (128 + n).
        switch await waiter.value {
        case "SIGTERM": throw ExitCode(128 + SIGTERM)
        case "SIGHUP": throw ExitCode(128 + SIGHUP)
        default: break
        }
    }

    /// Runs the device as ``run()`` does, each event's output to `emit`, and with `--mqtt` each
    /// record (and each run's `session` summary) to the broker.
    func servePublishing(until interrupts: AsyncStream<Int32>, emit: @escaping @Sendable (CoachOutput) -> Void) async throws {
        try broker.validate(app: "reflex-device")
        _ = try resolvedOptions()
        let publisher = try await broker.connect(app: "reflex-device")
        let tally = Mutex(ReflexDeviceTally())
        do {
            try await serveEvents(until: interrupts, events: { event in
                let output = Self.record(of: event)
                emit(output)
                guard let publisher else { return }
                publisher.publish(output)
                if let summary = tally.withLock({ $0.add(event) }) { publisher.publish(Self.sessionRecord(summary), type: "session") }
            })
        } catch {
            await publisher?.finishReporting()
            throw error
        }
        if let publisher, let problem = await publisher.finishReporting() { throw CommandFailure(problem) }
    }

    /// A run's summary as its `session` record (docs/json-output.md, `reflex device --mqtt`).
    static func sessionRecord(_ summary: ReflexDeviceTally.Summary) -> String {
        JSONOutput.line("session", [
            "steps": .integer(Int64(summary.steps)), "hits": .integer(Int64(summary.hits)), "misses": .integer(Int64(summary.misses)),
            "wrongTargets": .integer(Int64(summary.wrongTargets)), "ending": .string(summary.finished ? "finished" : "stopped"),
            "meanReactionMilliseconds": summary.meanReactionMilliseconds.map { .number($0) } ?? .null,
            "bestReactionMilliseconds": summary.bestReactionMilliseconds.map { .integer(Int64($0)) } ?? .null,
        ])
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
    func serve(
        until interrupts: AsyncStream<Int32>, clock: BluetideClock = .continuous, output: @escaping @Sendable (String) -> Void
    ) async throws {
        try await serveEvents(until: interrupts, clock: clock, events: { output($0.line) })
    }

    /// Runs the device until `--duration` is up or `interrupts` yields, handing each event to
    /// `events` (``ReflexDeviceRun``; its errors as the command's one-line failures).
    func serveEvents(
        until interrupts: AsyncStream<Int32>, clock: BluetideClock = .continuous,
        events output: @escaping @Sendable (ReflexDeviceEvent) -> Void
    ) async throws {
        let run = ReflexDeviceRun(transport: transport, options: try resolvedOptions(), duration: duration.map { .seconds($0) })
        do {
            _ = try await run.run(clock: clock, stopWhen: {
                var iterator = interrupts.makeAsyncIterator()
                _ = await iterator.next()
            }, events: output)
        } catch {
            throw Self.failure(error, transport: transport)
        }
    }

    /// A run's error as the command's one line: what failed, and what to try.
    static func failure(_ error: ReflexDeviceRunError, transport: String) -> CommandFailure {
        switch error {
        case let .cannotOpen(_, cause):
            if case let .transportUnavailable(_, reason) = cause as? BluetideError, !reason.hasPrefix("the controller did not start") {
                return CommandFailure("--transport \(transport): \(reason)")
            }
            return CommandFailure(error.description)
        case .controllerGone:
            return CommandFailure("\(error); restart it, then run bluetide reflex device again")
        case .gpio, .cannotStart:
            return CommandFailure(error.description)
        }
    }
}

