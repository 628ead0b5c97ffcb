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
import BluetideTransport
import BluetideGateway
import Foundation

/// `bluetide reflex coach …`: the coach side of the reflex trainer (athletes, sequences, live
/// sessions, history, CSV and SVG). To be registered under `ReflexCommand` as `coach`.
public struct ReflexCoachCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "coach",
        abstract: "Reflex trainer coach: athletes, saved sequences, live sessions, history, CSV export and charts.",
        discussion: """
            Examples:
              bluetide reflex coach athletes add "Ana Ruiz" --birth-date 2004-05-17 \\
                  --sex female
              bluetide reflex coach sequences save Jab --targets 0,3,5,1 --times 900
              bluetide reflex coach run --athlete "Ana Ruiz" --sequence Jab --emulate
              bluetide reflex coach history --athlete "Ana Ruiz"
              bluetide reflex coach serve --emulate (then open http://localhost:8080)
            """,
        subcommands: ReflexCoachCommand.subcommandTypes)

    /// The subcommands.
    static let subcommandTypes: [any ParsableCommand.Type] = [
        ReflexCoachAthletes.self, ReflexCoachSequences.self, ReflexCoachRun.self, ReflexCoachHistory.self,
        ReflexCoachExport.self, ReflexCoachChart.self, ReflexCoachServe.self, ReflexCoachPassword.self,
        ReflexCoachSession.self, ReflexCoachBoard.self, ReflexCoachProgress.self,
    ]

    /// For the lead: add this to `ReflexCommand`'s subcommands at merge.
    public static let coachSubcommand = ReflexCoachCommand.self

    public init() {}
}

/// `--db PATH`, shared by every coach command.
struct CoachDatabaseOptions: ParsableArguments {
    @Option(name: .long, help: "Coach database file (default: \(CoachStore.defaultPath())).")
    var db: String?

    func open() throws -> CoachStore {
        let path = db ?? CoachStore.defaultPath()
        do { return try CoachStore(path: path) } catch let error as CoachStoreError { throw CommandFailure(error.description) } catch {
            throw CommandFailure("cannot open the coach database \(path): \(error)")
        }
    }
}

/// Shared helpers of the coach commands.
enum CoachCLI {
    /// The athlete called `name`, or a failure listing who exists (``AthleteLookup``).
    static func athlete(_ name: String, in store: CoachStore) throws -> Athlete {
        try input { try AthleteLookup.athlete(name, in: store) }
    }

    /// Runs a library parse or lookup; its ``CoachInputError`` becomes a failure with the same
    /// line (a message that leads with the option is bad input, exit 2; an unknown athlete exit 1).
    static func input<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as CoachInputError { throw CommandFailure(error.description) }
    }

    /// `value` with `digits` decimals, rounded half away from zero like the dashboard, its charts
    /// and the CSV (62.5 % is 63 % everywhere).
    static func fixed(_ value: Double, digits: Int) -> String {
        let scale = Foundation.pow(10, Double(max(0, digits)))
        return String(format: "%.\(max(0, digits))f", (value * scale).rounded(.toNearestOrAwayFromZero) / scale)
    }

    static func milliseconds(_ value: Double?) -> String {
        value.map { CoachCLI.fixed($0, digits: 0) + " ms" } ?? "-"
    }

    static func percent(_ value: Double?) -> String {
        value.map { CoachCLI.fixed($0 * 100, digits: 0) + " %" } ?? "-"
    }

    static func summaryLine(_ s: ReactionSummary) -> String {
        "\(s.hits)/\(s.count) hit (\(percent(s.hitRate))), mean \(milliseconds(s.meanMilliseconds)), median \(milliseconds(s.medianMilliseconds)), best \(milliseconds(s.bestMilliseconds))"
    }

    static func dateText(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }

    static func write(_ text: String, to path: String) throws {
        do { try Data(text.utf8).write(to: URL(fileURLWithPath: path)) } catch {
            throw CommandFailure("cannot write \(path): \(error.localizedDescription)")
        }
    }

    /// The value `rule` (one of ``InputRules``, shared with the dashboard) makes of what was given
    /// for `field` (`--date`, `NAME`), or a usage failure naming the field.
    static func checked<T>(_ field: String, _ rule: () throws(InputProblem) -> T) throws -> T {
        do { return try rule() } catch { throw CommandFailure.usage("\(field): \(error)", field: field) }
    }

    /// Maps store errors to exit-2 failures with the store's words.
    /// Runs a store call; a refusal of what the user typed (a bad sequence, name, weight or
    /// interval) is bad input (exit 2), anything else a runtime failure (exit 1).
    static func failing<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as CoachStoreError {
            switch error {
            case .emptyName, .invalidSequence, .invalidText, .invalidMaxInterval, .invalidWeight:
                throw CommandFailure.usage(error.description)
            default:
                throw CommandFailure(error.description)
            }
        }
    }
}

