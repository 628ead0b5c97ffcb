/// A relay: teams of equal size, each on its own trainer; a team's members run the same sequence
/// one after another (leg after leg), the teams at the same time. Pure rules, no I/O.
///
/// A team's time is the sum of its steps' times, a miss costing its full window (what the
/// trainer reports for a miss), so a miss is never cheaper than a slow hit. A team whose every
/// leg ended complete ranks above one with a leg cut short (a lost trainer, a stop); then the
/// lower time, then more hits.
public struct Relay: Hashable, Sendable {
    /// What the session does after a leg ended.
    public enum Next: Hashable, Sendable {
        /// Start the leg of this member (index within the team).
        case leg(member: Int)
        /// The team has run all its legs.
        case teamDone
    }

    /// One team's place in the standings.
    public struct Standing: Hashable, Sendable {
        /// The team (0-based).
        public var team: Int
        /// All its legs together.
        public var tally: GameTally
        /// Legs ended so far.
        public var legsRun: Int
        /// Legs in all (team size).
        public var legs: Int
        /// True when every leg ran and each ended complete.
        public var allComplete: Bool
    }

    /// Members per team.
    public let teamSize: Int
    /// Figures per team (all legs so far).
    public private(set) var tallies: [GameTally]
    /// Legs ended per team.
    public private(set) var legsRun: [Int]
    /// Per team: whether a leg ended incomplete.
    public private(set) var cutShort: [Bool]
    /// The decision once every team has run all its legs.
    public private(set) var decision: GameDecision?

    /// `teams` teams (1 or more) of `teamSize` members (1 or more).
    public init(teams: Int, teamSize: Int) throws(GameSetupError) {
        guard teams >= 1 else { throw GameSetupError("a relay needs at least 1 team, got \(teams)") }
        guard teamSize >= 1 else { throw GameSetupError("a relay team needs at least 1 member, got \(teamSize)") }
        self.teamSize = teamSize
        tallies = Array(repeating: GameTally(), count: teams)
        legsRun = Array(repeating: 0, count: teams)
        cutShort = Array(repeating: false, count: teams)
    }

    /// Splits `members` in order into `count` teams of equal size (`A,B,C,D` in 2 teams is `A,B`
    /// and `C,D`). Throws when they do not divide evenly, since unequal teams run unequal steps.
    public static func teams<T>(of members: [T], count: Int) throws(GameSetupError) -> [[T]] {
        guard count >= 1 else { throw GameSetupError("--teams \(count): expected 1 or more") }
        guard members.count >= count, members.count % count == 0 else {
            throw GameSetupError("\(members.count) athletes do not split into \(count) teams of equal size; give a multiple of \(count)")
        }
        let size = members.count / count
        return (0..<count).map { Array(members[($0 * size)..<(($0 + 1) * size)]) }
    }

    /// Counts one step of `team`'s current leg.
    public mutating func record(team: Int, hit: Bool, milliseconds: Int) {
        guard tallies.indices.contains(team) else { return }
        tallies[team].record(hit: hit, milliseconds: milliseconds)
    }

    /// Ends `team`'s current leg (`complete` as its session was stored) and says what comes next.
    /// A leg cut short does not end the relay: the next member still runs.
    public mutating func legEnded(team: Int, complete: Bool) -> Next {
        guard legsRun.indices.contains(team), legsRun[team] < teamSize else { return .teamDone }
        legsRun[team] += 1
        if !complete { cutShort[team] = true }
        if legsRun[team] < teamSize { return .leg(member: legsRun[team]) }
        if decision == nil, legsRun.allSatisfy({ $0 == teamSize }) { decision = rank() }
        return .teamDone
    }

    /// Teams best first.
    public var standings: [Standing] {
        tallies.indices.map {
            Standing(team: $0, tally: tallies[$0], legsRun: legsRun[$0], legs: teamSize,
                     allComplete: legsRun[$0] == teamSize && !cutShort[$0])
        }.sorted { a, b in
            let ka = Self.key(a), kb = Self.key(b)
            return ka != kb ? ka.lexicographicallyPrecedes(kb) : a.team < b.team
        }
    }

    static func key(_ s: Standing) -> [Int] { [s.allComplete ? 0 : 1, s.tally.totalMilliseconds, -s.tally.hits] }

    private func rank() -> GameDecision {
        let order = standings
        guard let first = order.first, first.tally.steps > 0 else { return .noResult("no team reported a step") }
        let why = "\(first.tally.totalMilliseconds) ms over \(first.tally.steps) steps, \(first.tally.hits) hits"
            + (first.allComplete ? "" : ", no team ran every leg complete")
        if order.count == 1 { return .winner(first.team, why: why) }
        let tied = order.filter { Self.key($0) == Self.key(first) }.map(\.team)
        return tied.count > 1 ? .draw(tied, why: why) : .winner(first.team, why: why)
    }
}
