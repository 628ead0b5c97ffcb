import BluetideProfiles
import Foundation
import GRDB
import Testing
@testable import BluetideReflex

@Suite("CoachStore")
struct CoachStoreTests {
    @Test func migratesEmptyDatabaseThroughV1ThenV2() throws {
        let store = try CoachStore.inMemory()
        #expect(try store.appliedMigrations() == ["v1", "v2", "v3", "v4", "v5"])
        try store.database.read { db in
            for table in ["athlete", "weight", "sequence", "session", "step_result"] {
                #expect(try db.tableExists(table), "missing table \(table)")
            }
            let sessionColumns = try db.columns(in: "session").map(\.name)
            #expect(sessionColumns.contains("notes"))
            #expect(try db.indexes(on: "session").contains { $0.name == "session_on_athlete_started" })
        }
    }

    @Test func upgradesV1OnlyFileToV2KeepingData() throws {
        let path = Fixture.temporaryPath("v1.sqlite")
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        do {
            let queue = try DatabaseQueue(path: path)
            try CoachSchema.migrator.migrate(queue, upTo: "v1")
            try queue.write { db in
                #expect(try !db.columns(in: "session").map(\.name).contains("notes"))
                try db.execute(sql: "INSERT INTO athlete (name, stance, notes, created) VALUES ('Ana', 'southpaw', '', '2026-11-01 10:00:00.000')")
                try db.execute(sql: """
                    INSERT INTO session (athleteId, sequenceName, targets, milliseconds, started, complete)
                    VALUES (1, 'Jab', '[0,1]', '[1000,1000]', '2026-11-01 10:05:00.000', 1)
                    """)
                try db.execute(sql: "INSERT INTO step_result (sessionId, stepIndex, target, hit, wrongTarget, reactionMilliseconds) VALUES (1, 0, 0, 1, 0, 412)")
            }
            #expect(try queue.read { db in try CoachSchema.migrator.appliedIdentifiers(db) } == ["v1"])
            try queue.close()
        }
        let store = try CoachStore(path: path)
        #expect(try store.appliedMigrations() == ["v1", "v2", "v3", "v4", "v5"])
        let athletes = try store.athletes()
        #expect(athletes.map(\.name) == ["Ana"])
        #expect(athletes.first?.stance == .southpaw)
        let sessions = try store.sessions()
        #expect(sessions.count == 1)
        #expect(sessions.first?.notes == nil)
        #expect(sessions.first?.targets == [0, 1])
        #expect(try store.steps(sessionID: 1).map(\.reactionMilliseconds) == [412])
        try store.setSessionNotes(id: 1, notes: "good guard")
        #expect(try store.session(id: 1)?.notes == "good guard")
    }