// MARK: athletes

/// `athletes add|list|show|weight`.
struct ReflexCoachAthletes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "athletes", abstract: "Add, list and show athletes; record weigh-ins.",
        subcommands: [Add.self, List.self, Show.self, Weight.self, Strap.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Add an athlete.")
        @OptionGroup var database: CoachDatabaseOptions
        @Argument(help: "Name.") var name: String
        @Option(name: .long, help: "Birth date YYYY-MM-DD, 1900-2100.") var birthDate: String?
        @Option(name: .long, help: "Sex as you record it (free text).") var sex: String?
        @Option(name: .long, help: "orthodox, southpaw or switch.") var stance: String = "orthodox"
        @Option(name: .long, help: "Notes.") var notes: String = ""
        @OptionGroup var output: CoachOutputOptions

        func outputs(now: Date = Date()) throws -> [CoachOutput] {
            let name = try CoachCLI.checked("NAME") { () throws(InputProblem) in try InputRules.name(self.name) }
            let birth = try birthDate.map { text in try CoachCLI.checked("--birth-date") { () throws(InputProblem) in try InputRules.date(text) } }
            let sex = try self.sex.map { text in
                try CoachCLI.checked("--sex") { () throws(InputProblem) in try InputRules.text(text, maximum: InputRules.maximumSexLength) }
            }
            let notes = try CoachCLI.checked("--notes") { () throws(InputProblem) in
                try InputRules.text(self.notes, maximum: InputRules.maximumNotesLength, lineBreaks: true)
            }
            guard let stanceValue = Stance(rawValue: stance) else {
                throw CommandFailure("--stance \"\(stance)\": expected orthodox, southpaw or switch")
            }
            let store = try database.open()
            let added = try CoachCLI.failing {
                try CoachCLI.input { try AthleteRoster.add(Athlete(name: name, birthDate: birth, sex: sex, stance: stanceValue, notes: notes, created: now), to: store) }
            }
            return [CoachOutput("added athlete \(added.id ?? -1): \(added.name)", type: "athlete-added", ["athlete": CoachJSON.athlete(added)])]
        }
        func lines(now: Date = Date()) throws -> [String] { try outputs(now: now).flatMap(\.lines) }
        func run() async throws { output.emit(try outputs()) }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List athletes.")
        @OptionGroup var database: CoachDatabaseOptions
        @OptionGroup var output: CoachOutputOptions
        func outputs() throws -> [CoachOutput] {
            let entries = try AthleteRoster.list(in: try database.open())
            if entries.isEmpty { return [CoachOutput("no athletes", type: nil)] }
            return entries.map { entry in
                let (athlete, count) = (entry.athlete, entry.sessions)
                return CoachOutput("\(athlete.id ?? -1)\t\(athlete.name)\t\(count) session\(count == 1 ? "" : "s")", type: "athlete",
                                   ["athlete": CoachJSON.athlete(athlete), "sessions": .integer(Int64(count))])
            }
        }
        func lines() throws -> [String] { try outputs().flatMap(\.lines) }
        func run() async throws { output.emit(try outputs()) }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Show an athlete's data and weight history.")
        @OptionGroup var database: CoachDatabaseOptions
        @Argument(help: "Name.") var name: String
        @OptionGroup var output: CoachOutputOptions
        func outputs() throws -> [CoachOutput] {
            let store = try database.open()
            let profile = try CoachCLI.failing { try CoachCLI.input { try AthleteRoster.profile(name, in: store) } }
            let (athlete, weights, sessionCount, strap) = (profile.athlete, profile.weights, profile.sessions, profile.strap)
            var lines = [
                "name: \(athlete.name)", "birth date: \(athlete.birthDate?.description ?? "-")", "sex: \(athlete.sex ?? "-")",
                "stance: \(athlete.stance.rawValue)", "notes: \(athlete.notes.isEmpty ? "-" : athlete.notes)",
            ]
            lines.append("weights: \(weights.isEmpty ? "-" : "")")
            for w in weights { lines.append("  \(w.date)  \(CoachCLI.fixed(w.kilograms, digits: 1)) kg") }
            lines.append("sessions: \(sessionCount)")
            lines.append("heart-rate strap: \(strap ?? "-")")
            return [CoachOutput(lines, type: "athlete", [
                "athlete": CoachJSON.athlete(athlete), "sessions": .integer(Int64(sessionCount)),
                "weights": .array(weights.map { ["date": .string($0.date.iso), "weightKilograms": .number($0.kilograms)] }),
                "strap": CoachJSON.optional(strap),
            ])]
        }
        func lines() throws -> [String] { try outputs().flatMap(\.lines) }
        func run() async throws { output.emit(try outputs()) }
    }

    struct Weight: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "weight", abstract: "Record a weigh-in (kg).")
        @OptionGroup var database: CoachDatabaseOptions
        @Argument(help: "Name.") var name: String
        @Argument(help: "Kilograms as a decimal number, e.g. 63.5 (above 0, below 500).") var kilograms: String
        @Option(name: .long, help: "Day YYYY-MM-DD, 1900-2100 (default today, UTC).") var date: String?
        @OptionGroup var output: CoachOutputOptions
        func outputs(now: Date = Date()) throws -> [CoachOutput] {
            let kilograms = try CoachCLI.checked("KILOGRAMS") { () throws(InputProblem) in try InputRules.kilograms(self.kilograms) }
            let day = try date.map { text in try CoachCLI.checked("--date") { () throws(InputProblem) in try InputRules.date(text) } }
                ?? CalendarDate(utcDayOf: now)
            let store = try database.open()
            let (athlete, entry) = try CoachCLI.failing {
                try CoachCLI.input { try AthleteRoster.recordWeight(name, kilograms: kilograms, on: day, in: store) }
            }
            return [CoachOutput("\(athlete.name): \(CoachCLI.fixed(entry.kilograms, digits: 1)) kg on \(entry.date)", type: "weight-recorded", [
                "athlete": CoachJSON.athlete(athlete), "date": .string(entry.date.iso), "weightKilograms": .number(entry.kilograms),
            ])]
        }
        func lines(now: Date = Date()) throws -> [String] { try outputs(now: now).flatMap(\.lines) }
        func run() async throws { output.emit(try outputs()) }
    }
}

