import BluetideProfiles
import Foundation

/// Why the generator cannot produce a sequence with the given settings.
public enum SequenceGeneratorError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Step count outside 1...`PunchSequence.maxSteps` (256).
    case stepCount(Int)
    /// No targets to choose from, or a target outside 0...5.
    case targets([UInt8])
    /// Only one distinct target while immediate repeats are forbidden.
    case repeatsUnavoidable(UInt8)
    /// A time range or distribution outside 1...60 000 ms.
    case times(String)

    /// The message for the user.
    public var description: String {
        switch self {
        case let .stepCount(n): return "step count \(n) is outside 1...\(PunchSequence.maxSteps)"
        case let .targets(t): return "targets \(t) must be a non-empty list of indices 0...5"
        case let .repeatsUnavoidable(t): return "only target \(t) is allowed, so immediate repeats cannot be avoided"
        case let .times(problem): return problem
        }
    }
}

/// Builds random training programs: N steps over chosen targets, optionally never lighting the
/// same target twice in a row, with per-step times drawn uniformly or from a clamped normal
/// distribution. The same settings and seed always give the same program.
public struct RandomSequenceGenerator: Hashable, Sendable {
    /// How each step's time (milliseconds lit) is drawn.
    public enum TimeDistribution: Hashable, Sendable {
        /// Every whole millisecond in the range equally likely.
        case uniform(ClosedRange<UInt16>)
        /// Normal with the given mean and standard deviation (ms), redrawn when outside
        /// `range` (up to 32 times, then clamped), rounded to whole milliseconds.
        case normal(mean: Double, standardDeviation: Double, range: ClosedRange<UInt16>)
    }

    /// Number of steps, 1...`PunchSequence.maxSteps` (256).
    public var stepCount: Int
    /// Targets to choose from (duplicates are ignored), each 0...5.
    public var targets: [UInt8]
    /// When true, no step lights the same target as the step before.
    public var avoidImmediateRepeats: Bool
    /// How times are drawn.
    public var times: TimeDistribution

    /// Defaults: all six targets, no immediate repeats, 800...2000 ms uniformly.
    public init(stepCount: Int, targets: [UInt8] = [0, 1, 2, 3, 4, 5], avoidImmediateRepeats: Bool = true,
                times: TimeDistribution = .uniform(800...2000)) {
        self.stepCount = stepCount
        self.targets = targets
        self.avoidImmediateRepeats = avoidImmediateRepeats
        self.times = times
    }

    /// Generates the program for `seed`; throws when the settings cannot give a valid program.
    public func generate(seed: UInt64) throws(SequenceGeneratorError) -> PunchProgram {
        var rng = SeededGenerator(seed: seed)
        return try generate(using: &rng)
    }

    /// Generates a program drawing from `rng` (which advances).
    public func generate(using rng: inout SeededGenerator) throws(SequenceGeneratorError) -> PunchProgram {
        guard (1...PunchSequence.maxSteps).contains(stepCount) else { throw .stepCount(stepCount) }
        var choices: [UInt8] = []
        for t in targets where !choices.contains(t) { choices.append(t) }
        guard !choices.isEmpty, choices.allSatisfy({ $0 <= PunchSequence.maxTarget }) else { throw .targets(targets) }
        if avoidImmediateRepeats, stepCount > 1, choices.count == 1 { throw .repeatsUnavoidable(choices[0]) }
        try validateTimes()

        var sequence: [UInt8] = []
        var milliseconds: [UInt16] = []
        sequence.reserveCapacity(stepCount)
        milliseconds.reserveCapacity(stepCount)
        for _ in 0..<stepCount {
            if avoidImmediateRepeats, let previous = sequence.last {
                let others = choices.filter { $0 != previous }
                sequence.append(others[Int(rng.below(UInt64(others.count)))])
            } else {
                sequence.append(choices[Int(rng.below(UInt64(choices.count)))])
            }
            milliseconds.append(drawTime(&rng))
        }
        do {
            return try PunchProgram(sequence: PunchSequence(targets: sequence), timeSequence: PunchTimeSequence(milliseconds: milliseconds))
        } catch {
            // Unreachable: every value was checked above; reported rather than trapping.
            throw .times(error.description)
        }
    }

    private func validateTimes() throws(SequenceGeneratorError) {
        let allowed = PunchTimeSequence.timeRange
        switch times {
        case let .uniform(range):
            guard allowed.contains(range.lowerBound), allowed.contains(range.upperBound) else {
                throw .times("time range \(range.lowerBound)...\(range.upperBound) ms is outside 1...60000 ms")
            }
        case let .normal(mean, sd, range):
            guard allowed.contains(range.lowerBound), allowed.contains(range.upperBound) else {
                throw .times("time range \(range.lowerBound)...\(range.upperBound) ms is outside 1...60000 ms")
            }
            guard mean.isFinite, sd.isFinite, sd >= 0 else {
                throw .times("normal distribution needs a finite mean and a standard deviation ≥ 0 (mean \(mean), sd \(sd))")
            }
        }
    }

    private func drawTime(_ rng: inout SeededGenerator) -> UInt16 {
        switch times {
        case let .uniform(range):
            let span = UInt64(range.upperBound - range.lowerBound) + 1
            return range.lowerBound + UInt16(rng.below(span))
        case let .normal(mean, sd, range):
            let low = Double(range.lowerBound), high = Double(range.upperBound)
            var value = mean
            for _ in 0..<32 {
                value = (mean + sd * rng.standardNormal()).rounded()
                if value >= low && value <= high { break }
            }
            return UInt16(min(max(value.isFinite ? value : low, low), high))
        }
    }
}
