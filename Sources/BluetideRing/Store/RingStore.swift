import Foundation
import GRDB

/// The ring's history in SQLite (through GRDB): one tidy `samples` table and bookkeeping of
/// which ring days are completely stored.
///
/// ```
/// samples(ring, kind, time, value, unit)   primary key (ring, kind, time); time = UTC seconds
/// synced_days(ring, kind, day, complete, synced_at)   day = the ring's date YYYY-MM-DD
/// syncs(id, ring, started_at, finished_at, added, status)
/// ```
/// A row is keyed by ring, kind and time, so storing the same sample again replaces it (a
/// second sync adds nothing; overlapping days merge). Each day of each kind is written in one
/// transaction together with its `synced_days` mark, so a sync cut short keeps every finished day.
public final class RingStore: Sendable {
    /// The database.
    public let database: DatabaseQueue
    /// The file, or `:memory:`.
    public let path: String

    /// Opens (creating) the database at `path`; `busyTimeout` is how long a write waits for a
    /// lock held by another program before failing.
    public convenience init(path: String, busyTimeout: TimeInterval = 2) throws {
        do {
            let folder = (path as NSString).deletingLastPathComponent
            if !folder.isEmpty { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
            var configuration = Configuration()
            configuration.busyMode = .timeout(busyTimeout)
            try self.init(database: DatabaseQueue(path: path, configuration: configuration), path: path)
        } catch let error as RingStoreError {
            throw error
        } catch {
            throw RingStoreError.from(error, action: "open the ring database", path: path)
        }
    }

    /// Wraps an open database and creates the tables.
    public init(database: DatabaseQueue, path: String = ":memory:") throws {
        self.database = database
        self.path = path
        do { try Self.migrator.migrate(database) } catch {
            throw RingStoreError.from(error, action: "prepare the ring database", path: path)
        }
    }

    /// A private in-memory store.
    public static func inMemory() throws -> RingStore { try RingStore(database: DatabaseQueue()) }

    /// `$XDG_DATA_HOME/bluetide/ring.sqlite`, else `~/.local/share/bluetide/ring.sqlite`.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            return (xdg as NSString).appendingPathComponent("bluetide/ring.sqlite")
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return (home as NSString).appendingPathComponent(".local/share/bluetide/ring.sqlite")
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE samples (
                    ring TEXT NOT NULL, kind TEXT NOT NULL, time INTEGER NOT NULL,
                    value REAL NOT NULL, unit TEXT NOT NULL,
                    PRIMARY KEY (ring, kind, time)) WITHOUT ROWID;
                CREATE INDEX samples_by_time ON samples(time);
                CREATE TABLE synced_days (
                    ring TEXT NOT NULL, kind TEXT NOT NULL, day TEXT NOT NULL,
                    complete INTEGER NOT NULL, synced_at REAL NOT NULL,
                    PRIMARY KEY (ring, kind, day)) WITHOUT ROWID;
                CREATE TABLE syncs (
                    id INTEGER PRIMARY KEY AUTOINCREMENT, ring TEXT NOT NULL,
                    started_at REAL NOT NULL, finished_at REAL, added INTEGER NOT NULL DEFAULT 0,
                    status TEXT NOT NULL);
                """)
        }
        return migrator
    }

    /// Stores `samples` of `kind` for ring day `day` (YYYY-MM-DD) and marks the day synced
    /// (`complete` when the day is over on the ring, so later syncs skip it). Returns how many
    /// rows are new. One transaction: all or nothing.
    @discardableResult
    public func store(_ samples: [RingSample], kind: String, day: String, complete: Bool, ring: String, at now: Date) throws -> Int {
        try storeNew(samples, kind: kind, day: day, complete: complete, ring: ring, at: now).count
    }

    /// ``store(_:kind:day:complete:ring:at:)``, returning the samples that were not in the store
    /// before (times rounded down to the second, as stored), in the order given: what a sync
    /// learned that no earlier sync had, e.g. to publish each sample once.
    public func storeNew(_ samples: [RingSample], kind: String, day: String, complete: Bool, ring: String, at now: Date) throws -> [RingSample] {
        do {
            return try database.write { db in
                let exists = try db.cachedStatement(sql: "SELECT 1 FROM samples WHERE ring = ? AND kind = ? AND time = ?")
                let insert = try db.cachedStatement(sql: """
                    INSERT INTO samples (ring, kind, time, value, unit) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT(ring, kind, time) DO UPDATE SET value = excluded.value, unit = excluded.unit
                    """)
                var added: [RingSample] = []
                var seen: Set<String> = []
                for s in samples {
                    let seconds = Int64(s.time.timeIntervalSince1970.rounded(.down))
                    let isNew = try Bool.fetchOne(exists, arguments: [ring, s.kind, seconds]) == nil
                    try insert.execute(arguments: [ring, s.kind, seconds, s.value, s.unit])
                    if isNew, seen.insert("\(s.kind) \(seconds)").inserted {
                        added.append(RingSample(time: Date(timeIntervalSince1970: TimeInterval(seconds)), kind: s.kind, value: s.value, unit: s.unit))
                    }
                }
                try db.execute(sql: """
                    INSERT INTO synced_days (ring, kind, day, complete, synced_at) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT(ring, kind, day) DO UPDATE SET complete = max(complete, excluded.complete), synced_at = excluded.synced_at
                    """, arguments: [ring, kind, day, complete, now.timeIntervalSince1970])
                return added
            }
        } catch {
            throw RingStoreError.from(error, action: "store \(samples.count) \(kind) samples of \(day)", path: path)
        }
    }

    /// Whether `kind` of ring day `day` is completely stored.
    public func isComplete(kind: String, day: String, ring: String) throws -> Bool {
        do {
            return try database.read { db in
                try Bool.fetchOne(db, sql: "SELECT complete FROM synced_days WHERE ring = ? AND kind = ? AND day = ?", arguments: [ring, kind, day]) ?? false
            }
        } catch {
            throw RingStoreError.from(error, action: "read what is already synced", path: path)
        }
    }

    /// When the last finished sync of `ring` ended.
    public func lastSync(ring: String) throws -> Date? {
        do {
            return try database.read { db in
                try Double.fetchOne(db, sql: "SELECT max(finished_at) FROM syncs WHERE ring = ? AND status = 'complete'", arguments: [ring])
                    .map { Date(timeIntervalSince1970: $0) }
            }
        } catch {
            throw RingStoreError.from(error, action: "read the last sync", path: path)
        }
    }

    /// Records a sync's outcome.
    public func recordSync(ring: String, started: Date, finished: Date, added: Int, status: String) throws {
        do {
            try database.write { db in
                try db.execute(
                    sql: "INSERT INTO syncs (ring, started_at, finished_at, added, status) VALUES (?, ?, ?, ?, ?)",
                    arguments: [ring, started.timeIntervalSince1970, finished.timeIntervalSince1970, added, status])
            }
        } catch {
            throw RingStoreError.from(error, action: "record the sync", path: path)
        }
    }

    /// Samples with `from <= time < to` (all when nil), oldest first, then by kind.
    public func samples(from: Date? = nil, to: Date? = nil, kinds: [String]? = nil) throws -> [RingSample] {
        do {
            return try database.read { db in
                var sql = "SELECT time, kind, value, unit FROM samples WHERE time >= ? AND time < ?"
                var arguments: StatementArguments = [
                    Int64(from?.timeIntervalSince1970.rounded(.down) ?? -1e15), Int64(to?.timeIntervalSince1970.rounded(.up) ?? 1e15),
                ]
                if let kinds {
                    sql += " AND kind IN (\(kinds.map { _ in "?" }.joined(separator: ",")))"
                    arguments += StatementArguments(kinds)
                }
                sql += " ORDER BY time, kind"
                return try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
                    RingSample(time: Date(timeIntervalSince1970: TimeInterval(row[0] as Int64)), kind: row[1], value: row[2], unit: row[3])
                }
            }
        } catch {
            throw RingStoreError.from(error, action: "read samples", path: path)
        }
    }

    /// Number of samples stored, all rings.
    public func sampleCount() throws -> Int {
        do { return try database.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM samples") ?? 0 } } catch {
            throw RingStoreError.from(error, action: "count samples", path: path)
        }
    }
}
