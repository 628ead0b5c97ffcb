import Bluetide
import BluetideProfiles
import BluetideReflex
import Foundation
import Synchronization

/// Which game a ``GymSession`` plays.
public enum GymMode: Sendable, Hashable, CustomStringConvertible {
    /// Every athlete on a trainer of their own, the same sequence at once (``HeadToHead``).
    case headToHead(HeadToHead.Rule)
    /// Athletes split in order into `teams` equal teams, one trainer per team, legs one after
    /// another (``Relay``).
    case relay(teams: Int)
    /// 1–4 athletes on one trainer, each owning a colour (``ColourChase``); `seed` draws the order.
    case chase(seed: UInt64)

    public var description: String {
        switch self {
        case let .headToHead(rule): return "head-to-head (\(rule))"
        case let .relay(teams): return "relay (\(teams) team\(teams == 1 ? "" : "s"))"
        case .chase: return "colour chase"
        }
    }

    /// Trainers the game needs for `athletes` athletes.
    public func trainers(for athletes: Int) -> Int {
        switch self {
        case .headToHead: return athletes
        case let .relay(teams): return teams
        case .chase: return 1
        }
    }
}

/// What a ``GymSession`` reports, in order per lane (a lane is a head-to-head athlete's trainer,
/// a relay team's trainer, or the one chase trainer).
public enum GymEvent: Sendable {
    /// Scanning for `count` trainers, up to `seconds`.
    case scanning(count: Int, seconds: Double)
    /// The trainers found, lane `i` on `trainers[i]`.
    case trainers([Advertisement])
    /// A lane starts a run for an athlete (a relay: the leg of team member `member`).
    case runStarting(lane: Int, athleteID: Int64, member: Int)
    /// A lane's coach event, for `athleteID` (a chase step: the step's owner).
    case lane(Int, athleteID: Int64, CoachEvent)
    /// A lane's run failed before it had a session (connection refused, trainer gone).
    case laneFailed(Int, athleteID: Int64, String)
    /// The game is decided (a first-to can be decided while lanes still run; they are then stopped).
    case decided(GameDecision)
    /// Every lane has ended; the results are stored.
    case finished(GymOutcome)
}

/// One side (lane, team or chase player) at the end of a game.
public struct GymStanding: Sendable, Hashable {
    /// 1 for the best.
    public var place: Int
    /// Side index (lane, team or player, from 0).
    public var side: Int
    /// The side's athletes (a relay team's members in leg order).
    public var athleteIDs: [Int64]
    /// Its figures.
    public var tally: GameTally
}

/// One stored session of a game.
public struct GymRun: Sendable, Hashable {
    /// The lane it ran on.
    public var lane: Int
    /// Whose session.
    public var athleteID: Int64
    /// The stored session; nil when the run failed before one existed.
    public var sessionID: Int64?
    /// Stored complete.
    public var complete: Bool
    /// Why it ended.
    public var reason: String
}

/// How a game ended.
public struct GymOutcome: Sendable, Hashable {
    /// The game.
    public var mode: GymMode
    /// The decision.
    public var decision: GameDecision
    /// Sides best first.
    public var standings: [GymStanding]
    /// Every run, in the order they ended.
    public var runs: [GymRun]
}

/// A class in the gym: several reflex trainers on one coach's ``Central`` at once, each lane with
/// its own athlete, sequence and live results stored as single runs are (``ReflexCoach``: a lane
/// whose link drops is reconnected by the coach's policy and its session marked the same way).
/// The game's rules (``HeadToHead``, ``Relay``, ``ColourChase``) decide the winner.
public struct GymSession: Sendable {
    /// The coach used for every lane (central, store, policy, timeouts).
    public var coach: ReflexCoach
    /// Heart-rate straps by athlete id, overriding the straps paired in the store (emulated
    /// straps). The central's links are shared by trainers and straps (8 at most).
    public var straps: [Int64: TrainerChoice] = [:]
    /// Head-to-head only: rounds per lane with adaptive difficulty (``AdaptiveInterval``); 1 (the
    /// default) runs the saved sequence once. With more, every round runs the sequence's targets
    /// with one window for all steps, starting at its first step's time and following the lane's
    /// own results (shorter after 3 hits in a row, longer after a miss); each round is a session
    /// stored under `NAME adaptive`.
    public var adaptiveRounds = 1
    /// The windows adaptive difficulty may choose, ms.
    public var adaptiveRange: ClosedRange<Int> = 250...3000

