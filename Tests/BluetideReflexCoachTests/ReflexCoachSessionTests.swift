import Bluetide
import BluetideEmulation
import BluetideDeviceModels
import BluetideProfiles
import BluetideReflex
import BluetideSupport
import Foundation
import Synchronization
import Testing
@testable import BluetideReflexCoach

/// Runs `body`, failing when it takes longer than `seconds` — a hang guard, never a timing
/// assertion: it is ``withRunTimeLimit(_:onTimeout:_:)``, which counts at most a quarter second
/// per check, so a starved machine makes it later, never earlier.
func within<T: Sendable>(_ seconds: Double, _ what: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withRunTimeLimit(seconds, onTimeout: { CoachError.device("\(what) took longer than \(seconds) s") }, body)
}

/// An emulated punch trainer and a coach's Bluetooth in a fresh virtual world on a manual clock:
/// the radio, the trainer's simulated athlete and the coach's own waits all run in virtual time,
/// the same way however busy the machine is. Drive everything that talks to the trainer through
/// ``run(_:_:_:)`` (the clock only moves inside it).
struct CoachRig: Sendable {
    let manual: ManualClock
    let world: VirtualWorld
    let trainer: EmulatedPeripheral
    let bluetooth: Bluetooth
    let store: CoachStore

    /// `dropLinkAfterStep`: the trainer loses its link once, as it produces that step's result
    /// (see ``LinkDroppingTrainer``).
    static func start(missProbability: Double = 0.3, seed: UInt64 = 7, dropLinkAfterStep: UInt16? = nil) async throws -> CoachRig {
        let manual = ManualClock()
        let world = VirtualWorld(clock: BluetideClock(manual))
        var options = EmulatorOptions()
        options.reactionMeanMilliseconds = 150
        options.reactionStandardDeviationMilliseconds = 10
        options.missProbability = missProbability
        options.wrongTargetProbability = 0
        let dropper = LinkDropper(world: world)
        var model: any DeviceModel = PunchTrainerModel(seed: seed, options: options)
        if let dropLinkAfterStep {
            model = LinkDroppingTrainer(PunchTrainerModel(seed: seed, options: options), afterStep: dropLinkAfterStep, drop: dropper.drop)
        }
        let trainerModel = model
        do {
            let (trainer, bluetooth) = try await within(60, "coach rig set-up") {
                try await manual.advancing { (try await world.emulate([trainerModel]), try await world.openHost()) }
            }
            dropper.arm(trainer)
            return CoachRig(manual: manual, world: world, trainer: trainer, bluetooth: bluetooth, store: try CoachStore.inMemory())
        } catch {
            await world.close()
            throw error
        }
    }

    /// Runs `body` in the world's virtual time, under a wall-clock hang guard of `seconds` (a
    /// hang guard only: the run itself never waits on the wall clock).
    func run<T: Sendable>(_ seconds: Double, _ what: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await within(seconds, what) { try await manual.advancing(body) }
    }

    func coach() -> ReflexCoach {
        ReflexCoach(central: bluetooth.central, store: store)
    }

    /// Closes the coach's host and the trainer (in virtual time: their farewells run on the clock).
    func close() async {
        let world = self.world
        _ = try? await run(30, "closing the world") { await world.close() }
        await world.close()
    }
}

/// Drops an emulated device's link in its world when its model asks (``LinkDroppingTrainer``'s
/// `drop`): armed with the device once the world has started it.
final class LinkDropper: Sendable {
    private let world: VirtualWorld
    private let device = Mutex<EmulatedPeripheral?>(nil)

    init(world: VirtualWorld) { self.world = world }

    func arm(_ device: EmulatedPeripheral) { self.device.withLock { $0 = device } }

    /// Called from the model's tick: the device loses every link it has, right after.
    @Sendable func drop() {
        guard let device = device.withLock({ $0 }) else {
            Issue.record("the link drop came before the device was started")
            return
        }
        let world = self.world
        Task { try await world.loseLink(of: device) }
    }
}

