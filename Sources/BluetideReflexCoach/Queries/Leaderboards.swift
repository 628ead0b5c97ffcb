import BluetideReflex
import Foundation

/// The leaderboards the `board` command prints: one board per sequence, each athlete's best
/// complete session in a period and weight class.
public enum Leaderboards {
    /// One sequence's board.
    public struct Board: Sendable, Equatable {
        /// The sequence (or stored session) name.
        public var sequence: String
        /// Best first, at most the limit asked for.
        public var entries: [Leaderboard.Entry]
    }

    /// The boards of `sequence` (or, when nil, of every sequence with a complete session, by name),
    /// at most `limit` entries each, for `period` up to `now` and `weightClass` (nil: every class).
    /// - Throws: ``CoachInputError`` `.noSuchSequence` for a sequence neither saved nor stored; `CoachStoreError`.
    public static func boards(sequence: String?, period: Leaderboard.Period, weightClass: WeightClass?, limit: Int,
                              now: Date, in store: CoachStore) throws -> [Board] {
        let athletes = try store.athletes()
        var weights: [Int64: [WeightEntry]] = [:]
        for athlete in athletes { if let id = athlete.id { weights[id] = try store.weightHistory(athleteID: id) } }
        let results = try store.results()
        let names: [String]
        if let sequence {
            let known = Set(results.compactMap(\.session.sequenceName)).union(try store.sequences().map(\.name))
            guard known.contains(sequence) else { throw CoachInputError(field: "--sequence", .noSuchSequence(name: sequence, known: known.sorted())) }
            names = [sequence]
        } else {
            names = Set(results.filter(\.session.complete).compactMap(\.session.sequenceName)).sorted()
        }
        return names.map { name in
            Board(sequence: name, entries: Array(Leaderboard.board(results, athletes: athletes, weights: weights, sequence: name,
                                                                   weightClass: weightClass, period: period, now: now).prefix(limit)))
        }
    }
}
