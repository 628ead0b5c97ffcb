import Bluetide
import BluetideReflex
import BluetideReflexCoach
import BluetideSupport

/// A game for several athletes at once (head-to-head, relay or colour chase), from opening the
/// coach's Bluetooth to closing it — what `bluetide reflex coach session` does, as library calls:
/// ``lineUp(in:)`` checks the athletes and the sequence before anything opens, ``play(_:store:clock:stopWhen:message:report:)``
/// opens the transport (with emulated trainers and straps when ``emulate`` is set), plays the
/// game to its stored end and closes the link whatever happened.
public struct CoachGame: Sendable {
    /// The game.
    public var mode: GymMode
    /// The athletes' names, in lane order.
    public var athleteNames: [String]
    /// The saved sequence every lane runs.
    public var sequenceName: String
    /// Rounds of a head-to-head whose time windows follow the athletes' results (1: no adapting).
    public var adaptiveRounds = 1
    /// The controller transport spec.
    public var transport = "virtual"
    /// Start emulated trainers (and straps) on the (virtual) transport first.
    public var emulate = false
    /// How long to look for the trainers.
    public var scanTimeout: Duration = .seconds(30)

    /// A game of `mode` for `athleteNames` on `sequenceName`, with the defaults above.
    public init(mode: GymMode, athleteNames: [String], sequenceName: String) {
        self.mode = mode
        self.athleteNames = athleteNames
        self.sequenceName = sequenceName
    }

    /// The athletes of a game, found in the store, in lane order.
    public struct Lineup: Sendable {
        /// The athletes, in the order their names were given.
        public let athletes: [Athlete]
        /// Their ids, in the same order.
        public var ids: [Int64] { athletes.map { $0.id ?? -1 } }
    }

    /// Finds the athletes and checks that `mode` can be played by them on the sequence.
    /// - Throws: ``CoachInputError`` (an unknown or ambiguous name), ``CoachError`` (`.sequence`
    ///   for the sequence, others for the athletes: too few, too many, twice), ``CoachStoreError``.
    public func lineUp(in store: CoachStore) throws -> Lineup {
        let athletes = try AthleteLookup.athletes(named: athleteNames, in: store)
        let lineup = Lineup(athletes: athletes)
        _ = try GymSession.check(mode, athleteIDs: lineup.ids, sequenceName: sequenceName, store: store)
        return lineup
    }

    /// How many emulated heart-rate straps go beside the emulated trainers: one per athlete,
    /// while trainers and straps fit the central's 8 links; none for a chase (its players share
    /// one run) and none without emulation.
    public static func emulatedStraps(_ mode: GymMode, athletes: Int, emulate: Bool) -> Int {
        guard emulate else { return 0 }
        if case .chase = mode { return 0 }
        return mode.trainers(for: athletes) + athletes <= 8 ? athletes : 0
    }

    /// Plays the game for `lineup` (from ``lineUp(in:)``), storing every run in `store`.
    /// `message` gets the lines about emulated devices; every game event goes to `report`, in
    /// order. When `stopWhen` returns, every lane stops the orderly way (runs stored as
    /// incomplete). With ``emulate`` the emulated world and the coach's waits run on `clock`.
    /// Returns the outcome (nil when the game stopped before one) and the stop's reason.
    /// - Throws: ``CoachError``, ``CoachStoreError``, ``CoachBluetoothError``.
    public func play(
        _ lineup: Lineup, store: CoachStore, clock: BluetideClock = .continuous,
        stopWhen: @escaping @Sendable () async -> String,
        message: @escaping @Sendable (String) -> Void = { _ in },
        report: @escaping @Sendable (GymEvent) -> Void
    ) async throws -> (outcome: GymOutcome?, stopReason: String?) {
        let ids = lineup.ids
        let straps = Self.emulatedStraps(mode, athletes: ids.count, emulate: emulate)
        let link = try await CoachBluetooth.open(
            transport: transport, emulate: emulate, count: mode.trainers(for: ids.count), straps: straps, clock: clock, output: message)
        var coach = ReflexCoach(central: link.bluetooth.central, store: store)
        coach.scanTimeout = scanTimeout
        var gym = GymSession(coach: coach)
        gym.adaptiveRounds = adaptiveRounds
        for (index, id) in ids.enumerated() where index < straps { gym.straps[id] = .name(CoachBluetooth.strapName(index)) }
        do {
            let played = try await gym.playToEnd(
                mode, athleteIDs: ids, sequenceName: sequenceName, stopWhen: stopWhen, report: report)
            await link.close()
            return played
        } catch {
            await link.close()
            throw error
        }
    }
}
