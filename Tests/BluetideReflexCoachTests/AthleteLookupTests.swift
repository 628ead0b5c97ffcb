import BluetideProfiles
import BluetideReflex
import BluetideReflexCoach
import Foundation
import Testing

/// The coach's name lookup and list parsing, without the argument parser.
@Suite("AthleteLookup")
struct AthleteLookupTests {
    let when = Date(timeIntervalSince1970: 1_700_000_000)

    func store(_ names: [String]) throws -> CoachStore {
        let store = try CoachStore.inMemory()
        for name in names { _ = try store.addAthlete(Athlete(name: name, created: when)) }
        return store
    }

    @Test func findsOneAthleteIgnoringCaseAndSurroundingSpaces() throws {
        let store = try store(["Ana Ruiz", "Ben"])
        #expect(try AthleteLookup.athlete("  ana ruiz ", in: store).name == "Ana Ruiz")
        #expect(try AthleteLookup.athlete("BEN", in: store).name == "Ben")
    }

    @Test func unknownNameListsWhoExists() throws {
        let all = try store(["Ana Ruiz", "Ben"]).athletes()
        #expect(throws: CoachInputError(field: "--athlete", .noSuchAthlete(name: "Cleo", known: ["Ana Ruiz", "Ben"]))) {
            try AthleteLookup.athlete("Cleo", among: all)
        }
        do {
            _ = try AthleteLookup.athlete("Cleo", among: all)
            Issue.record("found a missing athlete")
        } catch {
            #expect(error.description == "no athlete named \"Cleo\" (athletes: Ana Ruiz, Ben)")
            #expect(error.field == "--athlete")
            #expect(error.given == "Cleo")
            #expect(error.expected == "the name of exactly one athlete")
            #expect(!error.namesField)
        }
    }

    @Test func emptyStoreSaysHowToAddOne() throws {
        do {
            _ = try AthleteLookup.athlete("Ana", among: [])
            Issue.record("found an athlete in an empty store")
        } catch {
            #expect(error.description == "no athlete named \"Ana\" (athletes: none yet: add one with `athletes add NAME`)")
        }
    }

    @Test func twoAthletesOfOneNameAreAmbiguous() {
        let twins = [Athlete(id: 1, name: "Ana", created: when), Athlete(id: 2, name: "ana", created: when)]
        #expect(throws: CoachInputError(field: "--athlete", .ambiguousAthlete(name: "Ana", count: 2))) {
            try AthleteLookup.athlete("Ana", among: twins)
        }
        #expect(CoachInputError(field: "--athlete", .ambiguousAthlete(name: "Ana", count: 2)).description == "2 athletes are named \"Ana\"")
    }

    @Test func nameListSplitsAtCommasOnlyAndDropsBlanks() throws {
        #expect(try AthleteLookup.names("Ana Ruiz, Ben,, ") == ["Ana Ruiz", "Ben"])
        #expect(throws: CoachInputError(field: "--athletes", .emptyNameList)) { try AthleteLookup.names(" , ,") }
        #expect(CoachInputError(field: "--athletes", .emptyNameList).description
            == "--athletes: empty list; give names separated by commas, e.g. Ana,Ben")
    }

    @Test func athletesOfAListKeepItsOrderAndNameTheMissingOne() throws {
        let store = try store(["Ana Ruiz", "Ben", "Cleo"])
        #expect(try AthleteLookup.athletes(named: ["cleo", "Ana Ruiz"], in: store).map(\.name) == ["Cleo", "Ana Ruiz"])
        #expect(throws: CoachInputError(field: "--athletes", .noSuchAthlete(name: "Dan", known: ["Ana Ruiz", "Ben", "Cleo"]))) {
            try AthleteLookup.athletes(named: ["Ben", "Dan"], in: store)
        }
    }
}

