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
