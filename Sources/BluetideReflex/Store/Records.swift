import BluetideProfiles
import Foundation
import GRDB

/// The athlete's usual guard: which foot leads.
public enum Stance: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    /// Left foot forward (right-handed boxer).
    case orthodox
    /// Right foot forward (left-handed boxer).
    case southpaw
    /// Switches between both.
    case switchStance = "switch"
}

/// One athlete the coach trains (table `athlete`).
public struct Athlete: Codable, Hashable, Sendable, FetchableRecord, MutablePersistableRecord {
    /// The SQLite table.
    public static let databaseTableName = "athlete"

    /// Row id; nil until inserted.
    public var id: Int64?
    /// Display name (not empty after trimming).
    public var name: String
    /// Birth date, if known.
    public var birthDate: CalendarDate?
    /// Sex as the coach records it (free text, e.g. `female`), if known.
    public var sex: String?
    /// Leading foot.
    public var stance: Stance
    /// Free notes.
    public var notes: String
    /// When the athlete was added (UTC instant; stored with millisecond precision).
    public var created: Date

    /// A new athlete (id nil until inserted).
    public init(id: Int64? = nil, name: String, birthDate: CalendarDate? = nil, sex: String? = nil,
                stance: Stance = .orthodox, notes: String = "", created: Date) {
        self.id = id
        self.name = name
        self.birthDate = birthDate
        self.sex = sex
        self.stance = stance
        self.notes = notes
        self.created = created
    }

    /// Takes the row id SQLite assigned.
    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

/// One weigh-in (table `weight`).
public struct WeightEntry: Codable, Hashable, Sendable, FetchableRecord, MutablePersistableRecord {
    /// The SQLite table.
    public static let databaseTableName = "weight"

    /// Row id; nil until inserted.
    public var id: Int64?
    /// The athlete weighed.
    public var athleteId: Int64
    /// Day of the weigh-in.
    public var date: CalendarDate
    /// Body mass in kilograms (0 < kg < 500).
    public var kilograms: Double

    /// A weigh-in (id nil until inserted).
    public init(id: Int64? = nil, athleteId: Int64, date: CalendarDate, kilograms: Double) {
        self.id = id
        self.athleteId = athleteId
        self.date = date
        self.kilograms = kilograms
    }

    /// Takes the row id SQLite assigned.
    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

/// A sequence saved by name for reuse (table `sequence`): targets, per-step times and the
/// maximum interval between punches. Saved only after validation (see ``CoachStore/saveSequence(name:targets:milliseconds:maxIntervalMilliseconds:at:)``).
public struct SavedSequence: Codable, Hashable, Sendable, FetchableRecord, MutablePersistableRecord {
    /// The SQLite table.
    public static let databaseTableName = "sequence"

    /// Row id; nil until inserted.
    public var id: Int64?
    /// Unique name (not empty after trimming).
    public var name: String
    /// Target index 0...5 per step (stored as a JSON array).
    public var targets: [UInt8]
    /// Time each step's target stays lit, milliseconds 1...60 000 (stored as a JSON array).
    public var milliseconds: [UInt16]
    /// The longest pause allowed between two punches, milliseconds, if the coach set one.
    public var maxIntervalMilliseconds: Int?
    /// When the sequence was last saved.
    public var saved: Date

    /// A sequence record; validate through the store before saving.
    public init(id: Int64? = nil, name: String, targets: [UInt8], milliseconds: [UInt16], maxIntervalMilliseconds: Int? = nil, saved: Date) {
        self.id = id
        self.name = name
        self.targets = targets
        self.milliseconds = milliseconds
        self.maxIntervalMilliseconds = maxIntervalMilliseconds
        self.saved = saved
    }

    /// The program to write to the device (validated again, so a hand-edited database cannot
    /// produce an invalid write).
    public func program() throws(PunchValidationError) -> PunchProgram {
        try PunchProgram(sequence: PunchSequence(targets: targets), timeSequence: PunchTimeSequence(milliseconds: milliseconds))
    }

    /// Takes the row id SQLite assigned.
    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

/// One run of a sequence by an athlete (table `session`). Keeps a snapshot of the program, so
/// later edits to a saved sequence do not change history.
public struct TrainingSession: Codable, Hashable, Sendable, FetchableRecord, MutablePersistableRecord {
    /// The SQLite table.
    public static let databaseTableName = "session"

