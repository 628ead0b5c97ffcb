import GRDB

/// The coach database's schema history. Each migration is fixed once released: change the
/// schema only by appending a new migration, never by editing an old one.
public enum CoachSchema {
    /// Migration identifiers in the order they run.
    public static let migrationNames = ["v1", "v2", "v3", "v4", "v5"]

    /// All migrations: `v1` creates the tables, `v2` adds `session.notes` and an index for
    /// per-athlete history queries, `v3` adds `session.endReason`, `v4` a `setting` table, `v5`
    /// the heart rate beside each step and a `strap` table (each athlete's paired strap).
    public static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1", migrate: createV1)
        migrator.registerMigration("v2", migrate: migrateV2)
        migrator.registerMigration("v3", migrate: migrateV3)
        migrator.registerMigration("v4", migrate: migrateV4)
        migrator.registerMigration("v5", migrate: migrateV5)
        return migrator
    }

    /// v1: athlete, weight, sequence, session, step_result.
    static func createV1(_ db: Database) throws {
        try db.create(table: "athlete") { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("name", .text).notNull()
            t.column("birthDate", .text)
            t.column("sex", .text)
            t.column("stance", .text).notNull().defaults(to: "orthodox")
            t.column("notes", .text).notNull().defaults(to: "")
            t.column("created", .datetime).notNull()
        }
        try db.create(table: "weight") { t in
            t.autoIncrementedPrimaryKey("id")
            t.belongsTo("athlete", onDelete: .cascade).notNull()
            t.column("date", .text).notNull()
            t.column("kilograms", .double).notNull()
        }
        try db.create(table: "sequence") { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("name", .text).notNull().unique()
            t.column("targets", .text).notNull()
            t.column("milliseconds", .text).notNull()
            t.column("maxIntervalMilliseconds", .integer)
            t.column("saved", .datetime).notNull()
        }
        try db.create(table: "session") { t in
            t.autoIncrementedPrimaryKey("id")
            t.belongsTo("athlete", onDelete: .cascade).notNull()
            t.column("sequenceName", .text)
            t.column("targets", .text).notNull()
            t.column("milliseconds", .text).notNull()
            t.column("started", .datetime).notNull()
            t.column("ended", .datetime)
            t.column("complete", .boolean).notNull().defaults(to: false)
            t.column("deviceName", .text)
            t.column("deviceAddress", .text)
        }
        try db.create(table: "step_result") { t in
            t.autoIncrementedPrimaryKey("id")
            t.belongsTo("session", onDelete: .cascade).notNull()
            t.column("stepIndex", .integer).notNull()
            t.column("target", .integer).notNull()
            t.column("hit", .boolean).notNull()
            t.column("wrongTarget", .boolean).notNull().defaults(to: false)
            t.column("reactionMilliseconds", .integer).notNull()
            t.uniqueKey(["sessionId", "stepIndex"])
        }
    }

    /// v2: coach's notes per session, and an index for "sessions of an athlete by start time".
    static func migrateV2(_ db: Database) throws {
        try db.alter(table: "session") { t in
            t.add(column: "notes", .text)
        }
        try db.create(index: "session_on_athlete_started", on: "session", columns: ["athleteId", "started"])
    }

    /// v3: why each session ended, so a stopped, interrupted or failed run says so.
    static func migrateV3(_ db: Database) throws {
        try db.alter(table: "session") { t in
            t.add(column: "endReason", .text)
        }
    }

    /// v4: the coach's settings (key and text value), e.g. the dashboard password's hash.
    static func migrateV4(_ db: Database) throws {
        try db.create(table: "setting") { t in
            t.primaryKey("key", .text)
            t.column("value", .text).notNull()
        }
    }

    /// v5: `step_result.heartRateBpm` (the athlete's heart rate when the step's result arrived,
    /// null without a strap) and `strap` (the heart-rate strap paired to an athlete: a name or
    /// an address, as `--device` takes it).
    static func migrateV5(_ db: Database) throws {
        try db.alter(table: "step_result") { t in
            t.add(column: "heartRateBpm", .integer)
        }
        try db.create(table: "strap") { t in
            t.primaryKey("athleteId", .integer).references("athlete", onDelete: .cascade)
            t.column("device", .text).notNull()
        }
    }
}
