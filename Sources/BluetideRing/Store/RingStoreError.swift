import Foundation
import GRDB

/// Why the ring database could not be opened, read or written; one line naming what was not
/// stored and what to try.
public struct RingStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was being done, e.g. `store 288 heart_rate samples of 2026-11-20`.
    public var action: String
    /// The cause in words.
    public var reason: String
    /// What to try.
    public var hint: String

    public var description: String { "could not \(action): \(reason); \(hint)" }

    /// Translates a database error into a ring store error.
    static func from(_ error: any Error, action: String, path: String) -> RingStoreError {
        guard let db = error as? DatabaseError else {
            return RingStoreError(action: action, reason: "\(error)", hint: "check \(path)")
        }
        switch db.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return RingStoreError(action: action, reason: "the database \(path) is locked by another program", hint: "close it (or wait for it to finish) and run the command again; nothing already stored was lost")
        case .SQLITE_FULL:
            return RingStoreError(action: action, reason: "the disk holding \(path) is full", hint: "free some space and run the command again; nothing already stored was lost")
        case .SQLITE_READONLY, .SQLITE_PERM, .SQLITE_CANTOPEN:
            return RingStoreError(action: action, reason: "\(path) cannot be written (\(db.message ?? "permission denied"))", hint: "check the file's permissions or pass another --db FILE")
        case .SQLITE_NOTADB, .SQLITE_CORRUPT:
            return RingStoreError(action: action, reason: "\(path) is not a ring database (\(db.message ?? "corrupt"))", hint: "pass another --db FILE")
        default:
            return RingStoreError(action: action, reason: db.message ?? "\(db.resultCode)", hint: "check \(path)")
        }
    }
}
