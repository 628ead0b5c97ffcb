/// A head-to-head: every lane (one athlete on one trainer) runs the same sequence at the same
/// time. Pure rules, no I/O: the session feeds each step's result and each lane's end, and asks
/// for the decision.
///
/// - ``Rule/firstTo(hits:)``: the first lane to reach N hits wins at once (the others can be
///   stopped). If every lane ends first, most hits wins, then the lower mean.
/// - ``Rule/bestMean``: every lane runs to its end; a lane whose run ended complete ranks above
///   one that did not, then the lower mean reaction time of hits, then more hits.
public struct HeadToHead: Hashable, Sendable {
    /// How the winner is found.
    public enum Rule: Hashable, Sendable, CustomStringConvertible {
        /// First lane to this many hits (1 or more).
        case firstTo(hits: Int)
        /// Lowest mean reaction time once every lane has ended.
        case bestMean

        public var description: String {
            switch self {
            case let .firstTo(hits): return "first to \(hits) hits"
            case .bestMean: return "best mean reaction time"
            }
        }
    }

    /// One lane's place in the standings.
    public struct Standing: Hashable, Sendable {
        /// The lane (0-based, in the order the athletes were given).
        public var lane: Int
        /// Its figures so far.
        public var tally: GameTally
        /// Whether its run has ended, and whether complete.
        public var ended: Bool
        public var complete: Bool
    }

    /// The rule.
    public let rule: Rule
    /// Figures per lane.
    public private(set) var tallies: [GameTally]
    /// Per lane: nil while running, else whether the run ended complete.
    public private(set) var endings: [Bool?]
    /// The decision, once there is one (it does not change afterwards).
    public private(set) var decision: GameDecision?

    /// A game of `lanes` lanes (2 or more). Throws a message naming the bad value.
    public init(lanes: Int, rule: Rule) throws(GameSetupError) {
        guard lanes >= 2 else { throw GameSetupError("a head-to-head needs at least 2 athletes, got \(lanes)") }
        if case let .firstTo(hits) = rule, hits < 1 {
            throw GameSetupError("first-to needs at least 1 hit, got \(hits)")
        }
        self.rule = rule
        tallies = Array(repeating: GameTally(), count: lanes)
        endings = Array(repeating: nil, count: lanes)
    }

    /// Counts one step of `lane`; returns the decision when this step decided the game.
    @discardableResult
    public mutating func record(lane: Int, hit: Bool, milliseconds: Int) -> GameDecision? {
        guard tallies.indices.contains(lane) else { return nil }
        tallies[lane].record(hit: hit, milliseconds: milliseconds)
        guard decision == nil, case let .firstTo(target) = rule, tallies[lane].hits >= target else { return nil }
        decision = .winner(lane, why: "first to \(target) hits")
        return decision
    }

    /// Notes that `lane`'s run ended (`complete` as the session stored it); returns the decision
    /// when this was the last lane still running and nothing had decided the game before.
    @discardableResult
    public mutating func laneEnded(_ lane: Int, complete: Bool) -> GameDecision? {
        guard endings.indices.contains(lane), endings[lane] == nil else { return nil }
        endings[lane] = complete
        guard decision == nil, endings.allSatisfy({ $0 != nil }) else { return nil }
        decision = rank()
        return decision
    }

    /// Lanes best first under the rule (the same order the decision uses).
    public var standings: [Standing] {
        let all = tallies.indices.map { Standing(lane: $0, tally: tallies[$0], ended: endings[$0] != nil, complete: endings[$0] ?? false) }
        return all.sorted { Self.better($0, $1, rule: rule) }
    }

    /// Whether `a` ranks before `b` (ties keep lane order).
    static func better(_ a: Standing, _ b: Standing, rule: Rule) -> Bool {
        let keyA = key(a, rule: rule), keyB = key(b, rule: rule)
        return keyA != keyB ? keyA.lexicographicallyPrecedes(keyB) : a.lane < b.lane
    }

    /// Smaller is better, compared in order.
    static func key(_ s: Standing, rule: Rule) -> [Double] {
        let mean = s.tally.meanMilliseconds ?? Double.greatestFiniteMagnitude
        switch rule {
        case .firstTo: return [-Double(s.tally.hits), mean]
        case .bestMean: return [s.complete ? 0 : 1, mean, -Double(s.tally.hits)]
        }
    }

    private func rank() -> GameDecision {
        let order = standings
        guard let first = order.first, first.tally.steps > 0 else { return .noResult("no lane reported a step") }
        let tied = order.filter { Self.key($0, rule: rule) == Self.key(first, rule: rule) }.map(\.lane)
        let why: String
        switch rule {
        case .firstTo: why = "most hits (\(first.tally.hits)), nobody reached the target"
        case .bestMean:
            why = first.tally.meanMilliseconds.map { "best mean \(Int($0.rounded())) ms" } ?? "no hits"
        }
        if first.tally.hits == 0 { return .noResult("no lane hit a target") }
        if tied.count > 1 { return .draw(tied, why: why) }
        return .winner(first.lane, why: why)
    }
}

/// A game that cannot be set up as asked, with the reason in one line.
public struct GameSetupError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong and what was expected.
    public var description: String
    public init(_ description: String) { self.description = description }
}
