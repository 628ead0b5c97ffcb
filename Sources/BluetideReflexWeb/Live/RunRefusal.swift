/// Why the dashboard did not start a run.
public enum RunRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    /// Another run is going on (one trainer, one run at a time).
    case busy(athlete: String, sequence: String)
    /// The game cannot be played as asked (the rule that refused it, in words).
    case invalidGame(String)

    /// The message for the coach.
    public var description: String {
        switch self {
        case let .busy(athlete, sequence):
            return "a session is already running (\(athlete), sequence \"\(sequence)\"): wait for it to end, or stop it first"
        case let .invalidGame(reason):
            return "the game cannot start: \(reason)"
        }
    }
}
