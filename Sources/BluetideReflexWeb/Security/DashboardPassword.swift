import BluetideReflex
import Foundation

/// Why the coach's dashboard password was not set: which field, what was expected, what came.
public enum DashboardPasswordError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The password is too weak or malformed; `problem` says how (``PasswordHash/problem(with:)``).
    case refused(problem: String)
    /// Hashing failed (the system's random source), `reason` in words.
    case hashing(reason: String)

    /// The field: `password`.
    public var field: String { "password" }

    /// What a password must be.
    public var expected: String { "a password the dashboard accepts (see PasswordHash.problem)" }

    public var description: String {
        switch self {
        case let .refused(problem): return "\(problem); choose another"
        case let .hashing(reason): return "cannot hash the password: \(reason)"
        }
    }
}

/// Sets the coach's dashboard password (asked of every phone by `serve --lan`), stored only as a
/// salted hash in the coach database's settings.
public enum DashboardPassword {
    /// Checks `password`, then (only when it is acceptable) opens `store`, hashes and stores it.
    /// - Throws: ``DashboardPasswordError``; `CoachStoreError` when the store refuses the write;
    ///   whatever opening `store` throws.
    public static func set(_ password: String, in store: @autoclosure () throws -> CoachStore) throws {
        if let problem = PasswordHash.problem(with: password) { throw DashboardPasswordError.refused(problem: problem) }
        let opened = try store()
        let hash: String
        do { hash = try PasswordHash.make(password) } catch { throw DashboardPasswordError.hashing(reason: "\(error)") }
        try opened.setSetting(PasswordHash.settingKey, to: hash)
    }
}
