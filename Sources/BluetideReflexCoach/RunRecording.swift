import BluetideProfiles
import BluetideReflex
import Foundation
import Synchronization

/// Where one trainer run's results are stored: by default one session of one athlete; a colour
/// chase splits one run into a session per player. Every call commits before it returns, so
/// nothing that arrived is lost when the run ends early.
public struct RunRecording: Sendable {
    /// What a run's first store call knows.
    public struct Start: Sendable {
        /// The program the trainer runs.
        public var program: PunchProgram
        /// The name the sessions are stored under.
        public var sequenceName: String
        /// When the run started.
        public var started: Date
        /// The trainer's advertised name and address.
        public var deviceName: String?
        public var deviceAddress: String?
    }

    /// Stores the start; returns the session id reported for the run.
    public var start: @Sendable (Start) throws -> Int64
    /// Stores one result with the heart rate then (bpm, nil without); returns the record and the
    /// trainer's step index it answers.
    public var append: @Sendable (PunchResponse, Int?) throws -> (StepResult, Int)
    /// Stores the end (date, complete, reason).
    public var finish: @Sendable (Date, Bool, String) throws -> Void

    /// A recording from its three store calls.
    public init(start: @escaping @Sendable (Start) throws -> Int64, append: @escaping @Sendable (PunchResponse, Int?) throws -> (StepResult, Int),
                finish: @escaping @Sendable (Date, Bool, String) throws -> Void) {
        self.start = start
        self.append = append
        self.finish = finish
    }

    /// One session of `athleteID` holding every step (what a single-athlete run stores).
    public static func session(of athleteID: Int64, in store: CoachStore) -> RunRecording {
        let id = SessionBox()
        return session(of: athleteID, in: store, sessions: id)
    }

    /// Like ``session(of:in:)``, handing the session's id to `sessions` once started.
    public static func session(of athleteID: Int64, in store: CoachStore, sessions id: SessionBox) -> RunRecording {
        RunRecording(
            start: { start in
                let session = try store.startSession(
                    athleteID: athleteID, program: start.program, sequenceName: start.sequenceName, started: start.started,
                    deviceName: start.deviceName, deviceAddress: start.deviceAddress)
                id.set([session])
                return session
            },
            append: { response, heartRate in
                let record = try store.appendStep(sessionID: id.first, response: response, heartRateBpm: heartRate)
                return (record, record.stepIndex)
            },
            finish: { ended, complete, reason in try store.finishSession(id: id.first, ended: ended, complete: complete, reason: reason) })
    }
}

/// The session ids a recording made, set once its run started.
public final class SessionBox: Sendable {
    private let ids = Mutex<[Int64]>([])
    /// No sessions yet.
    public init() {}
    func set(_ value: [Int64]) { ids.withLock { $0 = value } }
    /// The ids, in the order the recording made them (a chase: by player).
    public var all: [Int64] { ids.withLock { $0 } }
    var first: Int64 { all.first ?? -1 }
}

extension RunRecording {
    /// A colour chase: one run of `chase`'s program, stored as one session per player (player i
    /// is `athletes[i]`) holding the steps that lit the player's target, renumbered from 0, so
    /// each is an ordinary session of that athlete. `sessions` receives the ids by player.
    public static func chase(_ chase: ColourChase, athletes: [Int64], in store: CoachStore, sessions: SessionBox) -> RunRecording {
        struct Route: Sendable { var player: Int; var index: Int }
        let routes = Mutex<[Int: Route]>([:])
        let received = Mutex(0)
        return RunRecording(
            start: { start in
                let split = chase.stepsByPlayer(of: start.program)
                var ids: [Int64] = []
                var table: [Int: Route] = [:]
                for (player, steps) in split.enumerated() where player < athletes.count {
                    let program = try PunchProgram(
                        sequence: PunchSequence(targets: steps.map { start.program.sequence.targets[$0] }),
                        timeSequence: PunchTimeSequence(milliseconds: steps.map { start.program.timeSequence.milliseconds[$0] }))
                    ids.append(try store.startSession(
                        athleteID: athletes[player], program: program, sequenceName: start.sequenceName, started: start.started,
                        deviceName: start.deviceName, deviceAddress: start.deviceAddress))
                    for (index, step) in steps.enumerated() { table[step] = Route(player: player, index: index) }
                }
                routes.withLock { $0 = table }
                sessions.set(ids)
                return ids.first ?? -1
            },
            append: { response, _ in
                // No heart rate: the one strap a run connects is one player's, not the step's owner's.
                // The original 5-byte format has no step index: take the next in arrival order.
                let step = response.step.map(Int.init) ?? received.withLock { count in defer { count += 1 }; return count }
                guard let route = routes.withLock({ $0[step] }) else {
                    throw CoachStoreError.invalidStep(sessionID: sessions.first, step: step, problem: "no chase player owns this step")
                }
                var local = response
                local.step = UInt16(route.index)
                let record = try store.appendStep(sessionID: sessions.all[route.player], response: local)
                return (record, step)
            },
            finish: { ended, complete, reason in
                for id in sessions.all { try store.finishSession(id: id, ended: ended, complete: complete, reason: reason) }
            })
    }
}