    /// A session running its lanes through `coach`.
    public init(coach: ReflexCoach) { self.coach = coach }

    /// Scans until `count` distinct trainers (the coach's ``ReflexCoach/trainerQuery(_:)``) were
    /// seen or its ``ReflexCoach/scanTimeout`` passed (``Central/find(each:excluding:within:)``,
    /// the one device finder); returns them strongest first.
    public func findTrainers(count: Int) async throws -> [Advertisement] {
        let total = ReflexCoach.seconds(coach.scanTimeout)
        let query = coach.trainerQuery(.strongest)
        let search = try await coach.central.find(each: Array(repeating: query, count: count), within: coach.scanTimeout)
        let found = search.found.compactMap { $0 }
        if found.count == count {
            return found.sorted { ($0.rssi, $1.address.string) > ($1.rssi, $0.address.string) }
        }
        let seen = Dictionary(search.seen.filter(query.matches).map { ($0.address.string, $0) }, uniquingKeysWith: { first, _ in first })
        let names = seen.values.map { "\($0.name ?? "?") \($0.address.string)" }.sorted()
        throw CoachError.device("found \(seen.count) of the \(count) trainers needed within \(Int(total)) s"
            + (names.isEmpty ? "" : " (seen: \(names.joined(separator: ", ")))"))
    }

