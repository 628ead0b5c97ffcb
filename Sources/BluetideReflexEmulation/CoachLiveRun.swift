import Bluetide
import BluetideReflex
import BluetideReflexCoach
import BluetideSupport

/// A live run of a saved sequence for one athlete on one trainer, from opening the coach's
/// Bluetooth to closing it again — what `bluetide reflex coach run` does, as one library call:
/// the athlete and the sequence are looked up first (nothing opens when either is missing),
/// then the transport opens (with emulated trainers when ``emulate`` is set), the coach runs the
/// sequence to its stored end, and the link closes whether the run ended, was stopped or failed.
public struct CoachLiveRun: Sendable {
    /// The athlete's name (as ``AthleteLookup`` finds it).
    public var athleteName: String
    /// The saved sequence's name.
    public var sequenceName: String
    /// Which trainer to use (default: the strongest signal).
    public var trainer: TrainerChoice = .strongest
    /// The controller transport spec (`virtual`, `tcp-client:HOST:PORT`, `hci-socket:0`, …).
    public var transport = "virtual"
    /// Start an emulated punch trainer on the (virtual) transport first: no hardware needed.
    public var emulate = false
    /// How long to look for the trainer.
    public var scanTimeout: Duration = .seconds(30)
    /// Seconds of countdown before the first step (nil: none).
    public var countdownSeconds: UInt8?

    /// A run of `sequenceName` for `athleteName`, with the defaults above.
    public init(athleteName: String, sequenceName: String) {
        self.athleteName = athleteName
        self.sequenceName = sequenceName
    }

    /// Runs it, storing the session in `store`. `message` gets the lines about emulated devices;
    /// every coach event goes to `report`, in order. When `stopWhen` returns (a stop signal, a
    /// button) the run ends the orderly way: the trainer is told and the session is stored as
    /// incomplete with that reason. With ``emulate`` the emulated world and the coach's waits run
    /// on `clock` (a manual clock runs the whole run in virtual time).
    /// - Throws: ``CoachInputError`` (no such athlete), ``CoachError`` (`.sequence` naming the
    ///   saved ones, no trainer found, …), ``CoachStoreError``, ``CoachBluetoothError``.
    public func run(
        store: CoachStore, clock: BluetideClock = .continuous,
        stopWhen: @escaping @Sendable () async -> String,
        message: @escaping @Sendable (String) -> Void = { _ in },
        report: @escaping @Sendable (CoachEvent) -> Void
    ) async throws -> CoachRunEnding {
        let athlete = try AthleteLookup.athlete(athleteName, in: store)
        guard try store.sequence(named: sequenceName) != nil else {
            let saved = try store.sequences().map(\.name)
            throw CoachError.sequence(
                "no saved sequence named \"\(sequenceName)\" (saved: \(saved.isEmpty ? "none" : saved.joined(separator: ", ")))")
        }
        let link = try await CoachBluetooth.open(transport: transport, emulate: emulate, clock: clock, output: message)
        var coach = ReflexCoach(central: link.bluetooth.central, store: store)
        coach.scanTimeout = scanTimeout
        coach.countdownSeconds = countdownSeconds
        do {
            let ending = try await coach.runToEnd(
                athleteID: athlete.id ?? -1, sequenceName: sequenceName, choice: trainer, stopWhen: stopWhen, report: report)
            await link.close()
            return ending
        } catch {
            await link.close()
            throw error
        }
    }
}
