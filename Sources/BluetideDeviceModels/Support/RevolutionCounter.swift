/// A wheel or crank turning at a known rate, counted the way a real sensor does: the count
/// advances once per **whole** revolution, and the event time is the instant of the most recent
/// revolution (not the time of the tick), in `ticksPerSecond` units wrapping at 2^16.
///
/// Rates may change between ``advance(to:revolutionsPerSecond:)`` calls; within one call the rate
/// is taken as constant, so call it often (every tick) for accurate timing.
public struct RevolutionCounter: Hashable, Sendable {
    /// Whole revolutions so far (callers truncate to the wire width, e.g. uint16 crank).
    public private(set) var revolutions: UInt64 = 0
    /// Time of the last revolution, seconds on the model's clock.
    public private(set) var lastEventSeconds: Double = 0
    /// Event time resolution: 1024 (CSC, CP crank) or 2048 (CP wheel).
    public let ticksPerSecond: Double
    /// Fraction of the current revolution done, 0..<1.
    private var phase: Double = 0
    private var lastTime: Double?

    /// Memberwise initialiser.
    public init(ticksPerSecond: Double) { self.ticksPerSecond = ticksPerSecond }

    /// The event time as a wrapped uint16 in `ticksPerSecond` units.
    public var lastEventTicks: UInt16 {
        let ticks = (lastEventSeconds * ticksPerSecond).rounded(.down)
        guard ticks.isFinite, ticks >= 0 else { return 0 }
        return UInt16(truncatingIfNeeded: UInt64(ticks.truncatingRemainder(dividingBy: 65536)))
    }

    /// Advances to `now` at `rate` revolutions per second (0 = not turning); returns how many
    /// revolutions completed.
    @discardableResult
    public mutating func advance(to now: Double, revolutionsPerSecond rate: Double) -> Int {
        guard let last = lastTime else {
            lastTime = now
            lastEventSeconds = now
            return 0
        }
        guard now > last else { return 0 }  // time standing still or going back: nothing turns
        lastTime = now
        let dt = now - last
        guard rate > 0, rate.isFinite else { return 0 }
        let total = phase + rate * dt
        let whole = Int(total.rounded(.down))
        if whole > 0 {
            // Revolution `whole` completed when the phase reached `whole`.
            lastEventSeconds = last + (Double(whole) - phase) / rate
            revolutions &+= UInt64(whole)
        }
        phase = total - Double(whole)
        return whole
    }

    /// Sets the count (SC/CP control point "set cumulative value"); timing is kept.
    public mutating func setRevolutions(_ value: UInt64) { revolutions = value }
}