    @Test func athleteCRUDAndWeightHistory() throws {
        let store = try CoachStore.inMemory()
        let ana = try store.addAthlete(Athlete(name: "  Ana  ", birthDate: CalendarDate(year: 2001, month: 2, day: 28), sex: "female",
                                               stance: .southpaw, notes: "left hook", created: Fixture.day0))
        let ben = try store.addAthlete(Athlete(name: "ben", created: Fixture.day0))
        let anaID = try #require(ana.id)
        #expect(ana.name == "Ana")
        #expect(try store.athletes().map(\.name) == ["Ana", "ben"])
        #expect(try store.athlete(id: anaID) == ana)

        var changed = ana
        changed.notes = "switch-hitter now"
        changed.stance = .switchStance
        try store.updateAthlete(changed)
        #expect(try store.athlete(id: anaID)?.stance == .switchStance)
        #expect(try store.athlete(id: anaID)?.birthDate?.iso == "2001-02-28")

        try store.recordWeight(athleteID: anaID, date: try #require(CalendarDate(iso: "2026-11-02")), kilograms: 57.5)
        try store.recordWeight(athleteID: anaID, date: try #require(CalendarDate(iso: "2026-10-01")), kilograms: 58.25)
        #expect(try store.weightHistory(athleteID: anaID).map(\.kilograms) == [58.25, 57.5])
        #expect(throws: CoachStoreError.invalidWeight(-1)) { try store.recordWeight(athleteID: anaID, date: CalendarDate(year: 2026, month: 1, day: 1)!, kilograms: -1) }
        #expect(throws: CoachStoreError.athleteNotFound(99)) { try store.recordWeight(athleteID: 99, date: CalendarDate(year: 2026, month: 1, day: 1)!, kilograms: 60) }
        #expect(throws: CoachStoreError.emptyName("athlete")) { try store.addAthlete(Athlete(name: " \n", created: Fixture.day0)) }

        // Deleting an athlete removes their weights and sessions.
        let sessionID = try store.startSession(athleteID: anaID, program: Fixture.program([0], [1000]), started: Fixture.day0)
        #expect(try store.deleteAthlete(id: anaID))
        #expect(try store.athlete(id: anaID) == nil)
        #expect(try store.weightHistory(athleteID: anaID).isEmpty)
        #expect(try store.session(id: sessionID) == nil)
        #expect(try store.athletes().map(\.id) == [ben.id])
        #expect(try !store.deleteAthlete(id: anaID))
    }

    @Test func sequencesSavedByNameAndReplaced() throws {
        let store = try CoachStore.inMemory()
        try store.saveSequence(name: "Jab", targets: [0, 1, 2], milliseconds: [1000, 900, 800], maxIntervalMilliseconds: 2000, at: Fixture.day0)
        try store.saveSequence(name: "Cross", program: Fixture.program([5], [60_000]), at: Fixture.day0)
        #expect(try store.sequences().map(\.name) == ["Cross", "Jab"])
        let jab = try #require(try store.sequence(named: "Jab"))
        #expect(jab.targets == [0, 1, 2])
        #expect(jab.milliseconds == [1000, 900, 800])
        #expect(jab.maxIntervalMilliseconds == 2000)
        #expect(try jab.program() == Fixture.program([0, 1, 2], [1000, 900, 800]))

        let replaced = try store.saveSequence(name: "Jab", targets: [3], milliseconds: [500], at: Fixture.day0.addingTimeInterval(60))
        #expect(replaced.id == jab.id)
        #expect(try store.sequence(named: "Jab")?.targets == [3])
        #expect(try store.sequences().count == 2)
        #expect(try store.deleteSequence(named: "Jab"))
        #expect(try store.sequence(named: "Jab") == nil)
    }

    @Test(arguments: [
        ([0, 1, 7] as [UInt8], [1000, 1000, 1000] as [UInt16], "sequence \"Jab\": step 2: target 7 is outside 0...5"),
        ([0, 1], [1000, 0], "sequence \"Jab\": step 1: time 0 ms is outside 1...60000 ms"),
        ([0], [60_001], "sequence \"Jab\": step 0: time 60001 ms is outside 1...60000 ms"),
        ([0, 1, 2], [1000, 1000], "sequence \"Jab\": step 2: sequence has 3 steps but time sequence has 2"),
        ([], [], "sequence \"Jab\": sequence is empty"),
    ])
    func invalidSequencesAreRefusedWithExactMessage(targets: [UInt8], ms: [UInt16], message: String) throws {
        let store = try CoachStore.inMemory()
        try store.saveSequence(name: "Jab", targets: [4], milliseconds: [700], at: Fixture.day0)
        do {
            try store.saveSequence(name: "Jab", targets: targets, milliseconds: ms, at: Fixture.day0)
            Issue.record("accepted an invalid sequence")
        } catch let error as CoachStoreError {
            #expect(error.description == message)
        }
        // The previous version is kept.
        #expect(try store.sequence(named: "Jab")?.targets == [4])
    }

    /// The store keeps only what a trainer can hold: 256 steps (a time sequence of 256 × 2
    /// octets fills ATT's 512-octet value), the one limit `PunchSequence.maxSteps`.
    @Test func sequencesLongerThanATrainerHoldsAreRefused() throws {
        #expect(PunchSequence.maxSteps == 256)
        let store = try CoachStore.inMemory()
        try store.saveSequence(name: "Long", targets: Array(repeating: 1, count: 256), milliseconds: Array(repeating: 1000, count: 256), at: Fixture.day0)
        do {
            try store.saveSequence(name: "Long", targets: Array(repeating: 0, count: 257), milliseconds: Array(repeating: 1000, count: 257), at: Fixture.day0)
            Issue.record("accepted 257 steps")
        } catch let error as CoachStoreError {
            #expect(error.description == "sequence \"Long\": step 256: 257 steps, at most 256 allowed")
        }
        #expect(try store.sequence(named: "Long")?.targets.count == 256)
    }

    @Test func invalidMaxIntervalAndEmptyNameAreRefused() throws {
        let store = try CoachStore.inMemory()
        #expect(throws: CoachStoreError.invalidMaxInterval(name: "Jab", milliseconds: 0)) {
            try store.saveSequence(name: "Jab", targets: [0], milliseconds: [1000], maxIntervalMilliseconds: 0, at: Fixture.day0)
        }
        #expect(CoachStoreError.invalidMaxInterval(name: "Jab", milliseconds: 0).description
            == "sequence \"Jab\": maximum interval 0 ms is outside 1...60000 ms")
        #expect(throws: CoachStoreError.emptyName("sequence")) {
            try store.saveSequence(name: "", targets: [0], milliseconds: [1000], at: Fixture.day0)
        }
        #expect(try store.sequences().isEmpty)
    }

    @Test func sessionStepsAreStoredAsTheyArrive() throws {
        let store = try CoachStore.inMemory()
        let athlete = try store.addAthlete(Athlete(name: "Ana", created: Fixture.day0))
        let athleteID = try #require(athlete.id)
        try store.saveSequence(name: "Jab", targets: [3, 0, 1], milliseconds: [1000, 1500, 1000], at: Fixture.day0)
        let id = try store.startSession(athleteID: athleteID, sequenceNamed: "Jab", started: Fixture.day0,
                                        deviceName: "Reflex-C1C2", deviceAddress: "C6:C5:C4:C3:C2:C1")
        try store.appendStep(sessionID: id, response: PunchResponse(reactionTimeMilliseconds: 412, target: 3, hit: true, step: 0))
        try store.appendStep(sessionID: id, response: PunchResponse(reactionTimeMilliseconds: 1500, target: 0, hit: false, wrongTargetFirst: true, step: 1))
        // Legacy 5-byte responses have no step index: they take the next one.
        let legacy = try store.appendStep(sessionID: id, response: PunchResponse(reactionTimeMilliseconds: 300, target: 1, hit: true, step: nil))
        #expect(legacy.stepIndex == 2)
        #expect(throws: CoachStoreError.invalidStep(sessionID: id, step: 3, problem: "the session's program has only 3 steps")) {
            try store.appendStep(sessionID: id, response: PunchResponse(reactionTimeMilliseconds: 300, target: 1, hit: true, step: 3))
        }
        #expect(throws: CoachStoreError.sessionNotFound(42)) {
            try store.appendStep(sessionID: 42, response: PunchResponse(reactionTimeMilliseconds: 300, target: 1, hit: true, step: 0))
        }
        // A repeated notification for step 0 replaces the first.
        try store.appendStep(sessionID: id, response: PunchResponse(reactionTimeMilliseconds: 410, target: 3, hit: true, step: 0))
        try store.finishSession(id: id, ended: Fixture.day0.addingTimeInterval(5), complete: true)

        let session = try #require(try store.session(id: id))
        #expect(session.sequenceName == "Jab")
        #expect(session.targets == [3, 0, 1])
        #expect(session.complete)
        #expect(session.ended == Fixture.day0.addingTimeInterval(5))
        #expect(session.deviceAddress == "C6:C5:C4:C3:C2:C1")
        let steps = try store.steps(sessionID: id)
        #expect(steps.map(\.stepIndex) == [0, 1, 2])
        #expect(steps.map(\.reactionMilliseconds) == [410, 1500, 300])
        #expect(steps.map(\.hit) == [true, false, true])
        #expect(steps.map(\.wrongTarget) == [false, true, false])
        #expect(try store.results(athleteID: athleteID).first?.steps == steps)
        #expect(try store.results(athleteID: 999).isEmpty)
        #expect(throws: CoachStoreError.sequenceNotFound("Nope")) {
            try store.startSession(athleteID: athleteID, sequenceNamed: "Nope", started: Fixture.day0)
        }
        #expect(throws: CoachStoreError.athleteNotFound(7)) {
            try store.startSession(athleteID: 7, program: Fixture.program([0], [100]), started: Fixture.day0)
        }
    }

    @Test func sessionSurvivesReopeningTheFile() throws {
        let path = Fixture.temporaryPath("nested/reflex.sqlite")
        let sessionID: Int64
        do {
            let store = try CoachStore(path: path)
            let athlete = try store.addAthlete(Athlete(name: "Ana", created: Fixture.day0))
            sessionID = try store.startSession(athleteID: try #require(athlete.id), program: Fixture.program([0, 1, 2], [900, 900, 900]),
                                               started: Fixture.day0)
            try store.appendStep(sessionID: sessionID, response: PunchResponse(reactionTimeMilliseconds: 350, target: 0, hit: true, step: 0))
            try store.appendStep(sessionID: sessionID, response: PunchResponse(reactionTimeMilliseconds: 900, target: 1, hit: false, step: 1))
            // The link drops here: no finishSession, and the connection is closed abruptly.
            try store.database.close()
        }
        let reopened = try CoachStore(path: path)
        let session = try #require(try reopened.session(id: sessionID))
        #expect(session.ended == nil)
        #expect(!session.complete)
        #expect(try reopened.steps(sessionID: sessionID).map(\.reactionMilliseconds) == [350, 900])
        try reopened.finishSession(id: sessionID, ended: Fixture.day0.addingTimeInterval(30), complete: false)
        #expect(try reopened.session(id: sessionID)?.ended != nil)
        #expect(ReflexStatistics.session(try reopened.results()[0]).missingSteps == 1)
    }

    @Test func defaultPathFollowsXDG() {
        #expect(CoachStore.defaultPath(environment: ["XDG_DATA_HOME": "/data", "HOME": "/home/ana"]) == "/data/bluetide/reflex.sqlite")
        #expect(CoachStore.defaultPath(environment: ["HOME": "/home/ana"]) == "/home/ana/.local/share/bluetide/reflex.sqlite")
        #expect(CoachStore.defaultPath(environment: ["XDG_DATA_HOME": "relative", "HOME": "/home/ana"])
            == "/home/ana/.local/share/bluetide/reflex.sqlite")
    }
}

