import BluetideProfiles
import GRDB

/// Why the coach store refused a change. Descriptions are meant for the user as they are.
public enum CoachStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A name (athlete or sequence) is empty after trimming whitespace; the associated value says which kind.
    case emptyName(String)
    /// The sequence's targets or times break the device's rules (targets 0...5, 1...60 000 ms,
    /// equal lengths, at most `PunchSequence.maxSteps` (256) steps).
    case invalidSequence(name: String, PunchValidationError)
    /// A text field (`athlete name`) breaks ``InputRules`` (too long, control characters).
    case invalidText(field: String, InputProblem)
    /// The maximum interval between punches is outside 1...60 000 ms.
    case invalidMaxInterval(name: String, milliseconds: Int)
    /// A weight outside 0 < kg < 500 (or not a number).
    case invalidWeight(Double)
    /// No athlete with this id.
    case athleteNotFound(Int64)
    /// No session with this id.
    case sessionNotFound(Int64)
    /// No saved sequence with this name.
    case sequenceNotFound(String)
    /// A step result that does not fit its session (index beyond the program, target out of range).
    case invalidStep(sessionID: Int64, step: Int, problem: String)
    /// The database failed while doing `action` (`store step 3 of session 12`); `reason` says
    /// what went wrong and what to do, in words.
    case storage(action: String, reason: String)
    /// The database file cannot be opened (permissions, path, locked for too long).
    case cannotOpen(path: String, reason: String)
    /// The database file is damaged (failed its integrity check, or is not a database).
    case damaged(path: String, detail: String)

    /// The message for the user, e.g. `sequence "Jab": step 2: target 7 is outside 0...5`.
    public var description: String {
        switch self {
        case let .emptyName(kind): return "\(kind) name is empty"
        case let .invalidText(field, problem): return "\(field): \(problem)"
        case let .invalidSequence(name, error): return "sequence \"\(name)\": \(error.description)"
        case let .invalidMaxInterval(name, ms):
            return "sequence \"\(name)\": maximum interval \(ms) ms is outside 1...60000 ms"
        case let .invalidWeight(kg): return "weight \(kg) kg is outside 0...500 kg"
        case let .athleteNotFound(id): return "no athlete with id \(id)"
        case let .sessionNotFound(id): return "no session with id \(id)"
        case let .sequenceNotFound(name): return "no saved sequence named \"\(name)\""
        case let .invalidStep(session, step, problem): return "session \(session) step \(step + 1): \(problem)"
        case let .storage(action, reason): return "could not \(action): \(reason)"
        case let .cannotOpen(path, reason): return "cannot open the coach database \(path): \(reason)"
        case let .damaged(path, detail):
            return "the coach database \(path) is damaged (\(detail)); nothing was changed. Restore a backup, or recover what "
                + "is readable with `sqlite3 \(path) .recover | sqlite3 recovered.sqlite` and use --db recovered.sqlite"
        }
    }

    /// One clause for a SQLite failure: what happened and what to do, without SQL or row dumps.
    static func reason(for error: DatabaseError) -> String {
        switch error.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return "another program kept the database busy for too long; try again when it is done"
        case .SQLITE_FULL: return "the disk is full; free some space and try again"
        case .SQLITE_CORRUPT, .SQLITE_NOTADB:
            return "the database file is damaged; restore a backup, or recover it with `sqlite3 FILE .recover`"
        case .SQLITE_READONLY: return "the database file is read-only; check its permissions"
        case .SQLITE_IOERR: return "the disk reported an input/output error; check the disk and try again"
        case .SQLITE_CANTOPEN: return "the file cannot be opened; check the path and its permissions"
        case .SQLITE_PERM, .SQLITE_AUTH: return "access was denied; check the file's permissions"
        case .SQLITE_CONSTRAINT: return "it conflicts with data already stored"
        default: return "SQLite reported \(error.message ?? "error \(error.resultCode.rawValue)")"
        }
    }
}