extension ReflexCoachAthletes {
    /// `athletes strap NAME DEVICE`: pairs a heart-rate strap to an athlete once.
    struct Strap: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "strap",
            abstract: "Pair a heart-rate strap to an athlete (by its name or address); its heart rate is then stored beside each punch.",
            discussion: """
                Every run of the athlete (run, session, the dashboard) connects the strap beside the
                trainer; a strap that cannot be found leaves the heart rate out and the run goes on.

                Examples:
                  bluetide reflex coach athletes strap "Ana Ruiz" Strap-1
                  bluetide reflex coach athletes strap "Ana Ruiz" --remove
                """)
        @OptionGroup var database: CoachDatabaseOptions
        @Argument(help: "Athlete name.") var name: String
        @Argument(help: "The strap's advertised name or address (C6:C5:C4:C3:C2:C1).") var device: String?
        @Flag(name: .long, help: "Forget the athlete's strap.") var remove = false
        @OptionGroup var output: CoachOutputOptions

        func outputs() throws -> [CoachOutput] {
            guard remove != (device != nil) else {
                throw CommandFailure.usage("DEVICE: give the strap's name or address, or --remove (not both)", field: "DEVICE")
            }
            let store = try database.open()
            if remove {
                let (athlete, removed) = try CoachCLI.failing { try CoachCLI.input { try AthleteRoster.removeStrap(name, in: store) } }
                return [CoachOutput(removed ? "\(athlete.name): strap forgotten" : "\(athlete.name) had no strap", type: "strap-removed",
                                    ["athlete": CoachJSON.athlete(athlete), "removed": .bool(removed)])]
            }
            let text = try CoachCLI.checked("DEVICE") { () throws(InputProblem) in try InputRules.name(device ?? "") }
            let athlete = try CoachCLI.failing { try CoachCLI.input { try AthleteRoster.pairStrap(name, device: text, in: store) } }
            return [CoachOutput("\(athlete.name): heart-rate strap \(text)", type: "strap-paired",
                                ["athlete": CoachJSON.athlete(athlete), "strap": .string(text)])]
        }
        func lines() throws -> [String] { try outputs().flatMap(\.lines) }
        func run() async throws { output.emit(try outputs()) }
    }
}

