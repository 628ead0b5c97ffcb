import BluetideSupport

/// A clock running `speed` times faster than `ContinuousClock`: with speed 20 a 1 000 ms step
/// takes 50 ms of real time. Tests and demos run the device and its simulated athlete on it so
/// a whole sequence passes in a fraction of a second, with every duration (step times, reaction
/// times, gaps) still counted in device time.
public struct AcceleratedClock: Clock {
    /// A point in device time: the device time elapsed since the clock was made.
    public struct Instant: InstantProtocol, CustomStringConvertible {
        /// Device time since the clock's zero.
        public var offset: Duration

        public init(offset: Duration) { self.offset = offset }
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        public var description: String { "\(offset)" }
    }

    /// Device seconds per real second (≥ 0.001).
    public let speed: Double
    private let base: ContinuousClock.Instant

    /// A clock starting at zero now, `speed` times faster than real time.
    public init(speed: Double) {
        self.speed = speed.isFinite ? max(speed, 0.001) : 1
        base = ContinuousClock.now
    }

    /// The current device time.
    public var now: Instant {
        let real = ContinuousClock.now.seconds(since: base)
        return Instant(offset: .nanoseconds(Int64((real * speed * 1e9).rounded())))
    }

    /// One nanosecond.
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// Sleeps until device time reaches `deadline`.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let remaining = now.duration(to: deadline).inSeconds / speed
        guard remaining > 0 else { return try Task.checkCancellation() }
        try await Task.sleep(for: .nanoseconds(Int64((remaining * 1e9).rounded(.up))))
    }
}
