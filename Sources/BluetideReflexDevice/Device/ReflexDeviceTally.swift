/// The punches of one run on the device, counted from its events (what `reflex device --mqtt`
/// publishes as a `session` record when the run finishes or stops).
public struct ReflexDeviceTally: Sendable {
    /// One run summed up.
    public struct Summary: Sendable, Equatable {
        /// Steps answered (hit or missed).
        public var steps = 0
        public var hits = 0
        public var misses = 0
        /// Steps whose first punch landed on another target.
        public var wrongTargets = 0
        /// Whether the run finished its sequence (false: it was stopped).
        public var finished = false
        /// Sum of the hits' reaction times, milliseconds.
        var reactionTotal = 0
        /// The fastest hit, milliseconds; nil without a hit.
        public var bestReactionMilliseconds: Int?
        /// Mean reaction time of the hits, milliseconds; nil without a hit.
        public var meanReactionMilliseconds: Double? { hits > 0 ? Double(reactionTotal) / Double(hits) : nil }
    }

    private var current = Summary()

    public init() {}

    /// Counts `event`; returns the run's summary when the event ends a run that answered at
    /// least one step (nil otherwise). A new sequence starts a new count.
    public mutating func add(_ event: ReflexDeviceEvent) -> Summary? {
        switch event {
        case let .response(response):
            current.steps += 1
            if response.hit {
                current.hits += 1
                let ms = Int(response.reactionTimeMilliseconds)
                current.reactionTotal += ms
                current.bestReactionMilliseconds = min(current.bestReactionMilliseconds ?? ms, ms)
            } else {
                current.misses += 1
            }
            if response.wrongTargetFirst { current.wrongTargets += 1 }
            return nil
        case .status(.finished), .status(.stopped), .coachDisconnected(_, stoppedRun: true):
            defer { current = Summary() }
            guard current.steps > 0 else { return nil }
            var summary = current
            if case .status(.finished) = event { summary.finished = true }
            return summary
        case .sequenceReceived, .timeSequenceReceived:
            current = Summary()
            return nil
        default:
            return nil
        }
    }
}