// MARK: sequences

/// `sequences save|list|random`.
struct ReflexCoachSequences: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sequences", abstract: "Save, list and generate target sequences.",
        subcommands: [Save.self, List.self, Random.self])

    struct Save: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "save", abstract: "Save a sequence by name (replaces one of the same name).")
        @OptionGroup var database: CoachDatabaseOptions
        @Argument(help: "Name.") var name: String
        @Option(name: .long, help: "Targets 0-5, comma separated, e.g. 0,3,5,1.") var targets: String
        @Option(name: .long, help: "Milliseconds lit: one value for all steps or one per step.") var times: String
        @Option(name: .long, help: "Maximum interval between punches, ms.") var maxInterval: Int?
        @OptionGroup var output: CoachOutputOptions
        func outputs(now: Date = Date()) throws -> [CoachOutput] {
            let (targetList, timeList) = try CoachCLI.input { () throws -> ([UInt8], [UInt16]) in
                let targetList = try SequenceInput.targets(targets)
                return (targetList, try SequenceInput.times(times, steps: targetList.count))
            }
            let store = try database.open()
            let saved = try CoachCLI.failing {
                try store.saveSequence(name: name, targets: targetList, milliseconds: timeList, maxIntervalMilliseconds: maxInterval, at: now)
            }
            return [CoachOutput("saved sequence \"\(saved.name)\": \(saved.targets.count) steps", type: "sequence-saved", [
                "sequence": CoachJSON.sequence(name: saved.name, targets: saved.targets, milliseconds: saved.milliseconds,
                                               maxInterval: saved.maxIntervalMilliseconds),
            ])]
        }
        func lines(now: Date = Date()) throws -> [String] { try outputs(now: now).flatMap(\.lines) }
        func run() async throws { output.emit(try outputs()) }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List saved sequences.")
        @OptionGroup var database: CoachDatabaseOptions
        @OptionGroup var output: CoachOutputOptions
        func outputs() throws -> [CoachOutput] {
            let sequences = try database.open().sequences()
            if sequences.isEmpty { return [CoachOutput("no sequences", type: nil)] }
            return sequences.map { s in
                let total = s.milliseconds.reduce(0) { $0 + Int($1) }
                return CoachOutput(
                    "\(s.name)\t\(s.targets.count) steps\ttargets \(s.targets.map(String.init).joined(separator: ","))\t\(CoachCLI.fixed(Double(total) / 1000, digits: 1)) s max",
                    type: "sequence", ["sequence": CoachJSON.sequence(name: s.name, targets: s.targets, milliseconds: s.milliseconds,
                                                                      maxInterval: s.maxIntervalMilliseconds)])
            }
        }
        func lines() throws -> [String] { try outputs().flatMap(\.lines) }
        func run() async throws { output.emit(try outputs()) }
    }

    struct Random: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "random", abstract: "Generate a random sequence and save it by name.")
        @OptionGroup var database: CoachDatabaseOptions
        @Argument(help: "Name to save it under.") var name: String
        @Option(name: .long, help: "Steps 1-\(PunchSequence.maxSteps) (a trainer holds at most \(PunchSequence.maxSteps)).") var steps: Int = 20
        @Option(name: .long, help: "Targets to choose from.") var targets: String = "0,1,2,3,4,5"
        @Option(name: .long, help: "Shortest time lit, ms.") var minTime: UInt16 = 800
        @Option(name: .long, help: "Longest time lit, ms.") var maxTime: UInt16 = 2000
        @Option(name: .long, help: "Seed (default random).") var seed: UInt64?
        @OptionGroup var output: CoachOutputOptions
        func outputs(now: Date = Date()) throws -> [CoachOutput] {
            guard (1...PunchSequence.maxSteps).contains(steps) else {
                throw CommandFailure.usage(
                    "--steps \(steps): expected 1 to \(PunchSequence.maxSteps) (a trainer holds at most \(PunchSequence.maxSteps) steps); try --steps \(PunchSequence.maxSteps)",
                    field: "--steps")
            }
            guard minTime >= 1, minTime <= maxTime, maxTime <= 60_000 else {
                throw CommandFailure.usage("--min-time \(minTime) / --max-time \(maxTime): expected 1 ≤ min ≤ max ≤ 60000 ms", field: "--min-time")
            }
            let generator = RandomSequenceGenerator(stepCount: steps, targets: try CoachCLI.input { try SequenceInput.targets(targets) }, times: .uniform(minTime...maxTime))
            let program: PunchProgram
            do { program = try generator.generate(seed: seed ?? UInt64.random(in: 0...UInt64.max)) } catch {
                throw CommandFailure("cannot generate: \(error)")
            }
            let store = try database.open()
            let saved = try CoachCLI.failing { try store.saveSequence(name: name, program: program, at: now) }
            return [CoachOutput(
                "saved random sequence \"\(saved.name)\": targets \(saved.targets.map(String.init).joined(separator: ",")); ms \(saved.milliseconds.map(String.init).joined(separator: ","))",
                type: "sequence-saved", ["sequence": CoachJSON.sequence(name: saved.name, targets: saved.targets, milliseconds: saved.milliseconds,
                                                                       maxInterval: saved.maxIntervalMilliseconds)])]
        }
        func lines(now: Date = Date()) throws -> [String] { try outputs(now: now).flatMap(\.lines) }
        func run() async throws { output.emit(try outputs()) }
    }
}

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
        let outcome = try await runPublishing { printer.emit([$0]) }
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

    /// ``runSession(emit:)``, and with `--mqtt` every record also to the broker (exit 1 when
    /// the broker did not get them all).
    @discardableResult
    func runPublishing(emit: @escaping @Sendable (CoachOutput) -> Void) async throws -> Ending? {
        try broker.validate(app: "reflex-coach")
        let publisher = try await broker.connect(app: "reflex-coach")
        let outcome: Ending?
        do {
            outcome = try await runSession(emit: { output in
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
    struct Ending {
        /// The session's outcome (nil when the run was stopped before a session existed).
        var session: CoachSessionOutcome?
        /// The signal that stopped the run (`SIGINT`, `SIGTERM`), nil when it ended by itself.
        var interruption: String?
    }

    /// Runs the session, handing each line to `output`. SIGINT and SIGTERM stop the run the
    /// orderly way: the trainer is told, the session is stored with its end and the signal as
    /// its reason, and the summary is printed.
    @discardableResult
    func session(output: @escaping @Sendable (String) -> Void) async throws -> Ending? {
        try await runSession(emit: { for line in $0.lines { output(line) } })
    }

    /// ``session(output:)`` with each report as text and record (for `--json`).
    @discardableResult
    func runSession(emit: @escaping @Sendable (CoachOutput) -> Void) async throws -> Ending? {
        guard scanSeconds > 0, scanSeconds <= 300 else { throw CommandFailure("--timeout \(scanSeconds): expected 0 < s ≤ 300") }
        let store = try database.open()
        let person = try CoachCLI.failing { try CoachCLI.athlete(athlete, in: store) }
        guard try CoachCLI.failing({ try store.sequence(named: sequence) }) != nil else {
            let known = try CoachCLI.failing { try store.sequences().map(\.name) }
            throw CommandFailure("no saved sequence named \"\(sequence)\" (saved: \(known.isEmpty ? "none" : known.joined(separator: ", ")))")
        }
        if let warning = CoachTransportWarning.line(transport: transport, emulate: emulate) { appLogger.warning("\(warning)") }
        let signals = StopSignal.install()
        let link = try await CoachBluetooth.open(transport: transport, emulate: emulate, output: { emit(CoachJSON.message($0)) })
        let bluetooth = link.bluetooth
        var coach = ReflexCoach(central: bluetooth.central, store: store)
        coach.scanTimeout = .milliseconds(Int64(scanSeconds * 1000))
        coach.countdownSeconds = countdown
        let ending: CoachRunEnding
        do {
            ending = try await coach.runToEnd(
                athleteID: person.id ?? -1, sequenceName: sequence, choice: TrainerChoice(parsing: device),
                stopWhen: { await signals.wait() }, report: { emit(CoachJSON.event($0)) })
        } catch {
            await link.close()
            if let coachError = error as? CoachError { throw CommandFailure(coachError.description) }
            if let storeError = error as? CoachStoreError { throw CommandFailure(storeError.description) }
            throw CommandFailure("\(error)")
        }
        await link.close()
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

// MARK: history, export, chart

/// `history`: sessions, per-target statistics and trend of one athlete.
struct ReflexCoachHistory: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "history", abstract: "An athlete's sessions, per-target statistics and trend.")
    @OptionGroup var database: CoachDatabaseOptions
    @Option(name: .long, help: "Athlete name.") var athlete: String
    @OptionGroup var output: CoachOutputOptions

    func outputs() throws -> [CoachOutput] {
        let history = try CoachCLI.input { try AthleteHistory.of(athlete, in: try database.open()) }
        let person = history.athlete
        let athleteJSON = CoachJSON.athlete(person)
        guard let overall = history.overall, !history.sessions.isEmpty else {
            return [CoachOutput("\(person.name): no sessions", type: "history", ["athlete": athleteJSON, "sessions": 0])]
        }
        let count = history.sessions.count
        var outputs = [CoachOutput("\(person.name): \(count) session\(count == 1 ? "" : "s")", type: "history",
                                   ["athlete": athleteJSON, "sessions": .integer(Int64(count))])]
        for stats in history.sessions {
            let state = (stats.session.complete ? "complete" : "incomplete") + (stats.session.endReason.map { " (\($0))" } ?? "")
            outputs.append(CoachOutput(
                "session \(stats.session.id ?? -1)  \(CoachCLI.dateText(stats.session.started))  \(stats.session.sequenceName ?? "-")  \(state)  \(CoachCLI.summaryLine(stats.overall))",
                type: "session", [
                    "sessionId": .integer(stats.session.id ?? -1), "started": .string(CoachCLI.dateText(stats.session.started)),
                    "sequence": CoachJSON.optional(stats.session.sequenceName), "complete": .bool(stats.session.complete),
                    "endReason": CoachJSON.optional(stats.session.endReason), "summary": CoachJSON.summary(stats.overall),
                ]))
        }
        outputs.append(CoachOutput("per target:", type: nil))
        for t in overall.perTarget {
            let colour = TargetPalette.colour(of: t.target)?.name
            outputs.append(CoachOutput("  target \(t.target) (\(colour ?? "?")): \(CoachCLI.summaryLine(t.summary))", type: "target", [
                "target": .integer(Int64(t.target)), "colour": CoachJSON.optional(colour), "summary": CoachJSON.summary(t.summary),
            ]))
        }
        let slope = overall.trend.millisecondsPerSession
        let trendText = overall.trend.text ?? "needs two sessions"
        outputs.append(CoachOutput("trend: \(trendText)", type: "trend", ["millisecondsPerSession": CoachJSON.optional(slope)]))
        return outputs
    }
    func lines() throws -> [String] { try outputs().flatMap(\.lines) }
    func run() async throws { output.emit(try outputs()) }
}

/// `export`: one athlete's step results as CSV.
struct ReflexCoachExport: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "export", abstract: "Export an athlete's results as CSV (one row per step, or per session).")
    @OptionGroup var database: CoachDatabaseOptions
    @Option(name: .long, help: "Athlete name.") var athlete: String
    @Option(name: .long, help: "Output CSV file.") var out: String
    @Flag(name: .long, help: "One row per session instead of per step.") var sessions = false
    @OptionGroup var output: CoachOutputOptions

    func outputs() throws -> [CoachOutput] {
        let (person, csv, rows) = try CoachCLI.input { try AthleteHistory.csv(of: athlete, perSession: sessions, in: try database.open()) }
        try CoachCLI.write(csv, to: out)
        return [CoachOutput("wrote \(rows) row\(rows == 1 ? "" : "s") to \(out)", type: "exported",
                            ["file": .string(out), "rows": .integer(Int64(rows)), "athlete": CoachJSON.athlete(person)])]
    }
    func lines() throws -> [String] { try outputs().flatMap(\.lines) }
    func run() async throws { output.emit(try outputs()) }
}

/// `chart`: one session's reaction times as SVG.
struct ReflexCoachChart: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "chart", abstract: "Draw a session's reaction times as an SVG chart.")
    @OptionGroup var database: CoachDatabaseOptions
    @Option(name: .long, help: "Athlete name.") var athlete: String
    @Option(name: .long, help: "Session id (see history).") var session: Int64
    @Option(name: .long, help: "Output SVG file.") var out: String
    @OptionGroup var output: CoachOutputOptions

    func outputs() throws -> [CoachOutput] {
        let chart = try CoachCLI.input { try AthleteHistory.chart(session, of: athlete, in: try database.open()) }
        try CoachCLI.write(chart.svg, to: out)
        return [CoachOutput("wrote \(out)", type: "chart-written", ["file": .string(out), "sessionId": .integer(session)])]
    }
    func lines() throws -> [String] { try outputs().flatMap(\.lines) }
    func run() async throws { output.emit(try outputs()) }
}