@Suite("CoachStore on a shared file")
struct CoachStoreFileTests {
    @Test func aFileThatIsNotADatabaseIsRefusedWithHowToRecover() throws {
        let path = Fixture.temporaryPath("garbage.sqlite")
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: path))
        do {
            _ = try CoachStore(path: path)
            Issue.record("a damaged file was opened")
        } catch let error as CoachStoreError {
            guard case .damaged = error else { Issue.record("\(error)"); return }
            #expect(error.description.contains("is damaged") && error.description.contains(".recover"), "\(error)")
        }
    }

    @Test func aDatabaseWithADamagedPageIsRefusedBeforeAnyWrite() throws {
        let path = Fixture.temporaryPath("damaged.sqlite")
        do {
            let store = try CoachStore(path: path)
            for index in 0..<400 {
                try store.addAthlete(Athlete(name: "Athlete \(index)", notes: String(repeating: "n", count: 200), created: Fixture.day0))
            }
            try store.database.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
            try store.database.close()
        }
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        let size = try handle.seekToEnd()
        #expect(size > 16 * 4096)
        try handle.seek(toOffset: 8 * 4096)
        handle.write(Data(repeating: 0xFF, count: 4096))
        try handle.close()
        do {
            let store = try CoachStore(path: path)
            _ = try store.addAthlete(Athlete(name: "After", created: Fixture.day0))
            Issue.record("a damaged database took a write")
        } catch let error as CoachStoreError {
            guard case .damaged = error else { Issue.record("\(error)"); return }
        }
    }

    @Test func aWriterHeldUpTooLongGetsOneSentenceNamingTheStep() throws {
        let path = Fixture.temporaryPath("busy.sqlite")
        let store = try CoachStore(path: path, busyTimeout: 0.2)
        let athlete = try store.addAthlete(Athlete(name: "Ana", created: Fixture.day0))
        let session = try store.startSession(athleteID: try #require(athlete.id), program: Fixture.program([0, 1], [900, 900]), started: Fixture.day0)
        var configuration = Configuration()
        configuration.allowsUnsafeTransactions = true
        let other = try DatabaseQueue(path: path, configuration: configuration)
        try other.writeWithoutTransaction { db in try db.execute(sql: "BEGIN IMMEDIATE") }
        defer { try? other.writeWithoutTransaction { db in try db.execute(sql: "ROLLBACK") } }
        do {
            try store.appendStep(sessionID: session, response: PunchResponse(reactionTimeMilliseconds: 350, target: 0, hit: true, step: 0))
            Issue.record("the write went through a held lock")
        } catch let error as CoachStoreError {
            #expect(error.description == "could not store step 1 of session \(session): another program kept the database busy for too long; try again when it is done")
        }
    }

    @Test func aFileOpensAsAWALPoolWithABusyTimeout() throws {
        let store = try CoachStore(path: Fixture.temporaryPath("wal.sqlite"))
        #expect(store.database is DatabasePool)
        #expect(try store.database.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") } == "wal")
        #expect(try store.appliedMigrations() == ["v1", "v2", "v3", "v4", "v5"])
    }
}