/// The sequence lists a coach types (`--targets`, `--times`), without the argument parser.
@Suite("SequenceInput")
struct SequenceInputTests {
    @Test func targetsSplitAtCommasAndSpaces() throws {
        #expect(try SequenceInput.targets("0,3 5,1") == [0, 3, 5, 1])
    }

    @Test func badTargetNamesItsStep() {
        #expect(throws: CoachInputError(field: "--targets", .badTarget(step: 2, item: "6"))) { try SequenceInput.targets("0,6") }
        let error = CoachInputError(field: "--targets", .badTarget(step: 2, item: "6"))
        #expect(error.description == "--targets: step 2: \"6\" is not a target 0...5")
        #expect(error.given == "6" && error.expected == "a target 0...5" && error.namesField)
        #expect(throws: CoachInputError(field: "--targets", .emptyList)) { try SequenceInput.targets(" , ") }
    }

    @Test func oneTimeServesEveryStep() throws {
        #expect(try SequenceInput.times("900", steps: 3) == [900, 900, 900])
        #expect(try SequenceInput.times("900,1200", steps: 2) == [900, 1200])
    }

    @Test func badTimesAreNamed() {
        #expect(throws: CoachInputError(field: "--times", .badTime(step: 1, item: "0"))) { try SequenceInput.times("0", steps: 1) }
        #expect(throws: CoachInputError(field: "--times", .badTime(step: 2, item: "60001"))) { try SequenceInput.times("5,60001", steps: 2) }
        #expect(throws: CoachInputError(field: "--times", .timeCountMismatch(times: 2, steps: 3))) { try SequenceInput.times("900,1200", steps: 3) }
        #expect(CoachInputError(field: "--times", .timeCountMismatch(times: 2, steps: 3)).description
            == "--times has 2 values but --targets has 3 steps: give one time, or one per step")
    }

    @Test func randomSequenceSettingsAreCheckedBeforeGenerating() throws {
        let generator = try SequenceInput.randomGenerator(steps: 4, targets: "1,2", minimum: 800, maximum: 900)
        let program = try generator.generate(seed: 7)
        #expect(program.sequence.targets.count == 4)
        #expect(program.sequence.targets.allSatisfy { [1, 2].contains($0) })
        #expect(throws: CoachInputError(field: "--steps", .stepCount(steps: 0, maximum: 256))) {
            try SequenceInput.randomGenerator(steps: 0, targets: "1", minimum: 800, maximum: 900)
        }
        #expect(CoachInputError(field: "--steps", .stepCount(steps: 300, maximum: 256)).description
            == "--steps 300: expected 1 to 256 (a trainer holds at most 256 steps); try --steps 256")
        #expect(throws: CoachInputError(field: "--min-time", .timeWindow(minimum: 900, maximum: 800))) {
            try SequenceInput.randomGenerator(steps: 3, targets: "1", minimum: 900, maximum: 800)
        }
        #expect(CoachInputError(field: "--min-time", .timeWindow(minimum: 900, maximum: 800)).description
            == "--min-time 900 / --max-time 800: expected 1 ≤ min ≤ max ≤ 60000 ms")
        #expect(throws: CoachInputError(field: "--targets", .badTarget(step: 1, item: "9"))) {
            try SequenceInput.randomGenerator(steps: 3, targets: "9", minimum: 800, maximum: 900)
        }
    }
}

/// The warning for a trainer search on a private virtual link.
@Suite("CoachTransportWarning")
struct CoachTransportWarningTests {
    @Test func onlyAPrivateVirtualLinkWithoutAnEmulatedTrainerWarns() {
        #expect(CoachTransportWarning.line(transport: "virtual", emulate: false)?.hasPrefix("warning: --transport virtual is a private virtual link") == true)
        #expect(CoachTransportWarning.line(transport: "virtual+snoop", emulate: false) != nil)
        #expect(CoachTransportWarning.line(transport: "virtual", emulate: true) == nil)
        #expect(CoachTransportWarning.line(transport: "hci-socket:0", emulate: false) == nil)
    }
}