// MARK: password

/// `password`: sets the coach's dashboard password (needed by `serve --lan`), stored hashed.
struct ReflexCoachPassword: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "password",
        abstract: "Set the coach's password for the dashboard on the network (serve --lan); stored only as a salted hash.",
        discussion: """
            Asks twice on a terminal; reads one line from standard input otherwise.

            Examples:
              bluetide reflex coach password
              printf '%s\\n' "$GYM_PASSWORD" | \\
                  bluetide reflex coach password --db ~/gym.sqlite
            """)
    @OptionGroup var database: CoachDatabaseOptions
    @OptionGroup var output: CoachOutputOptions

    /// Checks and stores `password`; returns the line to print.
    func set(_ password: String) throws -> String {
        if let problem = PasswordHash.problem(with: password) { throw CommandFailure.usage("\(problem); choose another", field: "password") }
        let store = try database.open()
        let hash: String
        do { hash = try PasswordHash.make(password) } catch { throw CommandFailure("cannot hash the password: \(error)") }
        try CoachCLI.failing { try store.setSetting(PasswordHash.settingKey, to: hash) }
        return "password set: `serve --lan` now asks every phone for it"
    }

    func run() async throws {
        let password: String
        if isatty(STDIN_FILENO) != 0 {
            guard let first = getpass("New dashboard password: ").map({ String(cString: $0) }),
                  let second = getpass("Again: ").map({ String(cString: $0) })
            else { throw CommandFailure.usage("no password given", field: "password") }
            guard first == second else { throw CommandFailure.usage("the two passwords differ; nothing was changed", field: "password") }
            password = first
        } else {
            guard let line = readLine(strippingNewline: true) else { throw CommandFailure.usage("no password on standard input: pipe it in, one line", field: "password") }
            password = line
        }
        let line = try set(password)
        output.emit([CoachOutput(line, type: "password-set", ["message": .string(line)])])
    }
}

