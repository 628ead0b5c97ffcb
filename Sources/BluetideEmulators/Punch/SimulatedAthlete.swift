/// A boxer in front of the reflex trainer: reacts to a lit target after a normally distributed
/// reaction time, sometimes misses the step altogether, sometimes hits a wrong target first.
public struct SimulatedAthlete: Hashable, Sendable {
    /// Mean reaction time, ms.
    public var reactionMeanMilliseconds: Double
    /// Standard deviation of the reaction time, ms.
    public var reactionStandardDeviationMilliseconds: Double
    /// Probability of not hitting the lit target in time.
    public var missProbability: Double
    /// Probability of hitting another target first.
    public var wrongTargetProbability: Double
    /// Fastest plausible reaction, ms.
    public static let fastestMilliseconds = 120.0

    /// Memberwise initialiser.
    public init(
        reactionMeanMilliseconds: Double = 450, reactionStandardDeviationMilliseconds: Double = 120,
        missProbability: Double = 0.05, wrongTargetProbability: Double = 0.05
    ) {
        self.reactionMeanMilliseconds = reactionMeanMilliseconds
        self.reactionStandardDeviationMilliseconds = reactionStandardDeviationMilliseconds
        self.missProbability = missProbability
        self.wrongTargetProbability = wrongTargetProbability
    }

    /// What happens at one step.
    public struct Attempt: Hashable, Sendable {
        /// Milliseconds from lighting to the hit, nil when the step times out.
        public var hitAfterMilliseconds: UInt32?
        /// Whether a wrong target was hit first.
        public var wrongTargetFirst: Bool
    }

    /// Draws the athlete's attempt at a target lit for `windowMilliseconds`.
    public func attempt(windowMilliseconds: UInt16, using random: inout SeededGenerator) -> Attempt {
        var reaction = max(
            Self.fastestMilliseconds,
            random.normal(mean: reactionMeanMilliseconds, standardDeviation: reactionStandardDeviationMilliseconds))
        let wrong = random.chance(wrongTargetProbability)
        if wrong { reaction += 150 + random.unit() * 150 }  // the detour to the wrong target
        let missed = random.chance(missProbability)
        let ms = UInt32(reaction.rounded())
        if missed || ms >= UInt32(windowMilliseconds) { return Attempt(hitAfterMilliseconds: nil, wrongTargetFirst: wrong) }
        return Attempt(hitAfterMilliseconds: max(ms, 1), wrongTargetFirst: wrong)
    }
}