    /// Row id; nil until inserted.
    public var id: Int64?
    /// The athlete training.
    public var athleteId: Int64
    /// Name of the saved sequence used, or nil for an ad-hoc or generated one.
    public var sequenceName: String?
    /// Targets as run (snapshot, JSON array).
    public var targets: [UInt8]
    /// Per-step times as run, milliseconds (snapshot, JSON array).
    public var milliseconds: [UInt16]
    /// When the sequence started.
    public var started: Date
    /// When it finished or was abandoned; nil while running.
    public var ended: Date?
    /// True when every step reported (the device sent `finished`).
    public var complete: Bool
    /// The device's advertised name, e.g. `Reflex-C1C2`.
    public var deviceName: String?
    /// The device's address text, e.g. `C6:C5:C4:C3:C2:C1`.
    public var deviceAddress: String?
    /// Coach's notes on this session (added by migration v2).
    public var notes: String?
    /// Why the session ended, in words (`finished`, `stopped: SIGINT`, `link lost: …`); nil while
    /// running or for sessions stored before migration v3.
    public var endReason: String?

    /// A session record; normally created by ``CoachStore/startSession(athleteID:program:sequenceName:started:deviceName:deviceAddress:)``.
    public init(id: Int64? = nil, athleteId: Int64, sequenceName: String?, targets: [UInt8], milliseconds: [UInt16],
                started: Date, ended: Date? = nil, complete: Bool = false, deviceName: String? = nil,
                deviceAddress: String? = nil, notes: String? = nil, endReason: String? = nil) {
        self.id = id
        self.endReason = endReason
        self.athleteId = athleteId
        self.sequenceName = sequenceName
        self.targets = targets
        self.milliseconds = milliseconds
        self.started = started
        self.ended = ended
        self.complete = complete
        self.deviceName = deviceName
        self.deviceAddress = deviceAddress
        self.notes = notes
    }

    /// Number of steps in the program run.
    public var stepCount: Int { targets.count }

    /// Takes the row id SQLite assigned.
    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

/// The result of one step of a session (table `step_result`), as notified on punchResponse.
public struct StepResult: Codable, Hashable, Sendable, FetchableRecord, MutablePersistableRecord {
    /// The SQLite table.
    public static let databaseTableName = "step_result"

    /// Row id; nil until inserted.
    public var id: Int64?
    /// The session it belongs to.
    public var sessionId: Int64
    /// Step index in the sequence, 0-based.
    public var stepIndex: Int
    /// The lit target 0...5.
    public var target: UInt8
    /// The athlete hit the lit target in time.
    public var hit: Bool
    /// Another target was hit first.
    public var wrongTarget: Bool
    /// Reaction time in milliseconds (for a miss, the step's whole interval).
    public var reactionMilliseconds: Int64
    /// The athlete's heart rate when the result arrived, bpm; nil without a strap.
    public var heartRateBpm: Int?

    /// A step result; normally created by ``CoachStore/appendStep(sessionID:response:heartRateBpm:)``.
    public init(id: Int64? = nil, sessionId: Int64, stepIndex: Int, target: UInt8, hit: Bool, wrongTarget: Bool = false, reactionMilliseconds: Int64,
                heartRateBpm: Int? = nil) {
        self.heartRateBpm = heartRateBpm
        self.id = id
        self.sessionId = sessionId
        self.stepIndex = stepIndex
        self.target = target
        self.hit = hit
        self.wrongTarget = wrongTarget
        self.reactionMilliseconds = reactionMilliseconds
    }

    /// Takes the row id SQLite assigned.
    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

/// A session together with its step results in step order: the unit statistics, CSV and charts work on.
public struct SessionResults: Hashable, Sendable {
    /// The session.
    public var session: TrainingSession
    /// Its step results, ordered by step index.
    public var steps: [StepResult]

    /// Pairs a session with its steps, sorting them by step index.
    public init(session: TrainingSession, steps: [StepResult]) {
        self.session = session
        self.steps = steps.sorted { $0.stepIndex < $1.stepIndex }
    }
}