// MARK: output (text or --json)

/// `--json`, shared by every reflex command: one record per line in the one schema
/// (docs/json-output.md) instead of text.
struct CoachOutputOptions: ParsableArguments {
    @Flag(name: .long, help: "Print one JSON object per line (docs/json-output.md) instead of text.") var json = false

    /// Prints each output as text or as its record (outputs without a record print nothing with --json).
    func emit(_ outputs: [CoachOutput]) {
        for output in outputs { for line in json ? output.records : output.lines { LineOutput.print(line) } }
    }
}

/// One thing a reflex command reports: its readable lines and the same as a JSON record.
struct CoachOutput: Sendable {
    /// The readable lines.
    var lines: [String]
    /// The record's `type` (nil: text only, e.g. "no athletes").
    var type: String?
    /// The record's other fields.
    var fields: [String: JSONOutputValue] = [:]

    init(_ lines: [String], type: String?, _ fields: [String: JSONOutputValue] = [:]) {
        self.lines = lines
        self.type = type
        self.fields = fields
    }

    init(_ line: String, type: String?, _ fields: [String: JSONOutputValue] = [:]) {
        self.init([line], type: type, fields)
    }

    /// Records already written as lines, after the typed one (a game's standings).
    var extraRecords: [String] = []

    /// Several lines and several records (no single type).
    init(lines: [String], records: [String]) {
        self.init(lines, type: nil)
        extraRecords = records
    }

