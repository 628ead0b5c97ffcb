import ArgumentParser
import Bluetide
import BluetideBase
import BluetideEmulation
import BluetideDeviceModels
import BluetideProfiles
import BluetideReflex
import BluetideReflexCoach
import BluetideReflexEmulation
import BluetideReflexWeb
import BluetideSupport
import BluetideTransport
import BluetideGateway
import Foundation

// MARK: run

/// `run`: a live session on a trainer (or an emulated one).
struct ReflexCoachRun: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run", abstract: "Run a saved sequence on a trainer and store the results live (Ctrl-C stops, keeping what arrived).")
    @OptionGroup var database: CoachDatabaseOptions
    @Option(name: .long, help: "Athlete name.") var athlete: String
    @Option(name: .long, help: "Saved sequence name.") var sequence: String
    @Option(name: .long, help: "Trainer name or address (default: strongest signal).") var device: String?
    @Option(name: .long, help: "Controller transport: \(TransportSpec.syntaxSummary)") var transport: String = "virtual"
    @Flag(name: .long, help: "Start an emulated punch trainer on the same virtual link (hardware-free).") var emulate = false
    @Option(name: .long, help: "Start after a countdown of this many seconds.") var countdown: UInt8?
    @Option(name: .long, help: "Seconds to look for the trainer (--scan-seconds, its old name, still works).") var timeout: Double = 30
    /// `--scan-seconds`, the old name of `--timeout` (hidden, deprecated).
    @Option(name: .customLong("scan-seconds"), help: .hidden) var deprecatedScanSeconds: Double?
    /// Seconds to look for the trainer.
    var scanSeconds: Double { deprecatedScanSeconds ?? timeout }
    @OptionGroup var output: CoachOutputOptions
    @OptionGroup var broker: MQTTPublishOptions

    func run() async throws {
        let printer = output
        let outcome: Ending?
        // BLUETIDE_VIRTUAL_TIME=1 with --emulate: the whole session in virtual time (VirtualTimeOption).
        if let manual = VirtualTimeOption.clock(emulated: emulate && VirtualLinkSpec.namesVirtualRadio(transport)) {
            let command = self
            outcome = try await manual.advancing { try await command.runPublishing(clock: BluetideClock(manual)) { printer.emit([$0]) } }
        } else {
            outcome = try await runPublishing { printer.emit([$0]) }
        }
        if let interruption = outcome?.interruption, let number = StopSignal.signals.first(where: { $0.name == interruption })?.number {
            // Stopped by a signal: the session was ended and stored; the exit status says so (128 + its number).
            throw ExitCode(128 + number)
        }
        if let session = outcome?.session, let failure = session.failure {
            // The session is stored as incomplete with this reason; the run failed (exit 1).
            throw CommandFailure(
                "session \(session.sessionID) ended incomplete: \(failure) (\(session.stepsStored) of \(session.stepCount) step results stored)")
        }
    }

    /// ``runSession(clock:emit:)``, and with `--mqtt` every record also to the broker (exit 1 when
    /// the broker did not get them all).
    @discardableResult
    func runPublishing(clock: BluetideClock = .continuous, emit: @escaping @Sendable (CoachOutput) -> Void) async throws -> Ending? {
        try broker.validate(app: "reflex-coach")
        let publisher = try await broker.connect(app: "reflex-coach")
        let outcome: Ending?
        do {
            outcome = try await runSession(clock: clock, emit: { output in
                emit(output)
                publisher?.publish(output)
            })
        } catch {
            await publisher?.finishReporting()
            throw error
        }
        if let publisher, let problem = await publisher.finishReporting() { throw CommandFailure(problem) }
        return outcome
    }

    /// How a run ended, for the exit status.
    struct Ending: Sendable {
        /// The session's outcome (nil when the run was stopped before a session existed).
        var session: CoachSessionOutcome?
        /// The signal that stopped the run (`SIGINT`, `SIGTERM`), nil when it ended by itself.
        var interruption: String?
    }

    /// Runs the session, handing each line to `output`. SIGINT and SIGTERM stop the run the
    /// orderly way: the trainer is told, the session is stored with its end and the signal as
    /// its reason, and the summary is printed. With `--emulate`, the emulated world and the
    /// coach's waits run on `clock` (a test's manual clock runs the session in virtual time).
    @discardableResult
    func session(clock: BluetideClock = .continuous, output: @escaping @Sendable (String) -> Void) async throws -> Ending? {
        try await runSession(clock: clock, emit: { for line in $0.lines { output(line) } })
    }

    /// ``session(clock:output:)`` with each report as text and record (for `--json`).
    @discardableResult
    func runSession(clock: BluetideClock = .continuous, emit: @escaping @Sendable (CoachOutput) -> Void) async throws -> Ending? {
        guard scanSeconds > 0, scanSeconds <= 300 else { throw CommandFailure("--timeout \(scanSeconds): expected 0 < s ≤ 300") }
        let store = try database.open()
        var run = CoachLiveRun(athleteName: athlete, sequenceName: sequence)
        run.trainer = TrainerChoice(parsing: device)
        run.transport = transport
        run.emulate = emulate
        run.scanTimeout = .milliseconds(Int64(scanSeconds * 1000))
        run.countdownSeconds = countdown
        if let warning = CoachTransportWarning.line(transport: transport, emulate: emulate) { appLogger.warning("\(warning)") }
        let signals = StopSignal.install()
        let ending: CoachRunEnding
        do {
            ending = try await run.run(
                store: store, clock: clock, stopWhen: { await signals.wait() },
                message: { emit(CoachJSON.message($0)) }, report: { emit(CoachJSON.event($0)) })
        } catch {
            throw CoachCLI.failure(error)
        }
        let outcome = ending.outcome
        if let outcome, let overall = ending.summary {
            emit(CoachOutput("summary: " + CoachCLI.summaryLine(overall), type: "summary",
                             ["sessionId": .integer(outcome.sessionID), "summary": CoachJSON.summary(overall)]))
        }
        if let reason = ending.stopReason {
            emit(CoachOutput("interrupted (\(reason))" + (outcome.map { ": session \($0.sessionID) stored as incomplete" } ?? ""),
                             type: "interrupted", ["signal": .string(reason), "sessionId": outcome.map { .integer($0.sessionID) } ?? .null]))
        }
        return Ending(session: outcome, interruption: ending.stopReason)
    }
}
