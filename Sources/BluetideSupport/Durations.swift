/// The package's one set of `Duration` conversions and its one "time since an origin" clock
/// (issue 22 item 4): protocol state machines, models, logs and summaries count in `Double`
/// seconds or whole nanoseconds, and all of them convert here.
extension Duration {
    /// The duration in seconds, with its fraction (attoseconds included).
    public var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// The duration in milliseconds, with its fraction.
    public var inMilliseconds: Double { inSeconds * 1000 }

    /// Whole nanoseconds, rounded down; 0 for a negative duration, `UInt64.max` past it.
    public var wholeNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0, attoseconds >= 0 || seconds > 0 else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return .max }
        let fraction = attoseconds / 1_000_000_000
        return fraction >= 0 ? whole &+ UInt64(fraction) : whole &- UInt64(-fraction)
    }
}

extension InstantProtocol where Duration == Swift.Duration {
    /// Seconds from `origin` to this instant (negative when it comes before).
    public func seconds(since origin: Self) -> Double {
        origin.duration(to: self).inSeconds
    }
}

/// Time elapsed since a fixed origin on a clock: the time base of a sample stream, a log, a
/// model or a run, read in seconds.
public struct ElapsedClock<C: Clock>: Sendable where C.Duration == Duration {
    /// The clock read.
    public let clock: C
    /// The instant elapsed time counts from.
    public let origin: C.Instant

    /// Elapsed time on `clock` from now on.
    public init(clock: C) {
        self.clock = clock
        origin = clock.now
    }

    /// Elapsed time on `clock` from `origin`.
    public init(clock: C, origin: C.Instant) {
        self.clock = clock
        self.origin = origin
    }

    /// Time elapsed since the origin, now.
    public var elapsed: Duration { origin.duration(to: clock.now) }

    /// Seconds elapsed since the origin, now.
    public var seconds: Double { elapsed.inSeconds }

    /// Seconds from the origin to `instant`.
    public func seconds(at instant: C.Instant) -> Double { instant.seconds(since: origin) }
}

extension ElapsedClock {
    /// Suspends until ``elapsed`` reaches `deadline` (throws `CancellationError` when cancelled).
    public func sleep(untilElapsed deadline: Duration) async throws {
        try await clock.sleep(until: origin.advanced(by: deadline), tolerance: nil)
    }

    /// Suspends for `duration` on the clock (throws `CancellationError` when cancelled).
    public func sleep(for duration: Duration) async throws {
        try await clock.sleep(until: clock.now.advanced(by: duration), tolerance: nil)
    }
}

extension ElapsedClock where C == ContinuousClock {
    /// Elapsed time on the monotonic clock from now on.
    public init() { self.init(clock: ContinuousClock()) }
}