    /// The JSON lines (none when there is no record).
    var records: [String] { (type.map { [JSONOutput.line($0, fields)] } ?? []) + extraRecords }
}

/// The shapes the reflex commands' records share.
enum CoachJSON {
    static func optional(_ text: String?) -> JSONOutputValue { text.map { .string($0) } ?? .null }

    static func optional(_ number: Double?) -> JSONOutputValue { number.map { .number($0) } ?? .null }

    /// An athlete: `id`, `name`, `birthDate` (YYYY-MM-DD), `sex`, `stance`, `notes`.
    static func athlete(_ athlete: Athlete) -> JSONOutputValue {
        ["id": .integer(athlete.id ?? -1), "name": .string(athlete.name), "birthDate": optional(athlete.birthDate?.iso),
         "sex": optional(athlete.sex), "stance": .string(athlete.stance.rawValue), "notes": .string(athlete.notes)]
    }

    /// A saved sequence: `name`, `targets`, `timesMilliseconds`, `maxIntervalMilliseconds`.
    static func sequence(name: String, targets: [UInt8], milliseconds: [UInt16], maxInterval: Int?) -> JSONOutputValue {
        ["name": .string(name), "targets": .array(targets.map { .integer(Int64($0)) }),
         "timesMilliseconds": .array(milliseconds.map { .integer(Int64($0)) }),
         "maxIntervalMilliseconds": maxInterval.map { .integer(Int64($0)) } ?? .null]
    }

