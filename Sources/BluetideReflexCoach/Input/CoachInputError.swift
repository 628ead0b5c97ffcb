/// Input a coach command (or the dashboard) was given that names nothing usable: which field,
/// what was expected, what came. Its ``description`` is the one line a user reads.
public struct CoachInputError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, with the values that matter.
    public enum Kind: Sendable, Hashable {
        /// No athlete has `name`; `known` lists who exists (in store order).
        case noSuchAthlete(name: String, known: [String])
        /// `count` (two or more) athletes have `name`.
        case ambiguousAthlete(name: String, count: Int)
        /// An athlete called `name` exists already (names are unique, case-insensitive).
        case athleteExists(name: String)
        /// `athlete` has no session `id`.
        case noSuchSession(athlete: String, id: Int64)
        /// No sequence `name` is saved or stored; `known` lists those that are (sorted).
        case noSuchSequence(name: String, known: [String])
        /// A random sequence of `steps` steps: a trainer holds 1 to `maximum`.
        case stepCount(steps: Int, maximum: Int)
        /// A random sequence's times lit, `minimum`…`maximum` ms: not 1 ≤ min ≤ max ≤ 60000.
        case timeWindow(minimum: UInt16, maximum: UInt16)
        /// The list was empty (after dropping blank items).
        case emptyList
        /// The list of athlete names was empty (after dropping blank items).
        case emptyNameList
        /// Item `step` (from 1) is not a target 0…5.
        case badTarget(step: Int, item: String)
        /// Item `step` (from 1) is not a time 1…60000 ms.
        case badTime(step: Int, item: String)
        /// Neither one time nor one per step: `times` values for `steps` steps.
        case timeCountMismatch(times: Int, steps: Int)
    }

    /// The option or argument the input came from (`--athlete`, `--athletes`, `--targets`, `--times`).
    public var field: String
    /// What went wrong.
    public var kind: Kind

    public init(field: String, _ kind: Kind) {
        self.field = field
        self.kind = kind
    }

    /// What the field expects, in words.
    public var expected: String {
        switch kind {
        case .noSuchAthlete, .ambiguousAthlete: return "the name of exactly one athlete"
        case .athleteExists: return "a name no athlete has yet"
        case .noSuchSequence: return "a saved or stored sequence name"
        case .noSuchSession: return "one of the athlete's session ids (see history)"
        case let .stepCount(_, maximum): return "1 to \(maximum) steps"
        case .timeWindow: return "1 ≤ min ≤ max ≤ 60000 ms"
        case .emptyList: return "a list separated by commas"
        case .emptyNameList: return "athlete names separated by commas"
        case .badTarget: return "a target 0...5"
        case .badTime: return "a time in 1...60000 ms"
        case .timeCountMismatch: return "one time, or one per step"
        }
    }

    /// What came instead.
    public var given: String {
        switch kind {
        case let .noSuchAthlete(name, _), let .ambiguousAthlete(name, _), let .athleteExists(name), let .noSuchSequence(name, _): return name
        case let .noSuchSession(_, id): return String(id)
        case .emptyList, .emptyNameList: return ""
        case let .stepCount(steps, _): return String(steps)
        case let .timeWindow(minimum, maximum): return "\(minimum)...\(maximum)"
        case let .badTarget(_, item), let .badTime(_, item): return item
        case let .timeCountMismatch(times, _): return "\(times) values"
        }
    }

    /// True when the message leads with the field (`--targets: …`): bad input of that option.
    /// An unknown or ambiguous athlete reads as a lookup that found nothing.
    public var namesField: Bool {
        switch kind {
        case .noSuchAthlete, .ambiguousAthlete, .athleteExists, .noSuchSession, .noSuchSequence: return false
        default: return true
        }
    }

    public var description: String {
        switch kind {
        case let .noSuchAthlete(name, known):
            let list = known.isEmpty ? "none yet: add one with `athletes add NAME`" : known.joined(separator: ", ")
            return "no athlete named \"\(name)\" (athletes: \(list))"
        case let .ambiguousAthlete(name, count):
            return "\(count) athletes are named \"\(name)\""
        case let .athleteExists(name):
            return "an athlete named \"\(name)\" exists already"
        case let .noSuchSession(athlete, id):
            return "\(athlete) has no session \(id) (see history)"
        case let .noSuchSequence(name, known):
            return "no sequence named \"\(name)\" (known: \(known.isEmpty ? "none" : known.joined(separator: ", ")))"
        case let .stepCount(steps, maximum):
            return "\(field) \(steps): expected 1 to \(maximum) (a trainer holds at most \(maximum) steps); try \(field) \(maximum)"
        case let .timeWindow(minimum, maximum):
            return "--min-time \(minimum) / --max-time \(maximum): expected 1 ≤ min ≤ max ≤ 60000 ms"
        case .emptyList:
            return "\(field): empty list"
        case .emptyNameList:
            return "\(field): empty list; give names separated by commas, e.g. Ana,Ben"
        case let .badTarget(step, item):
            return "\(field): step \(step): \"\(item)\" is not a target 0...5"
        case let .badTime(step, item):
            return "\(field): step \(step): \"\(item)\" is not a time in 1...60000 ms"
        case let .timeCountMismatch(times, steps):
            return "\(field) has \(times) values but --targets has \(steps) steps: give one time, or one per step"
        }
    }
}
