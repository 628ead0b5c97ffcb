import Foundation

/// A body-mass class for leaderboards: athletes up to ``upperKilograms`` (nil: the heaviest,
/// open class), above the class below it.
public struct WeightClass: Hashable, Sendable, Codable, CustomStringConvertible {
    /// Upper limit in kilograms, inclusive; nil for the open class at the top.
    public var upperKilograms: Double?

    /// Upper limits of the gym's classes, kg (the last class is everything above 92 kg).
    public static let limits: [Double] = [48, 51, 54, 57, 60, 63.5, 67, 71, 75, 80, 86, 92]

    /// Every class, lightest first.
    public static let all: [WeightClass] = limits.map { WeightClass(upperKilograms: $0) } + [WeightClass(upperKilograms: nil)]

    /// The class of someone weighing `kilograms`.
    public static func of(kilograms: Double) -> WeightClass {
        WeightClass(upperKilograms: limits.first { kilograms <= $0 })
    }

    /// Reads `63.5` (the class up to 63.5 kg) or `92+` (the open class); nil when it names none.
    public init?(parsing text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed == "\(Self.text(Self.limits.last ?? 0))+" { upperKilograms = nil; return }
        guard let value = Double(trimmed), Self.limits.contains(value) else { return nil }
        upperKilograms = value
    }

    /// A class with this upper limit (nil: open).
    public init(upperKilograms: Double?) { self.upperKilograms = upperKilograms }

    /// `up to 63.5 kg`, `over 92 kg`.
    public var description: String {
        upperKilograms.map { "up to \(Self.text($0)) kg" } ?? "over \(Self.text(Self.limits.last ?? 0)) kg"
    }

    /// What `--weight-class` takes for it: `63.5`, `92+`.
    public var argument: String { upperKilograms.map(Self.text) ?? "\(Self.text(Self.limits.last ?? 0))+" }

    static func text(_ value: Double) -> String { value == value.rounded() ? String(Int(value)) : String(value) }
}

/// Leaderboards over stored sessions: one entry per athlete (their best session), per
/// sequence, optionally per weight class and time window. Pure: the caller reads the store.
///
/// A session counts when it ended complete. Its score is the mean time per step with a miss
/// costing its whole window (what the trainer reports for a miss), so speed and accuracy both
/// count; lower is better, ties go to the earlier session.
public enum Leaderboard {
    /// Which sessions count by when they started.
    public enum Period: String, Sendable, Hashable, CaseIterable {
        /// The UTC day of `now`.
        case day
        /// The seven days up to `now`.
        case week
        /// Every session.
        case all

        /// Whether a session started at `started` counts at `now`.
        public func contains(_ started: Date, now: Date) -> Bool {
            switch self {
            case .day: return CalendarDate(utcDayOf: started) == CalendarDate(utcDayOf: now)
            case .week: return started <= now && now.timeIntervalSince(started) < 7 * 86_400
            case .all: return true
            }
        }
    }

    /// One line of a board.
    public struct Entry: Hashable, Sendable {
        /// 1 for the best.
        public var rank: Int
        /// The athlete.
        public var athlete: Athlete
        /// The athlete's best counting session.
        public var session: TrainingSession
        /// Its figures (hits, hit rate, mean …).
        public var summary: ReactionSummary
        /// Mean time per step, misses costing their window, ms: the score.
        public var scoreMilliseconds: Double
        /// The athlete's class by the last weigh-in on or before the session's day; nil without one.
        public var weightClass: WeightClass?
    }

    /// The score of `steps`: mean time per step, misses counting their window; nil without steps.
    public static func score(_ steps: [StepResult]) -> Double? {
        // In Double: an Int64 sum of stored values could overflow.
        steps.isEmpty ? nil : steps.reduce(0.0) { $0 + Double($1.reactionMilliseconds) } / Double(steps.count)
    }

    /// The class of `weights` (an athlete's weigh-ins) on `day`: the last weigh-in on or before it.
    public static func weightClass(_ weights: [WeightEntry], on day: CalendarDate) -> WeightClass? {
        weights.filter { !(day < $0.date) }.max { $0.date < $1.date }.map { WeightClass.of(kilograms: $0.kilograms) }
    }

    /// The board of `sequence`: the best counting session of each athlete among `results`, in
    /// `period` at `now`, of `weightClass` when given (athletes without a weigh-in then left out).
    public static func board(_ results: [SessionResults], athletes: [Athlete], weights: [Int64: [WeightEntry]],
                             sequence: String, weightClass: WeightClass? = nil, period: Period = .all, now: Date) -> [Entry] {
        let byID = Dictionary(athletes.compactMap { a in a.id.map { ($0, a) } }, uniquingKeysWith: { a, _ in a })
        var best: [Int64: Entry] = [:]
        for result in results where result.session.complete && result.session.sequenceName == sequence
            && period.contains(result.session.started, now: now) {
            guard let athlete = byID[result.session.athleteId], let score = score(result.steps) else { continue }
            let cls = self.weightClass(weights[result.session.athleteId] ?? [], on: CalendarDate(utcDayOf: result.session.started))
            if let weightClass, cls != weightClass { continue }
            let entry = Entry(rank: 0, athlete: athlete, session: result.session, summary: ReflexStatistics.summary(of: result.steps),
                              scoreMilliseconds: score, weightClass: cls)
            if let current = best[result.session.athleteId], !better(entry, than: current) { continue }
            best[result.session.athleteId] = entry
        }
        return best.values.sorted { better($0, than: $1) }.enumerated().map { index, entry in
            var ranked = entry
            ranked.rank = index + 1
            return ranked
        }
    }

    static func better(_ a: Entry, than b: Entry) -> Bool {
        if a.scoreMilliseconds != b.scoreMilliseconds { return a.scoreMilliseconds < b.scoreMilliseconds }
        if a.session.started != b.session.started { return a.session.started < b.session.started }
        return (a.session.id ?? 0) < (b.session.id ?? 0)
    }
}
