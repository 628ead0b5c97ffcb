import BluetideProfiles
import Foundation
import GRDB

/// The coach's database: athletes, weight history, saved sequences and every session's step
/// results, in one SQLite file through GRDB.
///
/// Every call is its own transaction and is committed before it returns; in particular each
/// step result is written as it arrives, so a dropped link loses nothing already received.
/// A file is opened as a WAL ``DatabasePool`` with a busy timeout, so any number of readers
/// (`history`, `export`, the dashboard) and one writer at a time (a live run, a weigh-in) share it
/// without aborting each other. Every failure is a ``CoachStoreError`` that names what was being
/// stored or read. Times are always passed in by the caller (no clock reads here). Dates are
/// stored with millisecond precision.
public final class CoachStore: Sendable {
    /// The underlying database: a ``DatabasePool`` for a file, a ``DatabaseQueue`` in memory.
    public let database: any DatabaseWriter

    /// How long a write waits by default for another process's write to finish before giving up, seconds.
    public static let busyTimeout: TimeInterval = 10

    /// Opens (creating if needed) the database file at `path`, creating missing parent folders,
    /// checks that it is intact (`PRAGMA quick_check`) and runs pending migrations. A damaged
    /// file is refused with ``CoachStoreError/damaged(path:detail:)``, which says how to recover.
    public convenience init(path: String, busyTimeout: TimeInterval = CoachStore.busyTimeout) throws {
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty {
            do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) } catch {
                throw CoachStoreError.cannotOpen(path: path, reason: "cannot create the folder \(folder) (\(error.localizedDescription)); choose another --db path")
            }
        }
        var configuration = Configuration()
        configuration.busyMode = .timeout(busyTimeout)
        let pool: DatabasePool
        do { pool = try DatabasePool(path: path, configuration: configuration) } catch let error as DatabaseError {
            throw Self.openError(path: path, error)
        }
        do {
            let problems = try pool.read { db in try String.fetchAll(db, sql: "PRAGMA quick_check") }
            if problems != ["ok"] {
                throw CoachStoreError.damaged(path: path, detail: problems.prefix(3).joined(separator: "; "))
            }
        } catch let error as DatabaseError {
            throw Self.openError(path: path, error)
        }
        do { try self.init(database: pool) } catch let error as DatabaseError { throw Self.openError(path: path, error) }
    }

    /// Wraps an open database and runs pending migrations (v1, v2, ... in order).
    public init(database: any DatabaseWriter) throws {
        self.database = database
        try CoachSchema.migrator.migrate(database)
    }

    /// A private in-memory database (for tests and previews).
    public static func inMemory() throws -> CoachStore {
        try CoachStore(database: DatabaseQueue())
    }

    private static func openError(path: String, _ error: DatabaseError) -> CoachStoreError {
        switch error.resultCode {
        case .SQLITE_CORRUPT, .SQLITE_NOTADB: return .damaged(path: path, detail: error.message ?? "\(error.resultCode)")
        default: return .cannotOpen(path: path, reason: CoachStoreError.reason(for: error))
        }
    }

    /// Runs `body` in a write transaction; a database failure becomes ``CoachStoreError/storage(action:reason:)``
    /// naming `action` (e.g. `store step 3 of session 12`).
    private func write<T>(_ action: @autoclosure () -> String, _ body: (Database) throws -> T) throws -> T {
        do { return try database.write(body) } catch let error as DatabaseError {
            throw CoachStoreError.storage(action: action(), reason: CoachStoreError.reason(for: error))
        }
    }

    /// Runs `body` on a snapshot; a database failure names `action` (e.g. `read the athletes`).
    private func read<T>(_ action: @autoclosure () -> String, _ body: (Database) throws -> T) throws -> T {
        do { return try database.read(body) } catch let error as DatabaseError {
            throw CoachStoreError.storage(action: action(), reason: CoachStoreError.reason(for: error))
        }
    }

    /// The default database file: `$XDG_DATA_HOME/bluetide/reflex.sqlite`, or
    /// `~/.local/share/bluetide/reflex.sqlite` when XDG_DATA_HOME is unset or not absolute.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            return (xdg as NSString).appendingPathComponent("bluetide/reflex.sqlite")
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return (home as NSString).appendingPathComponent(".local/share/bluetide/reflex.sqlite")
    }

    /// Identifiers of the migrations applied so far, in order.
    public func appliedMigrations() throws -> [String] {
        try read("read the schema version") { db in try CoachSchema.migrator.appliedIdentifiers(db).sorted() }
    }

    // MARK: Athletes

    /// Inserts an athlete and returns it with its new id.
    @discardableResult
    public func addAthlete(_ athlete: Athlete) throws -> Athlete {
        var athlete = athlete
        athlete.name = try Self.checkedName(athlete.name, kind: "athlete")
        athlete.id = nil
        return try write("store the new athlete \"\(athlete.name)\"") { db in try athlete.inserted(db) }
    }

    /// Saves changes to an existing athlete (matched by id).
    public func updateAthlete(_ athlete: Athlete) throws {
        guard let id = athlete.id else { throw CoachStoreError.athleteNotFound(-1) }
        var athlete = athlete
        athlete.name = try Self.checkedName(athlete.name, kind: "athlete")
        try write("store the changes to athlete \"\(athlete.name)\"") { db in
            guard try Athlete.exists(db, key: id) else { throw CoachStoreError.athleteNotFound(id) }
            try athlete.update(db)
        }
    }

    /// Deletes an athlete with their weights, sessions and step results. Returns false if absent.
    @discardableResult
    public func deleteAthlete(id: Int64) throws -> Bool {
        try write("delete athlete \(id)") { db in try Athlete.deleteOne(db, key: id) }
    }

    /// The athlete with this id, if any.
    public func athlete(id: Int64) throws -> Athlete? {
        try read("read athlete \(id)") { db in try Athlete.fetchOne(db, key: id) }
    }

    /// All athletes ordered by name (ASCII case-insensitive), then id.
    public func athletes() throws -> [Athlete] {
        try read("read the athletes") { db in try Athlete.order(Column("name").collating(.nocase), Column("id")).fetchAll(db) }
    }

    // MARK: Weight

    /// Records a weigh-in for an athlete.
    @discardableResult
    public func recordWeight(athleteID: Int64, date: CalendarDate, kilograms: Double) throws -> WeightEntry {
        guard kilograms.isFinite, kilograms > 0, kilograms < 500 else { throw CoachStoreError.invalidWeight(kilograms) }
        return try write("store the weigh-in of athlete \(athleteID) on \(date.iso)") { db in
            guard try Athlete.exists(db, key: athleteID) else { throw CoachStoreError.athleteNotFound(athleteID) }
            return try WeightEntry(athleteId: athleteID, date: date, kilograms: kilograms).inserted(db)
        }
    }

    /// An athlete's weigh-ins, oldest first.
    public func weightHistory(athleteID: Int64) throws -> [WeightEntry] {
        try read("read the weigh-ins of athlete \(athleteID)") { db in
            try WeightEntry.filter(Column("athleteId") == athleteID).order(Column("date"), Column("id")).fetchAll(db)
        }
    }

    /// Removes one weigh-in. Returns false if absent.
    @discardableResult
    public func deleteWeight(id: Int64) throws -> Bool {
        try write("delete weigh-in \(id)") { db in try WeightEntry.deleteOne(db, key: id) }
    }

    // MARK: Sequences

    /// Validates and saves a sequence under `name`, replacing any sequence of the same name.
    ///
    /// Throws ``CoachStoreError/invalidSequence(name:_:)`` naming the first bad step, e.g.
    /// `sequence "Jab": step 2: target 7 is outside 0...5`.
    @discardableResult
    public func saveSequence(name: String, targets: [UInt8], milliseconds: [UInt16], maxIntervalMilliseconds: Int? = nil,
                             at saved: Date) throws -> SavedSequence {
        let name = try Self.checkedName(name, kind: "sequence")
        do {
            _ = try PunchProgram(sequence: PunchSequence(targets: targets), timeSequence: PunchTimeSequence(milliseconds: milliseconds))
        } catch {
            throw CoachStoreError.invalidSequence(name: name, error)
        }
        if let max = maxIntervalMilliseconds, !(1...60_000).contains(max) {
            throw CoachStoreError.invalidMaxInterval(name: name, milliseconds: max)
        }
        return try write("store sequence \"\(name)\"") { db in
            var record = SavedSequence(name: name, targets: targets, milliseconds: milliseconds,
                                       maxIntervalMilliseconds: maxIntervalMilliseconds, saved: saved)
            if let existing = try SavedSequence.filter(Column("name") == name).fetchOne(db) {
                record.id = existing.id
                try record.update(db)
                return record
            }
            return try record.inserted(db)
        }
    }

    /// Saves an already validated program under `name`.
    @discardableResult
    public func saveSequence(name: String, program: PunchProgram, maxIntervalMilliseconds: Int? = nil, at saved: Date) throws -> SavedSequence {
        try saveSequence(name: name, targets: program.sequence.targets, milliseconds: program.timeSequence.milliseconds,
                         maxIntervalMilliseconds: maxIntervalMilliseconds, at: saved)
    }

    /// The sequence saved under `name` (exact match), if any.
    public func sequence(named name: String) throws -> SavedSequence? {
        try read("read sequence \"\(name)\"") { db in try SavedSequence.filter(Column("name") == name).fetchOne(db) }
    }

    /// All saved sequences ordered by name.
    public func sequences() throws -> [SavedSequence] {
        try read("read the sequences") { db in try SavedSequence.order(Column("name")).fetchAll(db) }
    }

    /// Deletes the sequence saved under `name`; sessions keep their snapshots. Returns false if absent.
    @discardableResult
    public func deleteSequence(named name: String) throws -> Bool {
        try write("delete sequence \"\(name)\"") { db in try SavedSequence.filter(Column("name") == name).deleteAll(db) > 0 }
    }

    // MARK: Sessions

    /// Starts a session: stores a snapshot of the program and returns the new session id.
    public func startSession(athleteID: Int64, program: PunchProgram, sequenceName: String? = nil, started: Date,
                             deviceName: String? = nil, deviceAddress: String? = nil) throws -> Int64 {
        try write("store the start of a session for athlete \(athleteID)") { db in
            guard try Athlete.exists(db, key: athleteID) else { throw CoachStoreError.athleteNotFound(athleteID) }
            let session = try TrainingSession(
                athleteId: athleteID, sequenceName: sequenceName, targets: program.sequence.targets,
                milliseconds: program.timeSequence.milliseconds, started: started,
                deviceName: deviceName, deviceAddress: deviceAddress
            ).inserted(db)
            guard let id = session.id else { throw CoachStoreError.sessionNotFound(-1) }
            return id
        }
    }

    /// Starts a session with the sequence saved under `sequenceName`.
    public func startSession(athleteID: Int64, sequenceNamed sequenceName: String, started: Date,
                             deviceName: String? = nil, deviceAddress: String? = nil) throws -> Int64 {
        guard let saved = try sequence(named: sequenceName) else { throw CoachStoreError.sequenceNotFound(sequenceName) }
        let program: PunchProgram
        do { program = try saved.program() } catch { throw CoachStoreError.invalidSequence(name: sequenceName, error) }
        return try startSession(athleteID: athleteID, program: program, sequenceName: saved.name, started: started,
                                deviceName: deviceName, deviceAddress: deviceAddress)
    }

    /// Stores one step's result, committed before returning. A response without a step index
    /// (the device's original 5-byte format) takes the next index after those stored. A second
    /// result for the same step replaces the first (a repeated notification).
    @discardableResult
    public func appendStep(sessionID: Int64, response: PunchResponse, heartRateBpm: Int? = nil) throws -> StepResult {
        try write("store step \(response.step.map { "\(Int($0) + 1)" } ?? "result") of session \(sessionID)") { db in
            guard let session = try TrainingSession.fetchOne(db, key: sessionID) else { throw CoachStoreError.sessionNotFound(sessionID) }
            let index: Int
            if let step = response.step {
                index = Int(step)
            } else {
                index = try Int.fetchOne(db, sql: "SELECT COALESCE(MAX(stepIndex) + 1, 0) FROM step_result WHERE sessionId = ?",
                                         arguments: [sessionID]) ?? 0
            }
            guard index < session.stepCount else {
                throw CoachStoreError.invalidStep(sessionID: sessionID, step: index,
                                                  problem: "the session's program has only \(session.stepCount) steps")
            }
            guard response.target <= PunchSequence.maxTarget else {
                throw CoachStoreError.invalidStep(sessionID: sessionID, step: index, problem: "target \(response.target) is outside 0...5")
            }
            let record = StepResult(sessionId: sessionID, stepIndex: index, target: response.target, hit: response.hit,
                                    wrongTarget: response.wrongTargetFirst, reactionMilliseconds: Int64(response.reactionTimeMilliseconds),
                                    heartRateBpm: heartRateBpm.flatMap { (1...300).contains($0) ? $0 : nil })
            return try record.inserted(db, onConflict: .replace)
        }
    }

    /// Marks a session ended: `complete` when every step reported, false when stopped or the
    /// link dropped; `reason` says why in words (`finished`, `stopped: SIGINT`, …).
    public func finishSession(id: Int64, ended: Date, complete: Bool, reason: String? = nil) throws {
        try write("store the end of session \(id)") { db in
            guard var session = try TrainingSession.fetchOne(db, key: id) else { throw CoachStoreError.sessionNotFound(id) }
            session.ended = ended
            session.complete = complete
            session.endReason = reason
            try session.update(db)
        }
    }

    /// Sets or clears the coach's notes on a session.
    public func setSessionNotes(id: Int64, notes: String?) throws {
        try write("store the notes of session \(id)") { db in
            guard var session = try TrainingSession.fetchOne(db, key: id) else { throw CoachStoreError.sessionNotFound(id) }
            session.notes = notes
            try session.update(db)
        }
    }

    /// Pairs a heart-rate strap to an athlete (replacing one paired before): `device` is its
    /// advertised name or address, as `--device` takes it. Its heart rate is then stored beside
    /// each of the athlete's steps.
    public func setStrap(athleteID: Int64, device: String) throws {
        try write("pair a strap to athlete \(athleteID)") { db in
            guard try Athlete.exists(db, key: athleteID) else { throw CoachStoreError.athleteNotFound(athleteID) }
            try db.execute(sql: "INSERT OR REPLACE INTO strap (athleteId, device) VALUES (?, ?)", arguments: [athleteID, device])
        }
    }

    /// Forgets the athlete's strap; false when none was paired.
    @discardableResult
    public func removeStrap(athleteID: Int64) throws -> Bool {
        try write("forget the strap of athlete \(athleteID)") { db in
            try db.execute(sql: "DELETE FROM strap WHERE athleteId = ?", arguments: [athleteID])
            return db.changesCount > 0
        }
    }

    /// The strap paired to the athlete (name or address), if any.
    public func strap(athleteID: Int64) throws -> String? {
        try read("read the strap of athlete \(athleteID)") { db in
            try String.fetchOne(db, sql: "SELECT device FROM strap WHERE athleteId = ?", arguments: [athleteID])
        }
    }

    /// The session with this id, if any.
    public func session(id: Int64) throws -> TrainingSession? {
        try read("read session \(id)") { db in try TrainingSession.fetchOne(db, key: id) }
    }

    /// Sessions of one athlete (or all when nil), oldest first.
    public func sessions(athleteID: Int64? = nil) throws -> [TrainingSession] {
        try read("read the sessions") { db in
            var request = TrainingSession.all()
            if let athleteID { request = request.filter(Column("athleteId") == athleteID) }
            return try request.order(Column("started"), Column("id")).fetchAll(db)
        }
    }

    /// A session's step results ordered by step index.
    public func steps(sessionID: Int64) throws -> [StepResult] {
        try read("read the steps of session \(sessionID)") { db in
            try StepResult.filter(Column("sessionId") == sessionID).order(Column("stepIndex")).fetchAll(db)
        }
    }

    /// Sessions with their step results for one athlete (or all when nil), oldest first, read in
    /// one consistent snapshot.
    public func results(athleteID: Int64? = nil) throws -> [SessionResults] {
        try read("read the results") { db in
            var request = TrainingSession.all()
            if let athleteID { request = request.filter(Column("athleteId") == athleteID) }
            let sessions = try request.order(Column("started"), Column("id")).fetchAll(db)
            var steps: [Int64: [StepResult]] = [:]
            var stepRequest = StepResult.all()
            if let athleteID {
                stepRequest = stepRequest.filter(sql: "sessionId IN (SELECT id FROM session WHERE athleteId = ?)", arguments: [athleteID])
            }
            for step in try stepRequest.fetchAll(db) { steps[step.sessionId, default: []].append(step) }
            return sessions.map { SessionResults(session: $0, steps: $0.id.flatMap { steps[$0] } ?? []) }
        }
    }

    /// Deletes a session and its step results. Returns false if absent.
    @discardableResult
    public func deleteSession(id: Int64) throws -> Bool {
        try write("delete session \(id)") { db in try TrainingSession.deleteOne(db, key: id) }
    }

    // MARK: Settings

    /// The setting stored under `key`, if any.
    public func setting(_ key: String) throws -> String? {
        try read("read the setting \(key)") { db in
            try String.fetchOne(db, sql: "SELECT value FROM setting WHERE key = ?", arguments: [key])
        }
    }

    /// Stores `value` under `key`, replacing what was there.
    public func setSetting(_ key: String, to value: String) throws {
        try write("store the setting \(key)") { db in
            try db.execute(sql: "INSERT OR REPLACE INTO setting (key, value) VALUES (?, ?)", arguments: [key, value])
        }
    }

    /// `name` by ``InputRules/name(_:maximum:)`` (trimmed, no control characters), so that a name
    /// the forms and the CLI refuse cannot come in through the API either.
    static func checkedName(_ name: String, kind: String) throws -> String {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw CoachStoreError.emptyName(kind) }
        do {
            return try InputRules.name(trimmed, maximum: kind == "sequence" ? InputRules.maximumSequenceNameLength : InputRules.maximumNameLength)
        } catch {
            throw CoachStoreError.invalidText(field: "\(kind) name", error)
        }
    }
}