@Suite(.timeLimit(.minutes(1))) struct ReflexCoachSessionTests {
    @Test func aFullSessionIsStoredStepByStepAndReadsBackWithStatistics() async throws {
        let rig = try await CoachRig.start()
        let athlete = try rig.store.addAthlete(Athlete(name: "Ana", created: Date(timeIntervalSince1970: 0)))
        let targets: [UInt8] = [0, 3, 5, 1, 2, 4, 3, 0]
        try rig.store.saveSequence(name: "Jab", targets: targets, milliseconds: Array(repeating: 300, count: targets.count), at: Date())
        let coach = rig.coach()
        let athleteID = try #require(athlete.id)
        let events = try await rig.run(40, "session") {
            var events: [CoachEvent] = []
            for try await event in coach.run(athleteID: athleteID, sequenceName: "Jab") { events.append(event) }
            return events
        }
        await rig.close()

        guard case let .ended(outcome)? = events.last else { Issue.record("no end event: \(events)"); return }
        #expect(outcome.complete, "\(outcome.reason)")
        #expect(outcome.failure == nil, "a complete session is no failure")
        #expect(outcome.stepsStored == targets.count)
        let live = events.compactMap { event -> PunchResponse? in if case let .step(r, _) = event { return r } else { return nil } }
        #expect(live.map(\.target) == targets)
        #expect(events.contains { if case .status(.finished(stepsDone: 8)) = $0 { return true } else { return false } })

        let session = try #require(try rig.store.session(id: outcome.sessionID))
        #expect(session.complete && session.ended != nil)
        #expect(session.sequenceName == "Jab" && session.deviceName?.hasPrefix("Reflex") == true)
        let steps = try rig.store.steps(sessionID: outcome.sessionID)
        #expect(steps.map(\.stepIndex) == Array(0..<targets.count))
        #expect(steps.map(\.target) == targets)
        #expect(steps.map(\.hit) == live.map(\.hit))
        #expect(steps.map(\.reactionMilliseconds) == live.map { Int64($0.reactionTimeMilliseconds) })
        let results = try #require(try rig.store.results(athleteID: athleteID).first)
        let stats = ReflexStatistics.session(results)
        #expect(stats.overall.count == targets.count)
        #expect(stats.overall.hits == live.filter(\.hit).count)
        #expect(stats.missingSteps == 0)
    }

    @Test func linkLossWithoutReconnectKeepsWhatArrivedAndMarksTheSessionIncomplete() async throws {
        let rig = try await CoachRig.start(missProbability: 0)
        let athlete = try rig.store.addAthlete(Athlete(name: "Ben", created: Date()))
        let steps = 40
        try rig.store.saveSequence(
            name: "Long", targets: (0..<steps).map { UInt8($0 % 6) }, milliseconds: Array(repeating: 400, count: steps), at: Date())
        var coach = rig.coach()
        coach.policy = ConnectionPolicy(reconnect: .disabled)
        let athleteID = try #require(athlete.id)
        let configured = coach
        let (world, trainer) = (rig.world, rig.trainer)
        let events = try await rig.run(40, "session") {
            var events: [CoachEvent] = []
            var seen = 0
            for try await event in configured.run(athleteID: athleteID, sequenceName: "Long") {
                events.append(event)
                if case .step = event {
                    seen += 1
                    if seen == 3 { try await world.loseLink(of: trainer) }
                }
            }
            return events
        }
        await rig.close()

        guard case let .ended(outcome)? = events.last else { Issue.record("no end event: \(events)"); return }
        #expect(!outcome.complete)
        #expect(outcome.reason.contains("link lost"), "\(outcome.reason)")
        #expect(outcome.failure == outcome.reason, "a link lost for good is a failure (the command exits 1)")
        #expect(outcome.stepsStored >= 3 && outcome.stepsStored < steps)
        let stored = try rig.store.steps(sessionID: outcome.sessionID)
        let live = events.filter { if case .step = $0 { return true } else { return false } }.count
        #expect(stored.count == live)
        #expect(stored.map(\.stepIndex) == Array(0..<stored.count))
        let session = try #require(try rig.store.session(id: outcome.sessionID))
        #expect(!session.complete && session.ended != nil)
    }

    /// With reconnection the emulated trainer keeps running through the outage: the session goes
    /// on to `finished`, and is complete only if no step's result was sent while the link was down.
    @Test func linkLossWithReconnectFinishesAndIsCompleteOnlyWhenNothingWasMissed() async throws {
        let rig = try await CoachRig.start(missProbability: 0, dropLinkAfterStep: 1)
        let athlete = try rig.store.addAthlete(Athlete(name: "Cleo", created: Date()))
        let steps = 12
        try rig.store.saveSequence(
            name: "Mid", targets: (0..<steps).map { UInt8($0 % 6) }, milliseconds: Array(repeating: 400, count: steps), at: Date())
        var coach = rig.coach()
        coach.policy = ConnectionPolicy(reconnect: .init(maximumAttempts: 10, delay: .milliseconds(50), maximumDelay: .milliseconds(200), attemptTimeout: .seconds(10)))
        let athleteID = try #require(athlete.id)
        let configured = coach
        let events = try await rig.run(50, "session") {
            var events: [CoachEvent] = []
            for try await event in configured.run(athleteID: athleteID, sequenceName: "Mid") { events.append(event) }
            return events
        }
        await rig.close()

        guard case let .ended(outcome)? = events.last else { Issue.record("no end event: \(events)"); return }
        #expect(events.contains { if case .link(.reconnected) = $0 { return true } else { return false } })
        #expect(outcome.reason.hasPrefix("finished"), "\(outcome.reason)")
        let stored = try rig.store.steps(sessionID: outcome.sessionID)
        #expect(stored.count == outcome.stepsStored)
        #expect(outcome.complete == (stored.count == steps))
        #expect(try rig.store.session(id: outcome.sessionID)?.complete == outcome.complete)
    }

    /// The trainer finishes while the link is down (its `finished` notification is lost): after
    /// reconnecting, the coach reads punchResponse, keeps the last step's result and ends the
    /// session instead of waiting for a status that will never come.
    @Test func aTrainerThatFinishedDuringTheOutageEndsTheSessionAfterReconnecting() async throws {
        let rig = try await CoachRig.start(missProbability: 0, dropLinkAfterStep: 0)
        let athlete = try rig.store.addAthlete(Athlete(name: "Finn", created: Date()))
        let steps = 6
        try rig.store.saveSequence(
            name: "Short", targets: (0..<steps).map { UInt8($0 % 6) }, milliseconds: Array(repeating: 300, count: steps), at: Date())
        var coach = rig.coach()
        // The first attempt comes well after the trainer's last step (6 × ~150 ms).
        coach.policy = ConnectionPolicy(reconnect: .init(maximumAttempts: 5, delay: .seconds(3), maximumDelay: .seconds(3), attemptTimeout: .seconds(10)))
        let athleteID = try #require(athlete.id)
        let configured = coach
        let events = try await rig.run(50, "session") {
            var events: [CoachEvent] = []
            for try await event in configured.run(athleteID: athleteID, sequenceName: "Short") { events.append(event) }
            return events
        }
        await rig.close()
        guard case let .ended(outcome)? = events.last else { Issue.record("no end event: \(events)"); return }
        #expect(events.contains { if case .link(.reconnected) = $0 { return true } else { return false } })
        #expect(outcome.reason == "finished (while the link was down)", "\(outcome.reason)")
        let stored = try rig.store.steps(sessionID: outcome.sessionID)
        #expect(stored.map(\.stepIndex).contains(steps - 1), "the last step's result was read back: \(stored.map(\.stepIndex))")
        #expect(!outcome.complete, "steps sent during the outage are missing")
        #expect(try rig.store.session(id: outcome.sessionID)?.complete == false)
    }

    /// A trainer that goes silent with the link up does not hold the coach for ever. The world
    /// runs on a manual clock: the 2 s of silence pass in virtual time, however busy the machine.
    @Test func aSilentTrainerEndsTheSessionAfterTheQuietTimeout() async throws {
        let manual = ManualClock()
        let world = VirtualWorld(clock: BluetideClock(manual))
        let store = try CoachStore.inMemory()
        let athlete = try store.addAthlete(Athlete(name: "Gus", created: Date()))
        // Every step is missed, so the trainer says nothing for each step's whole 20 s.
        try store.saveSequence(name: "Slow", targets: [0, 1], milliseconds: [20_000, 20_000], at: Date())
        var silent = EmulatorOptions()
        silent.missProbability = 1
        let options = silent
        let athleteID = try #require(athlete.id)
        let events = try await within(40, "session") {
            try await manual.advancing {
                _ = try await world.emulate([PunchTrainerModel(seed: 7, options: options)])
                var coach = ReflexCoach(central: try await world.openHost().central, store: store)
                coach.quietTimeout = .seconds(2)
                #expect(coach.quietLimit(for: try PunchProgram(sequence: PunchSequence(targets: [0]), timeSequence: PunchTimeSequence(milliseconds: [500]))) == .seconds(2))
                var defaults = coach
                defaults.quietTimeout = nil
                defaults.countdownSeconds = 3
                #expect(defaults.quietLimit(for: try PunchProgram(sequence: PunchSequence(targets: [0, 1]), timeSequence: PunchTimeSequence(milliseconds: [500, 1500]))) == .milliseconds(14_500))
                var events: [CoachEvent] = []
                for try await event in coach.run(athleteID: athleteID, sequenceName: "Slow") { events.append(event) }
                return events
            }
        }
        await world.close()
        guard case let .ended(outcome)? = events.last else { Issue.record("no end event: \(events)"); return }
        #expect(outcome.reason == "no word from the trainer for 2.0 s", "\(outcome.reason)")
        #expect(outcome.failure == outcome.reason, "a silent trainer is a failure (the command exits 1)")
        #expect(!outcome.complete && outcome.stepsStored == 0)
    }

    /// Ending the iteration (Ctrl-C in the CLI) stops the run: the session is marked incomplete
    /// and keeps the steps that arrived.
    @Test func cancellingKeepsWhatArrivedAndMarksTheSessionIncomplete() async throws {
        let rig = try await CoachRig.start(missProbability: 0)
        let athlete = try rig.store.addAthlete(Athlete(name: "Dev", created: Date()))
        try rig.store.saveSequence(name: "Long", targets: (0..<30).map { UInt8($0 % 6) }, milliseconds: Array(repeating: 400, count: 30), at: Date())
        let athleteID = try #require(athlete.id)
        let coach = rig.coach()
        let stop = RunStop()
        let sessionID = try await rig.run(40, "two steps") {
            var session: Int64 = -1
            var seen = 0
            for try await event in coach.run(athleteID: athleteID, sequenceName: "Long", stop: stop) {
                if case let .sessionStarted(id) = event { session = id }
                if case .step = event { seen += 1 }
                if seen == 2 { break }
            }
            return session
        }
        let store = rig.store
        // The run goes on storing its end after the iteration left: wait for that event.
        try await rig.run(30, "session marked ended") { try await stop.waitUntilEnded() }
        let session = try #require(try store.session(id: sessionID))
        await rig.close()
        #expect(session.ended != nil)
        #expect(!session.complete)
        let stored = try store.steps(sessionID: sessionID)
        #expect(stored.count >= 2 && stored.count < 30)
    }

    @Test func trainerChoiceParsesAddressesAndNames() {
        #expect(TrainerChoice(parsing: nil) == .strongest)
        #expect(TrainerChoice(parsing: "c6:c5:c4:c3:c2:c1/R") == .address("C6:C5:C4:C3:C2:C1"))
        #expect(TrainerChoice(parsing: "Reflex-C1C2") == .name("Reflex-C1C2"))
    }
}
