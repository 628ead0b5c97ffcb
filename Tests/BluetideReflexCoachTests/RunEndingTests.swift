import Bluetide
import BluetideProfiles
import BluetideReflex
import Foundation
import GRDB
import Synchronization
import Testing
import BluetideTestSupport
@testable import BluetideReflexCoach

/// Every way a run ends leaves a session with an end and a true reason, and the trainer free
/// for the next run; other users of the database never abort a run.
@Suite(.timeLimit(.minutes(1))) struct RunEndingTests {
    static func temporaryDatabase() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("coach-\(UUID().uuidString)/reflex.sqlite").path
    }

    /// Collects a run's events until it ends (or throws).
    static func events(of stream: AsyncThrowingStream<CoachEvent, any Error>, onEvent: @escaping @Sendable (CoachEvent) -> Void = { _ in })
        async throws -> [CoachEvent] {
        var events: [CoachEvent] = []
        for try await event in stream {
            onEvent(event)
            events.append(event)
        }
        return events
    }

    @Test func aStopRequestEndsTheSessionWithItsReasonAndStillReportsTheEnd() async throws {
        let rig = try await CoachRig.start(missProbability: 0)
        let athlete = try rig.store.addAthlete(Athlete(name: "Ana", created: Date()))
        try rig.store.saveSequence(name: "Long", targets: (0..<40).map { UInt8($0 % 6) }, milliseconds: Array(repeating: 400, count: 40), at: Date())
        let athleteID = try #require(athlete.id)
        let coach = rig.coach()
        let stop = RunStop()
        let steps = Counter()
        let events = try await rig.run(40, "stopped run") {
            try await Self.events(of: coach.run(athleteID: athleteID, sequenceName: "Long", stop: stop)) { event in
                if case .step = event, steps.increment() == 2 { stop.request("SIGINT") }
            }
        }
        await rig.close()
        guard case let .ended(outcome)? = events.last else { Issue.record("no end event: \(events)"); return }
        #expect(outcome.reason == "stopped: SIGINT")
        #expect(!outcome.complete)
        #expect(outcome.failure == nil, "a stop on request is no failure")
        let session = try #require(try rig.store.session(id: outcome.sessionID))
        #expect(session.ended != nil)
        #expect(session.endReason == "stopped: SIGINT")
    }

    /// The run's end as an event: waits resume when it comes (at once after), a cancelled wait throws.
    @Test func aRunStopSaysWhenItsRunEndedAndItsWaitsCanBeCancelled() async throws {
        let stop = RunStop()
        #expect(!stop.hasEnded)
        let waiter = Task { try await stop.waitUntilEnded() }
        let cancelled = Task { try await stop.waitUntilEnded() }
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        stop.markEnded()
        try await within(10, "the waiter resumed") { try await waiter.value }
        #expect(stop.hasEnded)
        try await stop.waitUntilEnded()
    }

    @Test func aStopBeforeTheSessionExistsThrowsStoppedAndStoresNothing() async throws {
        let rig = try await CoachRig.start()
        let athlete = try rig.store.addAthlete(Athlete(name: "Ana", created: Date()))
        try rig.store.saveSequence(name: "Jab", targets: [0, 1], milliseconds: [400, 400], at: Date())
        var scanning = rig.coach()
        scanning.namePrefix = "Nobody"  // never found: the run is still scanning when stopped
        let coach = scanning
        let stop = RunStop()
        stop.request("SIGTERM")
        let athleteID = try #require(athlete.id)
        await #expect(throws: CoachError.self) {
            _ = try await rig.run(40, "stopped scan") { try await Self.events(of: coach.run(athleteID: athleteID, sequenceName: "Jab", stop: stop)) }
        }
        await rig.close()
        #expect(try rig.store.sessions().isEmpty)
    }

    /// Storage fails in the middle of a run (injected: a trigger makes the database refuse every
    /// further step, as a full disk does): the session is ended with the store's words as its
    /// reason, and the outcome says the run failed, so `reflex coach run` exits 1 instead of 0.
    @Test func aStorageFailureInTheMiddleOfARunIsAFailure() async throws {
        let rig = try await CoachRig.start(missProbability: 0)
        let athlete = try rig.store.addAthlete(Athlete(name: "Ana", created: Date()))
        try rig.store.saveSequence(name: "Long", targets: (0..<20).map { UInt8($0 % 6) }, milliseconds: Array(repeating: 400, count: 20), at: Date())
        let athleteID = try #require(athlete.id)
        let coach = rig.coach()
        let store = rig.store
        let events = try await rig.run(40, "run on a full disk") {
            try await Self.events(of: coach.run(athleteID: athleteID, sequenceName: "Long")) { event in
                guard case .step(_, let stored) = event, stored.stepIndex == 1 else { return }
                try? store.database.write { db in
                    try db.execute(sql: "CREATE TRIGGER disk_full BEFORE INSERT ON step_result BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END")
                }
            }
        }
        await rig.close()
        guard case let .ended(outcome)? = events.last else { Issue.record("no end event: \(events)"); return }
        #expect(!outcome.complete)
        // The trigger lands while the run goes on, so a few more steps may be stored before it
        // (the event for step 2 reaches the test after the run has moved on); the first step it
        // refuses is the one the failure names, and the ones before it are kept.
        let failure = try #require(outcome.failure)
        #expect(outcome.stepsStored >= 2 && outcome.stepsStored < 20, "\(outcome.stepsStored)")
        #expect(failure.contains("could not store step \(outcome.stepsStored + 1)"), "\(failure)")
        let session = try #require(try store.session(id: outcome.sessionID))
        #expect(session.ended != nil && session.endReason == outcome.failure, "\(String(describing: session.endReason))")
    }

    /// The wedge: a run whose storage fails must still release the trainer, so the next run
    /// connects (it used to fail with "connection already exists" until restarted).
    @Test func aStorageFailureReleasesTheTrainerForTheNextRun() async throws {
        let rig = try await CoachRig.start(missProbability: 0)
        let athlete = try rig.store.addAthlete(Athlete(name: "Ana", created: Date()))
        try rig.store.saveSequence(name: "Long", targets: (0..<20).map { UInt8($0 % 6) }, milliseconds: Array(repeating: 400, count: 20), at: Date())
        try rig.store.saveSequence(name: "Short", targets: [2, 4, 1], milliseconds: [400, 400, 400], at: Date())
        let athleteID = try #require(athlete.id)
        let coach = rig.coach()
        let store = rig.store
        // The session disappears under the run (as if deleted elsewhere): storing the next step fails.
        await #expect(throws: CoachError.self) {
            _ = try await rig.run(40, "failing run") {
                try await Self.events(of: coach.run(athleteID: athleteID, sequenceName: "Long")) { event in
                    if case let .sessionStarted(id) = event { _ = try? store.deleteSession(id: id) }
                }
            }
        }
        let events = try await rig.run(40, "next run") { try await Self.events(of: coach.run(athleteID: athleteID, sequenceName: "Short")) }
        await rig.close()
        guard case let .ended(outcome)? = events.last else { Issue.record("no end event: \(events)"); return }
        #expect(outcome.complete, "\(outcome.reason)")
        #expect(try store.session(id: outcome.sessionID)?.endReason == "finished")
    }

    /// Exports, history and weigh-ins from other connections while a run writes every step:
    /// readers never block (WAL), writers wait their turn (busy timeout), the run never aborts.
    @Test func readersAndWritersDuringARunNeverAbortIt() async throws {
        let path = Self.temporaryDatabase()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let rig = try await CoachRig.start(missProbability: 0)
        let store = try CoachStore(path: path)
        let athlete = try store.addAthlete(Athlete(name: "Ana", created: Date()))
        try store.saveSequence(name: "Long", targets: (0..<24).map { UInt8($0 % 6) }, milliseconds: Array(repeating: 300, count: 24), at: Date())
        let athleteID = try #require(athlete.id)
        let coach = ReflexCoach(central: rig.bluetooth.central, store: store)
        // The run's events so far (Int.max once it ended): each reader goes round once per event,
        // so the readers and writers meet the run's writes all along without sleeping.
        let progress = Observed(0)
        let others = (0..<3).map { index in
            Task.detached { [athlete] () throws -> Int in
                let other = try CoachStore(path: path)
                var rounds = 0
                var seen = -1
                while true {
                    seen = try await progress.wait { [seen] in $0 > seen }
                    if seen == Int.max { break }
                    _ = try other.results(athleteID: athleteID)
                    _ = try CSVExport.steps(from: other, athleteID: athleteID)
                    if index > 0 {
                        var edited = athlete
                        edited.notes = "round \(rounds)"
                        try other.updateAthlete(edited)
                        try other.recordWeight(athleteID: athleteID, date: CalendarDate(year: 2026, month: 11, day: 20)!, kilograms: 60)
                    }
                    rounds += 1
                }
                return rounds
            }
        }
        let events: [CoachEvent]
        do {
            events = try await rig.run(50, "run") {
                try await Self.events(of: coach.run(athleteID: athleteID, sequenceName: "Long")) { _ in progress.update { $0 += 1 } }
            }
            progress.update { $0 = Int.max }
        } catch {
            progress.update { $0 = Int.max }
            throw error
        }
        for other in others { #expect(try await other.value > 0) }
        await rig.close()
        guard case let .ended(outcome)? = events.last else { Issue.record("no end event: \(events)"); return }
        #expect(outcome.complete, "\(outcome.reason)")
        #expect(outcome.stepsStored == 24)
    }
}

/// A counter shared between a test and the closures it hands out.
final class Counter: Sendable {
    private let count = Mutex(0)
    /// The count now.
    var value: Int { count.withLock { $0 } }
    /// Adds one and returns the new count.
    @discardableResult func increment() -> Int { count.withLock { $0 += 1; return $0 } }
}
