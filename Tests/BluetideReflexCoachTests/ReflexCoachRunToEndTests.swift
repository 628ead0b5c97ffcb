import Bluetide
import BluetideReflex
import Foundation
import Synchronization
import Testing
@testable import BluetideReflexCoach

/// Issue 22 item 3: the coach's run orchestration (`reflex coach run`: read the events to the
/// end, a stop request the orderly way, the session's statistics) is library code, tested
/// without the command.
@Suite(.timeLimit(.minutes(1))) struct ReflexCoachRunToEndTests {
    final class Reported: Sendable {
        let events = Mutex<[CoachEvent]>([])
        func add(_ event: CoachEvent) { events.withLock { $0.append(event) } }
    }

    final class Count: Sendable {
        private let count = Mutex(0)
        func add() { count.withLock { $0 += 1 } }
        var value: Int { count.withLock { $0 } }
    }

    /// A stop that comes only when `trigger` says so (and ends when its task is cancelled).
    final class Stopper: Sendable {
        private let stream: AsyncStream<String>
        private let sink: AsyncStream<String>.Continuation
        init() { (stream, sink) = AsyncStream.makeStream() }
        func trigger(_ reason: String) { sink.yield(reason) }
        func wait() async -> String {
            for await reason in stream { return reason }
            return "cancelled"
        }
    }

    @Test func aRunEndsByItselfWithItsOutcomeAndStatistics() async throws {
        let rig = try await CoachRig.start(missProbability: 0)
        defer { Task { await rig.close() } }
        let athlete = try rig.store.addAthlete(Athlete(name: "Ana", created: Date(timeIntervalSince1970: 0)))
        try rig.store.saveSequence(name: "Jab", targets: [1, 2, 3], milliseconds: [300, 300, 300], at: Date())
        let coach = rig.coach()
        let reported = Reported()
        let stopper = Stopper()
        let athleteID = try #require(athlete.id)
        let ending = try await rig.run(40, "run") {
            try await coach.runToEnd(athleteID: athleteID, sequenceName: "Jab", stopWhen: stopper.wait, report: reported.add)
        }
        let outcome = try #require(ending.outcome)
        #expect(outcome.complete && outcome.stepsStored == 3, "\(outcome)")
        #expect(ending.stopReason == nil)
        #expect(ending.summary != nil)
        let last = reported.events.withLock { $0.last }
        guard case let .ended(reportedOutcome)? = last else { Issue.record("last event: \(String(describing: last))"); return }
        #expect(reportedOutcome == outcome, "the ended event carries the outcome returned")
    }

    @Test func aStopRequestEndsTheRunTheOrderlyWay() async throws {
        let rig = try await CoachRig.start(missProbability: 0)
        defer { Task { await rig.close() } }
        let athlete = try rig.store.addAthlete(Athlete(name: "Bo", created: Date(timeIntervalSince1970: 0)))
        try rig.store.saveSequence(name: "Long", targets: Array(repeating: 1, count: 40), milliseconds: Array(repeating: 2000, count: 40), at: Date())
        let coach = rig.coach()
        let stopper = Stopper()
        let athleteID = try #require(athlete.id)
        // The stop comes once the session exists.
        let report: @Sendable (CoachEvent) -> Void = { event in
            if case .sessionStarted = event { stopper.trigger("SIGINT") }
        }
        let ending = try await rig.run(40, "stopped run") {
            try await coach.runToEnd(athleteID: athleteID, sequenceName: "Long", stopWhen: stopper.wait, report: report)
        }
        #expect(ending.stopReason == "SIGINT")
        let outcome = try #require(ending.outcome, "the session was stored before the stop")
        #expect(!outcome.complete)
        #expect(try rig.store.session(id: outcome.sessionID)?.complete == false)
    }

    /// The game's orchestration (`reflex coach session`) the same way: a head-to-head of two
    /// played to its end, then one stopped once its first session exists.
    @Test func aGameIsPlayedToItsEndOrStoppedTheOrderlyWay() async throws {
        let rig = try await GymRig.start(trainers: 2)
        defer { Task { await rig.close() } }
        let athletes = try rig.athletes(["A", "B"])
        try rig.store.saveSequence(name: "Duel", targets: [0, 1, 2], milliseconds: [500, 500, 500], at: Date())
        try rig.store.saveSequence(name: "Long", targets: Array(repeating: 1, count: 40), milliseconds: Array(repeating: 2000, count: 40), at: Date())
        let gym = rig.gym()
        let reported = Count()
        let played = try await rig.run(90, "game") {
            try await gym.playToEnd(.headToHead(.bestMean), athleteIDs: athletes, sequenceName: "Duel", stopWhen: Stopper().wait,
                                    report: { _ in reported.add() })
        }
        #expect(played.stopReason == nil)
        #expect(played.outcome?.runs.count == 2 && played.outcome?.runs.allSatisfy(\.complete) == true)
        #expect(reported.value > 2)
        let stopper = Stopper()
        let stopped = try await rig.run(90, "stopped game") {
            try await gym.playToEnd(.headToHead(.bestMean), athleteIDs: athletes, sequenceName: "Long", stopWhen: stopper.wait,
                                    report: { event in if case .lane(_, _, .sessionStarted) = event { stopper.trigger("SIGTERM") } })
        }
        #expect(stopped.stopReason == "SIGTERM")
        #expect(stopped.outcome?.runs.contains { !$0.complete } == true, "\(String(describing: stopped.outcome))")
    }
}
