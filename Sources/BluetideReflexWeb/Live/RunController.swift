import BluetideReflex
import BluetideReflexCoach
import Foundation

/// The one owner of the dashboard's trainer runs: starts a session through the server's
/// ``ReflexCoach`` (one at a time), turns its events into ``LiveRunMessage``s and hands them
/// to every page that listens.
///
/// A listener first gets the messages of the current (or last) run, so a phone that opens the
/// run page mid-session catches up, then every new message as it happens.
public actor RunController {
    /// What the controller is doing, for the JSON endpoint and the run page.
    public struct Snapshot: Sendable, Hashable, Codable {
        /// True while a run is going on.
        public var running: Bool
        /// The current or last run's number (0 before the first).
        public var run: Int
        /// Its messages so far.
        public var messages: [LiveRunMessage]
    }

    private struct ActiveRun {
        var number: Int
        var athlete: String
        var sequence: String
        var task: Task<Void, Never>
        var stop: RunStop
    }

    private let coach: ReflexCoach
    private let choice: TrainerChoice
    private let laneStraps: [TrainerChoice]
    private var runNumber = 0
    private var active: ActiveRun?
    private var log: [LiveRunMessage] = []
    private var listeners: [UUID: AsyncStream<LiveRunMessage>.Continuation] = [:]

    /// A controller running sessions with `coach` on the trainer picked by `choice`. In a game,
    /// the athlete in position i without a strap of their own in the store wears `laneStraps[i]`
    /// (the emulated straps of `serve --emulate`).
    public init(coach: ReflexCoach, choice: TrainerChoice = .strongest, laneStraps: [TrainerChoice] = []) {
        self.coach = coach
        self.choice = choice
        self.laneStraps = laneStraps
    }

    /// The store the coach writes to.
    public nonisolated var store: CoachStore { coach.store }

    /// True while a run is going on.
    public var isRunning: Bool { active != nil }

    /// The current state and the current (or last) run's messages.
    public var snapshot: Snapshot { Snapshot(running: active != nil, run: runNumber, messages: log) }

    /// Starts `sequence` for `athlete`; returns the run's number. Refuses while another run is
    /// going on.
    @discardableResult
    public func start(athlete: Athlete, sequence: SavedSequence) throws(RunRefusal) -> Int {
        if let active { throw .busy(athlete: active.athlete, sequence: active.sequence) }
        runNumber += 1
        let number = runNumber
        log = []
        var started = LiveRunMessage(kind: .started, run: number, text: "\(athlete.name): sequence \"\(sequence.name)\"")
        started.athleteId = athlete.id
        started.athlete = athlete.name
        started.sequence = sequence.name
        started.targets = sequence.targets
        started.stepCount = sequence.targets.count
        publish(started)
        let stop = RunStop()
        let events = coach.run(athleteID: athlete.id ?? -1, sequenceName: sequence.name, choice: choice, stop: stop)
        let task = Task { [weak self] in
            var ended = false
            do {
                for try await event in events {
                    if case .ended = event { ended = true }
                    if let message = LiveRunMessage.from(event, run: number) { await self?.publish(message) }
                }
                if !ended {
                    await self?.publish(LiveRunMessage(kind: .ended, run: number, text: "stopped: \(stop.reason ?? "cancelled")"))
                }
            } catch let CoachError.stopped(reason) {
                // Stopped while scanning or connecting: an ending, not a failure.
                await self?.publish(LiveRunMessage(kind: .ended, run: number, text: CoachError.stopped(reason).description))
            } catch {
                let text = (error as? CoachError)?.description ?? "\(error)"
                await self?.publish(LiveRunMessage(kind: .failed, run: number, text: text))
            }
            await self?.finished(number)
        }
        active = ActiveRun(number: number, athlete: athlete.name, sequence: sequence.name, task: task, stop: stop)
        return number
    }

    /// Starts a game (``GymSession``) of `mode` between `athletes` (lanes, relay teams in order,
    /// or chase colours) on `sequence`; its lanes' messages carry ``LiveRunMessage/lane``.
    /// Refuses while another run or game is going on, or when the game cannot be set up.
    @discardableResult
    public func startGame(mode: GymMode, athletes: [Athlete], sequence: SavedSequence) throws(RunRefusal) -> Int {
        if let active { throw .busy(athlete: active.athlete, sequence: active.sequence) }
        let ids = athletes.map { $0.id ?? -1 }
        do { _ = try GymSession.check(mode, athleteIDs: ids, sequenceName: sequence.name, store: coach.store) } catch {
            throw .invalidGame((error as? CoachError)?.description ?? "\(error)")
        }
        runNumber += 1
        let number = runNumber
        log = []
        let names = Dictionary(athletes.map { ($0.id ?? -1, $0.name) }, uniquingKeysWith: { a, _ in a })
        let sides: [[String]]
        switch mode {
        case let .relay(teams): sides = ((try? Relay.teams(of: athletes.map(\.name), count: teams)) ?? [])
        default: sides = athletes.map { [$0.name] }
        }
        let modeName: String
        switch mode {
        case .headToHead: modeName = "head-to-head"
        case .relay: modeName = "relay"
        case .chase: modeName = "chase"
        }
        let who = athletes.map(\.name).joined(separator: ", ")
        var started = LiveRunMessage(kind: .gameStarted, run: number, text: "\(mode): \(who), sequence \"\(sequence.name)\"")
        started.mode = modeName
        started.lanes = sides
        started.sequence = sequence.name
        started.targets = sequence.targets
        started.stepCount = sequence.targets.count
        publish(started)
        let stop = RunStop()
        var gym = GymSession(coach: coach)
        if case .chase = mode {} else {
            for (index, id) in ids.enumerated() where index < laneStraps.count && (try? coach.store.strap(athleteID: id)) ?? nil == nil {
                gym.straps[id] = laneStraps[index]
            }
        }
        let events = gym.play(mode, athleteIDs: ids, sequenceName: sequence.name, stop: stop)
        func sideName(_ side: Int) -> String {
            sides.indices.contains(side) ? sides[side].joined(separator: " & ") : "side \(side + 1)"
        }
        func words(_ decision: GameDecision) -> (String, Int?) {
            switch decision {
            case let .winner(side, why): return ("\(sideName(side)) wins (\(why))", side + 1)
            case let .draw(list, why): return ("draw: \(list.map(sideName).joined(separator: ", ")) (\(why))", nil)
            case let .noResult(why): return ("no result (\(why))", nil)
            }
        }
        let task = Task { [weak self] in
            do {
                for try await event in events {
                    switch event {
                    case let .lane(lane, athleteID, coachEvent):
                        guard var message = LiveRunMessage.from(coachEvent, run: number) else { continue }
                        message.lane = lane + 1
                        message.athleteId = athleteID
                        message.athlete = names[athleteID]
                        await self?.publish(message)
                    case let .runStarting(lane, athleteID, _):
                        var message = LiveRunMessage(kind: .progress, run: number, text: "\(names[athleteID] ?? "?") starts")
                        message.lane = lane + 1
                        message.athleteId = athleteID
                        message.athlete = names[athleteID]
                        await self?.publish(message)
                    case let .laneFailed(lane, athleteID, text):
                        var message = LiveRunMessage(kind: .failed, run: number, text: text)
                        message.lane = lane + 1
                        message.athlete = names[athleteID]
                        await self?.publish(message)
                    case let .decided(decision):
                        var message = LiveRunMessage(kind: .decided, run: number, text: words(decision).0)
                        message.winner = words(decision).1
                        await self?.publish(message)
                    case let .finished(outcome):
                        var message = LiveRunMessage(kind: .gameOver, run: number, text: words(outcome.decision).0)
                        message.winner = words(outcome.decision).1
                        message.mode = modeName
                        message.sequence = sequence.name
                        message.standings = outcome.standings.map {
                            LiveRunMessage.Standing(
                                place: $0.place, side: $0.side + 1, athletes: $0.athleteIDs.map { names[$0] ?? "?" }, steps: $0.tally.steps,
                                hits: $0.tally.hits, meanMilliseconds: $0.tally.meanMilliseconds.map { Int($0.rounded()) },
                                totalMilliseconds: $0.tally.totalMilliseconds)
                        }
                        await self?.publish(message)
                    case .scanning, .trainers:
                        break
                    }
                }
            } catch {
                let text = (error as? CoachError)?.description ?? "\(error)"
                await self?.publish(LiveRunMessage(kind: .failed, run: number, text: text))
            }
            await self?.finished(number)
        }
        active = ActiveRun(number: number, athlete: who, sequence: sequence.name, task: task, stop: stop)
        return number
    }

    /// Stops the current run for `reason` (the trainer is sent `stop`, the session is kept as
    /// incomplete with `stopped: <reason>` as its end reason). Returns false when nothing was running.
    @discardableResult
    public func stop(reason: String = "stopped from the dashboard") -> Bool {
        guard let active else { return false }
        active.stop.request(reason)
        return true
    }

    /// Waits until the current run (if any) is over.
    public func waitUntilIdle() async {
        while let task = active?.task { await task.value }
    }

    /// A stream of messages: the current (or last) run's so far, then each new one. Ends when
    /// the listener stops iterating (or ``finishListeners()``).
    public func listen() -> AsyncStream<LiveRunMessage> {
        let (stream, continuation) = AsyncStream<LiveRunMessage>.makeStream(bufferingPolicy: .unbounded)
        if log.isEmpty {
            continuation.yield(LiveRunMessage(kind: .idle, run: runNumber, text: "no session yet"))
        }
        for message in log { continuation.yield(message) }
        let id = UUID()
        listeners[id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.removeListener(id) }
        }
        return stream
    }

    /// Number of pages listening (for tests and the status line).
    public var listenerCount: Int { listeners.count }

    /// Ends every listener's stream (server shutdown).
    public func finishListeners() {
        for continuation in listeners.values { continuation.finish() }
        listeners.removeAll()
    }

    private func removeListener(_ id: UUID) { listeners[id] = nil }

    private func publish(_ message: LiveRunMessage) {
        log.append(message)
        for continuation in listeners.values { continuation.yield(message) }
    }

    private func finished(_ number: Int) {
        if active?.number == number { active = nil }
    }
}
