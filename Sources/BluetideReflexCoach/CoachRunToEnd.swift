import BluetideReflex

/// How a run of ``ReflexCoach/runToEnd(athleteID:sequenceName:choice:stopWhen:report:)`` ended.
public struct CoachRunEnding: Sendable {
    /// The stored session's outcome; nil when the run stopped before a session existed.
    public var outcome: CoachSessionOutcome?
    /// Reaction statistics over the session's stored steps (nil without a session).
    public var summary: ReactionSummary?
    /// What stopped the run on request (e.g. `SIGINT`); nil when it ended by itself.
    public var stopReason: String?
}

extension ReflexCoach {
    /// Runs the saved sequence `sequenceName` for `athleteID` on the trainer `choice` picks, from
    /// the search to the stored end, as `bluetide reflex coach run` does: every event goes to
    /// `report` in order; when `stopWhen` returns (a stop signal, a button) the run ends the
    /// orderly way (the trainer is told, the session is stored as incomplete with that reason,
    /// `ended` is still reported). `stopWhen` must return when its task is cancelled (it is,
    /// once the run has ended by itself). Throws what ``run(athleteID:sequenceName:choice:stop:)``
    /// throws (``CoachError``, ``CoachStoreError``), and a storage error reading the statistics.
    public func runToEnd(
        athleteID: Int64, sequenceName: String, choice: TrainerChoice = .strongest,
        stopWhen: @escaping @Sendable () async -> String,
        report: @escaping @Sendable (CoachEvent) -> Void
    ) async throws -> CoachRunEnding {
        let stop = RunStop()
        let events = run(athleteID: athleteID, sequenceName: sequenceName, choice: choice, stop: stop)
        let outcome = try await readToEnd(events, stop: stop, stopWhen: stopWhen, report: report) { event in
            if case let .ended(ending) = event { ending } else { nil }
        }
        var summary: ReactionSummary?
        if let outcome, let results = try store.results(athleteID: athleteID).first(where: { $0.session.id == outcome.sessionID }) {
            summary = ReflexStatistics.session(results).overall
        }
        return CoachRunEnding(outcome: outcome, summary: summary, stopReason: stop.reason)
    }
}

extension GymSession {
    /// Plays `mode` as ``play(_:athleteIDs:sequenceName:stop:)`` does, from the search to the
    /// stored end, as `bluetide reflex coach session` does: every event goes to `report` in
    /// order; when `stopWhen` returns, every lane stops the orderly way. Returns the game's
    /// outcome (nil when it stopped before one) and the stop's reason. `stopWhen` must return
    /// when its task is cancelled.
    public func playToEnd(
        _ mode: GymMode, athleteIDs: [Int64], sequenceName: String,
        stopWhen: @escaping @Sendable () async -> String,
        report: @escaping @Sendable (GymEvent) -> Void
    ) async throws -> (outcome: GymOutcome?, stopReason: String?) {
        let stop = RunStop()
        let events = play(mode, athleteIDs: athleteIDs, sequenceName: sequenceName, stop: stop)
        let outcome = try await readToEnd(events, stop: stop, stopWhen: stopWhen, report: report) { event in
            if case let .finished(outcome) = event { outcome } else { nil }
        }
        return (outcome, stop.reason)
    }
}

/// Reads `events` to their end, handing each to `report`, while `stopWhen` may request a stop
/// on `stop` (the stream still ends by itself, with its last report); the last value `last`
/// picks out. Structured: the stop's wait is a child task, cancelled once the events end.
func readToEnd<Event: Sendable, Outcome: Sendable>(
    _ events: AsyncThrowingStream<Event, any Error>, stop: RunStop,
    stopWhen: @escaping @Sendable () async -> String, report: @escaping @Sendable (Event) -> Void,
    last pick: (Event) -> Outcome?
) async throws -> Outcome? {
    try await withThrowingTaskGroup(of: Void.self) { group -> Outcome? in
        group.addTask {
            let reason = await stopWhen()
            if !Task.isCancelled { stop.request(reason) }
        }
        defer { group.cancelAll() }
        // Read to the end: a stop goes through the coach, which still reports the end.
        var last: Outcome?
        for try await event in events {
            report(event)
            if let outcome = pick(event) { last = outcome }
        }
        return last
    }
}
