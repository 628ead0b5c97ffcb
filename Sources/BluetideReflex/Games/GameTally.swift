/// One player's (or team's) running figures in a game: steps seen, hits and their reaction
/// times. A miss's time is the step's window (what the trainer reports for a miss), so
/// ``totalMilliseconds`` is the time the steps took in all, misses costing their full window.
public struct GameTally: Hashable, Sendable, Codable {
    /// Steps with a result.
    public var steps = 0
    /// Steps hit in time.
    public var hits = 0
    /// Sum of the hits' reaction times, ms.
    public var hitMilliseconds = 0
    /// Sum of every step's time (hits: reaction time; misses: the window), ms.
    public var totalMilliseconds = 0
    /// Fastest hit, ms.
    public var bestMilliseconds: Int?

    /// An empty tally.
    public init() {}

    /// Steps that timed out.
    public var misses: Int { steps - hits }

    /// Mean reaction time of the hits, ms; nil without hits.
    public var meanMilliseconds: Double? { hits == 0 ? nil : Double(hitMilliseconds) / Double(hits) }

    /// Counts one step's result (`milliseconds` as the trainer reports it).
    public mutating func record(hit: Bool, milliseconds: Int) {
        steps += 1
        totalMilliseconds += max(0, milliseconds)
        guard hit else { return }
        hits += 1
        hitMilliseconds += max(0, milliseconds)
        bestMilliseconds = min(bestMilliseconds ?? Int.max, milliseconds)
    }

    /// Adds another tally (a relay team's legs).
    public mutating func add(_ other: GameTally) {
        steps += other.steps
        hits += other.hits
        hitMilliseconds += other.hitMilliseconds
        totalMilliseconds += other.totalMilliseconds
        if let best = other.bestMilliseconds { bestMilliseconds = min(bestMilliseconds ?? Int.max, best) }
    }
}

/// The outcome of a game once decided.
public enum GameDecision: Hashable, Sendable, CustomStringConvertible {
    /// One side won (a lane of a head-to-head, a team of a relay, a player of a chase), and why in words.
    case winner(Int, why: String)
    /// Several sides tied on every rule, and why in words.
    case draw([Int], why: String)
    /// Nobody can be ranked (no side finished a step, or every side's run failed).
    case noResult(String)

    public var description: String {
        switch self {
        case let .winner(side, why): return "side \(side + 1) wins (\(why))"
        case let .draw(sides, why): return "draw between sides \(sides.map { String($0 + 1) }.joined(separator: ", ")) (\(why))"
        case let .noResult(why): return "no result (\(why))"
        }
    }
}
