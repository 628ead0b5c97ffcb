import BluetideReflex
import Foundation

/// Finds athletes by the name a coach types (case-insensitive, surrounding spaces ignored), for
/// every coach command and game.
public enum AthleteLookup {
    /// The one athlete among `athletes` called `name`.
    /// - Throws: ``CoachInputError`` (`.noSuchAthlete` listing who exists, or `.ambiguousAthlete`).
    public static func athlete(_ name: String, among athletes: [Athlete], field: String = "--athlete") throws(CoachInputError) -> Athlete {
        let wanted = name.trimmingCharacters(in: .whitespaces).lowercased()
        let matches = athletes.filter { $0.name.lowercased() == wanted }
        guard let first = matches.first, matches.count == 1 else {
            if matches.count > 1 { throw CoachInputError(field: field, .ambiguousAthlete(name: name, count: matches.count)) }
            throw CoachInputError(field: field, .noSuchAthlete(name: name, known: athletes.map(\.name)))
        }
        return first
    }

    /// The athlete called `name` in `store`.
    /// - Throws: ``CoachInputError`` as ``athlete(_:among:field:)``; `CoachStoreError` when the store cannot be read.
    public static func athlete(_ name: String, in store: CoachStore, field: String = "--athlete") throws -> Athlete {
        try athlete(name, among: try store.athletes(), field: field)
    }

    /// The names in a comma separated list (`"Ana Ruiz, Ben"`), trimmed, blanks dropped.
    /// Commas only: names have spaces.
    /// - Throws: ``CoachInputError`` `.emptyNameList` when no name is left.
    public static func names(_ list: String, field: String = "--athletes") throws(CoachInputError) -> [String] {
        let names = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !names.isEmpty else { throw CoachInputError(field: field, .emptyNameList) }
        return names
    }

    /// The athletes `names` (from ``names(_:field:)``) name, in their order, each looked up in `store`.
    /// - Throws: ``CoachInputError`` for an unknown or ambiguous name; `CoachStoreError` when the store cannot be read.
    public static func athletes(named names: [String], in store: CoachStore, field: String = "--athletes") throws -> [Athlete] {
        let all = try store.athletes()
        return try names.map { name throws(CoachInputError) in try athlete(name, among: all, field: field) }
    }
}
