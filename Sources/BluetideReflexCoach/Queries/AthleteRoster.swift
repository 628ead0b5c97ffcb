import BluetideReflex
import Foundation

/// The coach's athletes as the `athletes` commands (and a dashboard) show and change them:
/// every query and change is one call on a ``CoachStore``.
public enum AthleteRoster {
    /// An athlete with the number of sessions stored for them.
    public struct Entry: Sendable, Equatable {
        public var athlete: Athlete
        /// Sessions stored (complete or not).
        public var sessions: Int
    }

    /// An athlete's record, weigh-ins, session count and paired strap.
    public struct Profile: Sendable, Equatable {
        public var athlete: Athlete
        /// Weigh-ins, oldest first.
        public var weights: [WeightEntry]
        /// Sessions stored (complete or not).
        public var sessions: Int
        /// The paired heart-rate strap's name or address, nil when none.
        public var strap: String?
    }

    /// Every athlete, in store order, with their session count.
    public static func list(in store: CoachStore) throws -> [Entry] {
        let athletes = try store.athletes()
        if athletes.isEmpty { return [] }
        let sessions = try store.sessions()
        return athletes.map { athlete in Entry(athlete: athlete, sessions: sessions.filter { $0.athleteId == athlete.id }.count) }
    }

    /// The profile of the athlete called `name`.
    /// - Throws: ``CoachInputError`` for an unknown or ambiguous name; `CoachStoreError`.
    public static func profile(_ name: String, in store: CoachStore) throws -> Profile {
        let athlete = try AthleteLookup.athlete(name, in: store)
        let id = athlete.id ?? -1
        let weights = try store.weightHistory(athleteID: id)
        let sessions = try store.sessions(athleteID: id).count
        return Profile(athlete: athlete, weights: weights, sessions: sessions, strap: try store.strap(athleteID: id))
    }

    /// Adds `athlete` unless one of the same name (case-insensitive) exists; returns it with its id.
    /// - Throws: ``CoachInputError`` `.athleteExists`; `CoachStoreError` when the store refuses it.
    public static func add(_ athlete: Athlete, to store: CoachStore) throws -> Athlete {
        if try store.athletes().contains(where: { $0.name.lowercased() == athlete.name.lowercased() }) {
            throw CoachInputError(field: "NAME", .athleteExists(name: athlete.name))
        }
        return try store.addAthlete(athlete)
    }

    /// Records the weigh-in of the athlete called `name`: `kilograms` on `date`.
    /// - Returns: the athlete and the stored entry.
    public static func recordWeight(_ name: String, kilograms: Double, on date: CalendarDate, in store: CoachStore) throws -> (Athlete, WeightEntry) {
        let athlete = try AthleteLookup.athlete(name, in: store)
        return (athlete, try store.recordWeight(athleteID: athlete.id ?? -1, date: date, kilograms: kilograms))
    }

    /// Pairs the strap called (or at) `device` to the athlete called `name`.
    /// - Returns: the athlete.
    public static func pairStrap(_ name: String, device: String, in store: CoachStore) throws -> Athlete {
        let athlete = try AthleteLookup.athlete(name, in: store)
        try store.setStrap(athleteID: athlete.id ?? -1, device: device)
        return athlete
    }

    /// Forgets the strap of the athlete called `name`.
    /// - Returns: the athlete and whether a strap was paired.
    public static func removeStrap(_ name: String, in store: CoachStore) throws -> (Athlete, removed: Bool) {
        let athlete = try AthleteLookup.athlete(name, in: store)
        return (athlete, try store.removeStrap(athleteID: athlete.id ?? -1))
    }
}
