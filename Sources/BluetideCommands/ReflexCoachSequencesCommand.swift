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
            let generator = try CoachCLI.input {
                try SequenceInput.randomGenerator(steps: steps, targets: targets, minimum: minTime, maximum: maxTime)
            }
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