    /// Plays `mode` with `athleteIDs` (in order: lanes, or relay teams split in order, or chase
    /// players) on the saved sequence `sequenceName`. Throws before any run for a game that
    /// cannot be set up or too few trainers; afterwards always ends with ``GymEvent/finished(_:)``.
    /// A request on `stop` stops every lane the orderly way (sessions stored incomplete).
    public func play(_ mode: GymMode, athleteIDs: [Int64], sequenceName: String,
                     stop: RunStop = RunStop()) -> AsyncThrowingStream<GymEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream<GymEvent, any Error>.makeStream(bufferingPolicy: .unbounded)
        let task = Task {
            do {
                try await perform(mode, athleteIDs: athleteIDs, sequenceName: sequenceName, stop: stop) { continuation.yield($0) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Checks a game before anything runs: athletes known and distinct, sequence saved and
    /// valid, the mode's rules satisfied. Returns the sequence's program.
    public func check(_ mode: GymMode, athleteIDs: [Int64], sequenceName: String) throws -> PunchProgram {
        try Self.check(mode, athleteIDs: athleteIDs, sequenceName: sequenceName, store: coach.store)
    }

    /// ``check(_:athleteIDs:sequenceName:)`` against `store`, before any Bluetooth is opened.
    public static func check(_ mode: GymMode, athleteIDs: [Int64], sequenceName: String, store: CoachStore) throws -> PunchProgram {
        guard !athleteIDs.isEmpty else { throw CoachError.device("no athletes given") }
        guard Set(athleteIDs).count == athleteIDs.count else { throw CoachError.device("an athlete is given twice") }
        for id in athleteIDs where try store.athlete(id: id) == nil { throw CoachError.athleteNotFound(id) }
        guard let saved = try store.sequence(named: sequenceName) else {
            throw CoachError.sequence(CoachStoreError.sequenceNotFound(sequenceName).description)
        }
        let program: PunchProgram
        do { program = try saved.program() } catch {
            throw CoachError.sequence(CoachStoreError.invalidSequence(name: sequenceName, error).description)
        }
        do {
            switch mode {
            case let .headToHead(rule): _ = try HeadToHead(lanes: athleteIDs.count, rule: rule)
            case let .relay(teams): _ = try Relay.teams(of: athleteIDs, count: teams)
            case let .chase(seed): _ = try ColourChase(players: athleteIDs.count).program(times: program.timeSequence.milliseconds, seed: seed)
            }
        } catch {
            throw CoachError.device(error.description)
        }
        return program
    }

    /// The game; `emit` gets each event.
    func perform(_ mode: GymMode, athleteIDs: [Int64], sequenceName: String, stop: RunStop,
                 emit: @escaping @Sendable (GymEvent) -> Void) async throws {
        let program = try check(mode, athleteIDs: athleteIDs, sequenceName: sequenceName)
        let count = mode.trainers(for: athleteIDs.count)
        emit(.scanning(count: count, seconds: ReflexCoach.seconds(coach.scanTimeout)))
        let trainers = try await findTrainers(count: count)
        emit(.trainers(trainers))
        let runs = Shared<[GymRun]>([])
        let coach = self.coach
        let straps = self.straps
        let adaptiveRounds = self.adaptiveRounds, adaptiveRange = self.adaptiveRange

        switch mode {
        case let .headToHead(rule):
            let game = Shared(try HeadToHead(lanes: athleteIDs.count, rule: rule))
            let stops = athleteIDs.map { _ in RunStop() }
            stop.onRequest { reason in for s in stops { s.request(reason) } }
            await withTaskGroup(of: Void.self) { group in
                for (lane, athlete) in athleteIDs.enumerated() {
                    group.addTask {
                        // Adaptive: each round's window follows the athlete's own results (one
                        // stored session per round); otherwise one run of the saved sequence.
                        var adaptive = AdaptiveInterval(start: Int(program.timeSequence.milliseconds.first ?? 1000), range: adaptiveRange)
                        var allComplete = true
                        for round in 0..<max(1, adaptiveRounds) {
                            if stops[lane].reason != nil { break }
                            var roundProgram: PunchProgram?
                            if adaptiveRounds > 1 {
                                let window = UInt16(clamping: adaptive.milliseconds)
                                roundProgram = try? PunchProgram(
                                    sequence: program.sequence,
                                    timeSequence: PunchTimeSequence(milliseconds: Array(repeating: window, count: program.sequence.count)))
                            }
                            emit(.runStarting(lane: lane, athleteID: athlete, member: round))
                            let events = coach.run(athleteID: athlete, sequenceName: adaptiveRounds > 1 ? "\(sequenceName) adaptive" : sequenceName,
                                                   trainer: trainers[lane], program: roundProgram, strap: straps[athlete], stop: stops[lane])
                            let run = await Self.run(events, lane: lane, athlete: athlete, emit: emit) { response in
                                adaptive.record(hit: response.hit)
                                let decided = game.withLock { $0.record(lane: lane, hit: response.hit, milliseconds: Int(response.reactionTimeMilliseconds)) }
                                if let decided {
                                    emit(.decided(decided))
                                    for s in stops { s.request("game over: \(decided)") }
                                }
                            }
                            runs.withLock { $0.append(run) }
                            allComplete = allComplete && run.complete
                            if !run.complete { break }
                        }
                        let complete = allComplete
                        if let decided = game.withLock({ $0.laneEnded(lane, complete: complete) }) { emit(.decided(decided)) }
                    }
                }
            }
            let final = game.withLock { $0 }
            let standings = final.standings.enumerated().map {
                GymStanding(place: $0.offset + 1, side: $0.element.lane, athleteIDs: [athleteIDs[$0.element.lane]], tally: $0.element.tally)
            }
            emit(.finished(GymOutcome(mode: mode, decision: final.decision ?? .noResult("the game did not end"), standings: standings,
                                      runs: runs.withLock { $0 })))

        case let .relay(teamCount):
            let teams = try Relay.teams(of: athleteIDs, count: teamCount)
            let relay = Shared(try Relay(teams: teamCount, teamSize: teams[0].count))
            await withTaskGroup(of: Void.self) { group in
                for (team, members) in teams.enumerated() {
                    group.addTask {
                        var member = 0
                        while member < members.count {
                            let athlete = members[member]
                            var run: GymRun
                            if let reason = stop.reason {
                                run = GymRun(lane: team, athleteID: athlete, sessionID: nil, complete: false, reason: "not run: stopped: \(reason)")
                            } else {
                                let legStop = RunStop()
                                stop.onRequest { legStop.request($0) }
                                emit(.runStarting(lane: team, athleteID: athlete, member: member))
                                run = await Self.run(coach.run(athleteID: athlete, sequenceName: sequenceName, trainer: trainers[team], strap: straps[athlete], stop: legStop),
                                                     lane: team, athlete: athlete, emit: emit) { response in
                                    relay.withLock { $0.record(team: team, hit: response.hit, milliseconds: Int(response.reactionTimeMilliseconds)) }
                                }
                            }
                            runs.withLock { $0.append(run) }
                            let complete = run.complete
                            let (next, decision) = relay.withLock { relay in
                                let next = relay.legEnded(team: team, complete: complete)
                                return (next, relay.decision)
                            }
                            guard case let .leg(following) = next else {
                                if let decision { emit(.decided(decision)) }
                                break
                            }
                            member = following
                        }
                    }
                }
            }
            let final = relay.withLock { $0 }
            let standings = final.standings.enumerated().map {
                GymStanding(place: $0.offset + 1, side: $0.element.team, athleteIDs: teams[$0.element.team], tally: $0.element.tally)
            }
            emit(.finished(GymOutcome(mode: mode, decision: final.decision ?? .noResult("the relay did not end"), standings: standings,
                                      runs: runs.withLock { $0 })))

        case let .chase(seed):
            let rules = try ColourChase(players: athleteIDs.count)
            let chaseProgram = try rules.program(times: program.timeSequence.milliseconds, seed: seed)
            let game = Shared(rules)
            let sessions = SessionBox()
            let recording = RunRecording.chase(rules, athletes: athleteIDs, in: coach.store, sessions: sessions)
            emit(.runStarting(lane: 0, athleteID: athleteIDs[0], member: 0))
            let events = coach.run(athleteID: athleteIDs[0], sequenceName: "\(sequenceName) chase", trainer: trainers[0],
                                   program: chaseProgram, recording: recording, stop: stop)
            var ending: CoachSessionOutcome?
            do {
                for try await event in events {
                    var owner = athleteIDs[0]
                    if case let .step(response, _) = event {
                        game.withLock { $0.record(target: response.target, hit: response.hit, milliseconds: Int(response.reactionTimeMilliseconds)) }
                        owner = rules.owner(of: response.target).map { athleteIDs[$0] } ?? owner
                    }
                    if case let .ended(outcome) = event { ending = outcome }
                    emit(.lane(0, athleteID: owner, event))
                }
            } catch {
                emit(.laneFailed(0, athleteID: athleteIDs[0], "\(error)"))
            }
            let ids = sessions.all
            let chaseRuns = athleteIDs.enumerated().map { player, athlete in
                GymRun(lane: 0, athleteID: athlete, sessionID: ids.indices.contains(player) ? ids[player] : nil,
                       complete: ending?.complete ?? false, reason: ending?.reason ?? "no session")
            }
            let final = game.withLock { $0 }
            let decision = final.decision
            emit(.decided(decision))
            let standings = final.standings.enumerated().map {
                GymStanding(place: $0.offset + 1, side: $0.element.player, athleteIDs: [athleteIDs[$0.element.player]], tally: $0.element.tally)
            }
            emit(.finished(GymOutcome(mode: mode, decision: decision, standings: standings, runs: chaseRuns)))
        }
    }

    /// Runs one lane's events to their end, passing each stored step to `step`.
    static func run(_ events: AsyncThrowingStream<CoachEvent, any Error>, lane: Int, athlete: Int64,
                    emit: @Sendable (GymEvent) -> Void, step: (PunchResponse) -> Void) async -> GymRun {
        var result = GymRun(lane: lane, athleteID: athlete, sessionID: nil, complete: false, reason: "no session")
        do {
            for try await event in events {
                emit(.lane(lane, athleteID: athlete, event))
                switch event {
                case let .sessionStarted(id): result.sessionID = id
                case let .step(response, _): step(response)
                case let .ended(outcome):
                    result.complete = outcome.complete
                    result.reason = outcome.reason
                default: break
                }
            }
        } catch {
            result.reason = "\(error)"
            emit(.laneFailed(lane, athleteID: athlete, "\(error)"))
        }
        return result
    }
}

/// One value shared by a game's lane tasks, behind a lock (the game's one owner of its state).
final class Shared<Value: Sendable>: Sendable {
    private let lock: Mutex<Value>
    init(_ value: Value) { lock = Mutex(value) }
    func withLock<T: Sendable>(_ body: (inout Value) -> T) -> T { lock.withLock { body(&$0) } }
}
