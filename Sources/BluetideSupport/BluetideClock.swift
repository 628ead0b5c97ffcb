/// The clock a Bluetide host and the layers above it run on: any `Clock` that counts in
/// `Duration`, behind one concrete type so it can sit in a configuration value.
///
/// Every time limit, retry delay, reconnect back-off and scan length of a ``Bluetooth`` handle
/// waits on this clock. The default, ``continuous``, is the monotonic clock; tests (and fast
/// simulations) pass a ``ManualClock`` so time moves only when they move it, and nothing waits
/// in real time.
public struct BluetideClock: Clock, Sendable {
    /// A point on the clock: the time since the clock was wrapped.
    public struct Instant: InstantProtocol, CustomStringConvertible, Sendable {
        /// Time since the wrapped clock's origin.
        public var offset: Duration

        public init(offset: Duration) { self.offset = offset }

        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }

        public func duration(to other: Instant) -> Duration { other.offset - offset }

        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }

        public var description: String { "\(offset)" }
    }

    private let read: @Sendable () -> Duration
    private let sleeper: @Sendable (_ deadline: Duration, _ tolerance: Duration?) async throws -> Void
    public let minimumResolution: Duration
    /// Whether this wraps the monotonic `ContinuousClock` (the host stack then bounds each step
    /// of its own time on a starved machine, as it does by default).
    public let isContinuous: Bool
    /// The wrapped clock when it is a ``ManualClock`` (tests reach it to move time).
    public let manual: ManualClock?

    /// Wraps `clock`; its instants count from now.
    public init<C: Clock>(_ clock: C) where C.Duration == Duration {
        if let wrapped = clock as? BluetideClock {
            self = wrapped
            return
        }
        let origin = clock.now
        read = { origin.duration(to: clock.now) }
        sleeper = { deadline, tolerance in try await clock.sleep(until: origin.advanced(by: deadline), tolerance: tolerance) }
        minimumResolution = clock.minimumResolution
        isContinuous = clock is ContinuousClock
        manual = clock as? ManualClock
    }

    /// The monotonic clock (the default everywhere).
    public static let continuous = BluetideClock(ContinuousClock())

    /// The current instant.
    public var now: Instant { Instant(offset: read()) }

    /// Suspends until `deadline` (throws `CancellationError` when the task is cancelled).
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try await sleeper(deadline.offset, tolerance)
    }
}