    /// Reaction figures: `count`, `hits`, `misses`, `hitRatePercent`, `meanMilliseconds`, … (left out when undefined).
    static func summary(_ s: ReactionSummary) -> JSONOutputValue {
        ["count": .integer(Int64(s.count)), "hits": .integer(Int64(s.hits)), "misses": .integer(Int64(s.count - s.hits)),
         "hitRatePercent": optional(s.hitRate.map { ($0 * 100 * 10).rounded() / 10 }),
         "meanMilliseconds": optional(s.meanMilliseconds), "medianMilliseconds": optional(s.medianMilliseconds),
         "bestMilliseconds": optional(s.bestMilliseconds)]
    }

    /// A coached session's event as text and record.
    static func event(_ event: CoachEvent) -> CoachOutput {
        let text = event.description
        switch event {
        case let .scanning(seconds): return CoachOutput(text, type: "scanning", ["scanSeconds": .number(seconds)])
        case let .found(ad):
            return CoachOutput(text, type: "found", ["device": JSONOutput.device(text: ad.address.string, name: ad.name), "rssiDbm": .integer(Int64(ad.rssi))])
        case let .connected(address): return CoachOutput(text, type: "connected", ["device": JSONOutput.device(text: address)])
        case let .sequencesWritten(steps): return CoachOutput(text, type: "sequences-written", ["steps": .integer(Int64(steps))])
        case let .sessionStarted(id): return CoachOutput(text, type: "session-started", ["sessionId": .integer(id)])
        case let .status(status): return CoachOutput(text, type: "trainer-status", ["status": .string(status.summary)])
        case let .step(response, stored):
            return CoachOutput(text, type: "step", [
                // The step as the trainer numbers it (from 0), as the dashboard's /api/run does.
                "step": .integer(Int64(stored.stepIndex)), "target": .integer(Int64(response.target)),
                "colour": optional(TargetPalette.colour(of: response.target)?.name), "hit": .bool(response.hit),
                "wrongTarget": .bool(response.wrongTargetFirst),
                "reactionMilliseconds": response.hit ? .integer(Int64(response.reactionTimeMilliseconds)) : .null,
                "heartRateBpm": stored.heartRateBpm.map { .integer(Int64($0)) } ?? .null,
            ])
        case let .undecodable(bytes, error):
            return CoachOutput(text, type: "undecodable", ["value": JSONOutput.value(bytes, decodeError: error)])
        case let .link(connectionEvent): return CoachOutput(text, type: "link", ["event": .string("\(connectionEvent)")])
        case let .strap(message): return CoachOutput(text, type: "strap", ["message": .string(message)])
        case let .ended(outcome):
            return CoachOutput(text, type: "ended", [
                "sessionId": .integer(outcome.sessionID), "complete": .bool(outcome.complete),
                "stepsStored": .integer(Int64(outcome.stepsStored)), "stepCount": .integer(Int64(outcome.stepCount)),
                "reason": .string(outcome.reason),
            ])
        }
    }

    /// A line from the emulated trainer or the Bluetooth set-up: `message`.
    static func message(_ line: String, type: String = "message") -> CoachOutput {
        CoachOutput(line, type: type, ["message": .string(line)])
    }
}

/// The warning for a trainer search on a virtual link nobody else is on: nothing can be found there.
enum CoachTransportWarning {
    /// The warning line for `transport` and `emulate`, nil when a trainer can be there.
    static func line(transport: String, emulate: Bool) -> String? {
        guard !emulate, transport == "virtual" || transport.hasPrefix("virtual+") else { return nil }
        return "warning: --transport \(transport) is a private virtual link with no trainer on it; add --emulate for an "
            + "emulated one, or name the trainer's transport (e.g. --transport hci-socket:0 or tcp-client:HOST:PORT)"
    }
}
