import BluetideProfiles

/// Why the coach store refused a change. Descriptions are meant for the user as they are.
public enum CoachStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A name (athlete or sequence) is empty after trimming whitespace; the associated value says which kind.
    case emptyName(String)
    /// The sequence's targets or times break the device's rules (targets 0...5, 1...60 000 ms,
    /// equal lengths, at most 512 steps).
    case invalidSequence(name: String, PunchValidationError)
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

    /// The message for the user, e.g. `sequence "Jab": step 2: target 7 is outside 0...5`.
    public var description: String {
        switch self {
        case let .emptyName(kind): return "\(kind) name is empty"
        case let .invalidSequence(name, error): return "sequence \"\(name)\": \(error.description)"
        case let .invalidMaxInterval(name, ms):
            return "sequence \"\(name)\": maximum interval \(ms) ms is outside 1...60000 ms"
        case let .invalidWeight(kg): return "weight \(kg) kg is outside 0...500 kg"
        case let .athleteNotFound(id): return "no athlete with id \(id)"
        case let .sessionNotFound(id): return "no session with id \(id)"
        case let .sequenceNotFound(name): return "no saved sequence named \"\(name)\""
        case let .invalidStep(session, step, problem): return "session \(session) step \(step): \(problem)"
        }
    }
}
