import BluetideProfiles

/// A colour chase on one trainer for 1–4 players: each player owns one target and its LED
/// colour (player 1 red, 2 blue, 3 green, 4 yellow: targets 0–3, ``TargetPalette``); the trainer
/// lights the players' targets in a random order and each step counts for the target's owner.
/// Most hits wins, then the lower mean reaction time. Pure rules, no I/O.
public struct ColourChase: Hashable, Sendable {
    /// Players on one trainer, at most.
    public static let maximumPlayers = 4

    /// Players.
    public let players: Int
    /// Figures per player.
    public private(set) var tallies: [GameTally]

    /// A chase for `players` players (1...4).
    public init(players: Int) throws(GameSetupError) {
        guard (1...Self.maximumPlayers).contains(players) else {
            throw GameSetupError("a colour chase takes 1 to \(Self.maximumPlayers) athletes on one trainer, got \(players)")
        }
        self.players = players
        tallies = Array(repeating: GameTally(), count: players)
    }

    /// The target (and LED colour) of `player`.
    public func target(of player: Int) -> UInt8 { UInt8(player) }

    /// The player owning `target`, nil for a target nobody owns.
    public func owner(of target: UInt8) -> Int? { Int(target) < players ? Int(target) : nil }

    /// The program to run: `times` (ms per step, as the saved sequence has them) with each step's
    /// target drawn from the players' targets, every player lit at least once. The same seed
    /// gives the same program. Throws when there are fewer steps than players.
    public func program(times: [UInt16], seed: UInt64) throws(GameSetupError) -> PunchProgram {
        guard times.count >= players else {
            throw GameSetupError("a colour chase of \(players) players needs at least \(players) steps; the sequence has \(times.count)")
        }
        var random = SeededGenerator(seed: seed)
        var owners = Array(0..<players) + (players..<times.count).map { _ in Int(random.next() % UInt64(players)) }
        for index in stride(from: owners.count - 1, to: 0, by: -1) {
            owners.swapAt(index, Int(random.next() % UInt64(index + 1)))
        }
        do {
            return try PunchProgram(sequence: try PunchSequence(targets: owners.map(target(of:))),
                                    timeSequence: try PunchTimeSequence(milliseconds: times))
        } catch {
            throw GameSetupError("the chase's program is not valid: \(error)")
        }
    }

    /// Per player, the trainer's step indices that light the player's target, in order.
    public func stepsByPlayer(of program: PunchProgram) -> [[Int]] {
        var steps = Array(repeating: [Int](), count: players)
        for (index, target) in program.sequence.targets.enumerated() {
            if let player = owner(of: target) { steps[player].append(index) }
        }
        return steps
    }

    /// Counts one step for the owner of `target` (steps of unowned targets count for nobody).
    public mutating func record(target: UInt8, hit: Bool, milliseconds: Int) {
        guard let player = owner(of: target) else { return }
        tallies[player].record(hit: hit, milliseconds: milliseconds)
    }

    /// Players best first: most hits, then lower mean.
    public var standings: [(player: Int, tally: GameTally)] {
        tallies.indices.map { ($0, tallies[$0]) }.sorted { a, b in
            let ka = Self.key(a.1), kb = Self.key(b.1)
            return ka != kb ? ka.lexicographicallyPrecedes(kb) : a.0 < b.0
        }
    }

    static func key(_ t: GameTally) -> [Double] { [-Double(t.hits), t.meanMilliseconds ?? Double.greatestFiniteMagnitude] }

    /// The decision on the figures so far (call once the run ended).
    public var decision: GameDecision {
        let order = standings
        guard let first = order.first, first.tally.hits > 0 else { return .noResult("no player hit a target") }
        let why = "\(first.tally.hits) hits" + (first.tally.meanMilliseconds.map { ", mean \(Int($0.rounded())) ms" } ?? "")
        let tied = order.filter { Self.key($0.tally) == Self.key(first.tally) }.map(\.player)
        return tied.count > 1 ? .draw(tied, why: why) : .winner(first.player, why: why)
    }
}
