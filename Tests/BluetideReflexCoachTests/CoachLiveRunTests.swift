import Bluetide
import BluetideReflex
import BluetideReflexCoach
import BluetideReflexEmulation
import BluetideSupport
import Foundation
import Synchronization
import Testing

/// `reflex coach run` and `session` as library calls (``CoachLiveRun``, ``CoachGame``), without
/// the argument parser: on emulated trainers in virtual time, and their refusals before anything
/// opens.
@Suite(.timeLimit(.minutes(2))) struct CoachLiveRunTests {
    /// Lines and events a run reported.
    final class Reports<Event: Sendable>: Sendable {
        private let state = Mutex<(messages: [String], events: [Event])>(([], []))
        func message(_ line: String) { state.withLock { $0.messages.append(line) } }
        func event(_ event: Event) { state.withLock { $0.events.append(event) } }
        var messages: [String] { state.withLock { $0.messages } }
        var events: [Event] { state.withLock { $0.events } }
    }

    /// A stop that never comes: returns (with a reason nobody uses) once its task is cancelled.
    @Sendable static func never() async -> String {
        let (stream, _) = AsyncStream<String>.makeStream()
        for await reason in stream { return reason }
        return "cancelled"
    }

    /// A store with athletes `names` and the three-step sequence `Jab`.
    static func store(athletes names: [String]) throws -> CoachStore {
        let store = try CoachStore.inMemory()
        for name in names { _ = try store.addAthlete(Athlete(name: name, created: Date(timeIntervalSince1970: 0))) }
        _ = try store.saveSequence(name: "Jab", targets: [0, 3, 5], milliseconds: [700, 700, 700], at: Date(timeIntervalSince1970: 0))
        return store
    }

    @Test func aRunOnAnEmulatedTrainerEndsStoredWithItsSummary() async throws {
        let store = try Self.store(athletes: ["Ana"])
        var run = CoachLiveRun(athleteName: "Ana", sequenceName: "Jab")
        run.emulate = true
        let reports = Reports<CoachEvent>()
        let manual = ManualClock()
        let ending = try await manual.advancing { [run] in
            try await run.run(store: store, clock: BluetideClock(manual), stopWhen: Self.never,
                              message: reports.message, report: reports.event)
        }
        #expect(reports.messages.contains { $0.hasPrefix("emulated trainer \"") }, "\(reports.messages)")
        let outcome = try #require(ending.outcome)
        #expect(outcome.complete && outcome.stepCount == 3 && outcome.stepsStored == 3)
        #expect(ending.summary?.count == 3)
        #expect(ending.stopReason == nil)
        #expect(reports.events.contains { if case .ended = $0 { true } else { false } })
        #expect(try store.sessions().compactMap(\.id) == [outcome.sessionID], "the one session is stored")
    }

    @Test func anUnknownSequenceOrAthleteIsRefusedBeforeAnythingOpens() async throws {
        let store = try Self.store(athletes: ["Ana"])
        // A transport that cannot open: reaching it would fail differently.
        var run = CoachLiveRun(athleteName: "Ana", sequenceName: "Cross")
        run.transport = "tcp-client:127.0.0.1:1"
        do {
            _ = try await run.run(store: store, stopWhen: Self.never, report: { _ in })
            Issue.record("an unknown sequence ran")
        } catch let error as CoachError {
            #expect(error.description == "no saved sequence named \"Cross\" (saved: Jab)")
        }
        run = CoachLiveRun(athleteName: "Zoe", sequenceName: "Jab")
        run.transport = "tcp-client:127.0.0.1:1"
        await #expect(throws: CoachInputError.self) {
            _ = try await run.run(store: store, stopWhen: Self.never, report: { _ in })
        }
    }

    @Test func emulationNeedsTheVirtualRadio() async throws {
        let store = try Self.store(athletes: ["Ana"])
        var run = CoachLiveRun(athleteName: "Ana", sequenceName: "Jab")
        run.emulate = true
        run.transport = "tcp-client:127.0.0.1:1"
        do {
            _ = try await run.run(store: store, stopWhen: Self.never, report: { _ in })
            Issue.record("emulated trainers on a TCP transport")
        } catch let error as CoachBluetoothError {
            guard case .emulationNeedsVirtualTransport = error else { Issue.record("\(error)"); return }
            #expect(error.description == "--emulate needs a virtual transport (virtual or virtual:NAME)")
        }
        run.transport = "virtual:"
        await #expect(throws: CoachBluetoothError.self, "a spec that does not parse") {
            _ = try await run.run(store: store, stopWhen: Self.never, report: { _ in })
        }
    }

    @Test func aGameHasAStrapPerAthleteWhileTrainersAndStrapsFitEightLinks() {
        #expect(CoachGame.emulatedStraps(.headToHead(.bestMean), athletes: 2, emulate: true) == 2)
        #expect(CoachGame.emulatedStraps(.headToHead(.bestMean), athletes: 4, emulate: true) == 4, "4 trainers + 4 straps = 8 links")
        #expect(CoachGame.emulatedStraps(.headToHead(.bestMean), athletes: 5, emulate: true) == 0, "5 + 5 do not fit")
        #expect(CoachGame.emulatedStraps(.relay(teams: 2), athletes: 6, emulate: true) == 6, "2 trainers + 6 straps")
        #expect(CoachGame.emulatedStraps(.relay(teams: 2), athletes: 7, emulate: true) == 0, "2 trainers + 7 straps do not fit")
        #expect(CoachGame.emulatedStraps(.relay(teams: 5), athletes: 5, emulate: true) == 0)
        #expect(CoachGame.emulatedStraps(.chase(seed: 1), athletes: 3, emulate: true) == 0, "a chase's players share one run")
        #expect(CoachGame.emulatedStraps(.headToHead(.bestMean), athletes: 2, emulate: false) == 0, "nothing emulated")
    }

    @Test func theDashboardsLanesGetAStrapEachWhileTheyFitEightLinks() {
        #expect(CoachBluetooth.laneStraps(trainers: 1, emulate: true) == 1)
        #expect(CoachBluetooth.laneStraps(trainers: 4, emulate: true) == 4, "4 trainers + 4 straps = 8 links")
        #expect(CoachBluetooth.laneStraps(trainers: 6, emulate: true) == 2, "the two links left")
        #expect(CoachBluetooth.laneStraps(trainers: 8, emulate: true) == 0)
        #expect(CoachBluetooth.laneStraps(trainers: 3, emulate: false) == 0, "nothing emulated")
    }

    @Test func aHeadToHeadOnEmulatedTrainersAndStrapsIsPlayedToItsEnd() async throws {
        let store = try Self.store(athletes: ["Ana", "Ben"])
        var game = CoachGame(mode: .headToHead(.bestMean), athleteNames: ["Ana", "Ben"], sequenceName: "Jab")
        game.emulate = true
        let lineup = try game.lineUp(in: store)
        #expect(lineup.athletes.map(\.name) == ["Ana", "Ben"])
        let reports = Reports<GymEvent>()
        let manual = ManualClock()
        let played = try await manual.advancing { [game] in
            try await game.play(lineup, store: store, clock: BluetideClock(manual), stopWhen: Self.never,
                                message: reports.message, report: reports.event)
        }
        #expect(reports.messages.filter { $0.hasPrefix("emulated trainer") }.count == 2)
        #expect(reports.messages.filter { $0.hasPrefix("emulated heart-rate strap \"Strap-") }.count == 2)
        let outcome = try #require(played.outcome)
        #expect(outcome.runs.count == 2 && outcome.runs.allSatisfy(\.complete))
        #expect(played.stopReason == nil)
    }

    @Test func aGameThatCannotBePlayedIsRefusedAtTheLineUp() throws {
        let store = try Self.store(athletes: ["Ana", "Ben"])
        #expect(throws: CoachInputError.self) {
            _ = try CoachGame(mode: .headToHead(.bestMean), athleteNames: ["Ana", "Zoe"], sequenceName: "Jab").lineUp(in: store)
        }
        do {
            _ = try CoachGame(mode: .headToHead(.bestMean), athleteNames: ["Ana", "Ben"], sequenceName: "Cross").lineUp(in: store)
            Issue.record("an unknown sequence lined up")
        } catch let error as CoachError {
            guard case .sequence = error else { Issue.record("\(error)"); return }
        }
    }
}
