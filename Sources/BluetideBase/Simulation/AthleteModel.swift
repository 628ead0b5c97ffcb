import BluetideSupport

/// How a simulated athlete behaves: reaction time distribution and error rates. The package's
/// one simulated athlete: the GPIO simulation's (`SimulatedAthlete` on a simulated chip) and the
/// emulated punch trainer's (`PunchTrainerModel`) both draw from ``AthleteModel``. The defaults
/// are the documented ones (docs/gpio-config.md: 350 ms mean, 80 ms standard deviation, 120…1500 ms).
public struct AthleteBehaviour: Sendable, Hashable {
    /// Mean reaction time, milliseconds.
    public var meanReactionMilliseconds: Double
    /// Standard deviation of the reaction time, milliseconds.
    public var reactionStandardDeviationMilliseconds: Double
    /// Shortest possible reaction, milliseconds (draws below are clamped up to it).
    public var minimumReactionMilliseconds: Double
    /// Longest possible reaction, milliseconds (draws above are clamped down to it).
    public var maximumReactionMilliseconds: Double
    /// Probability (0…1) that the athlete does not hit anything for a lit target.
    public var missProbability: Double
    /// Probability (0…1) that the athlete first hits a wrong target (then the right one after
    /// a second reaction time).
    public var wrongTargetProbability: Double
    /// How long a hit keeps the sensor active, milliseconds.
    public var holdMilliseconds: Double

    public init(
        meanReactionMilliseconds: Double = 350, reactionStandardDeviationMilliseconds: Double = 80,
        minimumReactionMilliseconds: Double = 120, maximumReactionMilliseconds: Double = 1500,
        missProbability: Double = 0.05, wrongTargetProbability: Double = 0.05, holdMilliseconds: Double = 150
    ) {
        self.meanReactionMilliseconds = meanReactionMilliseconds
        self.reactionStandardDeviationMilliseconds = reactionStandardDeviationMilliseconds
        self.minimumReactionMilliseconds = minimumReactionMilliseconds
        self.maximumReactionMilliseconds = maximumReactionMilliseconds
        self.missProbability = missProbability
        self.wrongTargetProbability = wrongTargetProbability
        self.holdMilliseconds = holdMilliseconds
    }
}

/// What a simulated athlete does when a target lights up.
public enum AthleteResponse: Sendable, Hashable {
    /// Hits the lit target after the given reaction time (milliseconds).
    case hit(target: Int, afterMilliseconds: Double)
    /// Hits `wrongTarget` after `afterMilliseconds`, then the lit target `correctionMilliseconds` later.
    case wrongTarget(wrongTarget: Int, afterMilliseconds: Double, correctionMilliseconds: Double)
    /// Hits nothing.
    case miss
}

/// The decisions of a simulated athlete, without any timing or I/O: given a lit target, draw
/// what happens (a pure function of the seed and the sequence of calls).
public struct AthleteModel: Sendable, Hashable {
    /// The behaviour being simulated.
    public let behaviour: AthleteBehaviour
    /// Number of targets (wrong targets are drawn among the others).
    public let targetCount: Int
    private var rng: SplitMix64

    public init(behaviour: AthleteBehaviour, targetCount: Int, seed: UInt64) {
        self.behaviour = behaviour
        self.targetCount = targetCount
        self.rng = SplitMix64(seed: seed)
    }

    /// A reaction time in milliseconds: normal(mean, sd), clamped to [minimum, maximum].
    public mutating func drawReactionMilliseconds() -> Double {
        let b = behaviour
        let raw = b.meanReactionMilliseconds + b.reactionStandardDeviationMilliseconds * rng.standardNormal()
        let low = min(b.minimumReactionMilliseconds, b.maximumReactionMilliseconds)
        return min(max(raw, low), b.maximumReactionMilliseconds)
    }

    /// What the athlete does when `target` lights up.
    public mutating func respond(toLit target: Int) -> AthleteResponse {
        let roll = rng.unit()
        if roll < behaviour.missProbability { return .miss }
        let reaction = drawReactionMilliseconds()
        if targetCount > 1, roll < behaviour.missProbability + behaviour.wrongTargetProbability {
            // Any other target, uniformly.
            let pick = Int(rng.next() % UInt64(targetCount - 1))
            let wrong = pick >= target ? pick + 1 : pick
            return .wrongTarget(wrongTarget: wrong, afterMilliseconds: reaction, correctionMilliseconds: drawReactionMilliseconds())
        }
        return .hit(target: target, afterMilliseconds: reaction)
    }
}
