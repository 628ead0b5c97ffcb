/// The clock a ``VirtualLink`` runs on, as link time (``LinkTime``: how long since the link was
/// created): any `Clock` with `Duration` steps, so tests drive a link with a manual clock and
/// nothing real waits.
struct LinkClock: Sendable {
    /// Link time now.
    let now: @Sendable () -> LinkTime
    /// Suspends until link time `deadline` (throws when the task is cancelled).
    let sleep: @Sendable (_ deadline: LinkTime) async throws -> Void

    init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let start = clock.now
        now = { start.duration(to: clock.now) }
        sleep = { deadline in try await clock.sleep(until: start.advanced(by: deadline), tolerance: nil) }
    }
}
