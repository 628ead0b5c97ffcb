import Bluetide
import BluetideBase
import BluetideDeviceModels
import BluetideEmulation
import BluetideProfiles
import BluetideReflex
import BluetideSupport
import Foundation
import Testing
@testable import BluetideReflexCoach

/// A punch trainer that accepts any sequences and, on a start, says `running` and then — when
/// `finishedAfter` is set — at once `finished` after that many steps without sending a single
/// step result (their notifications "still in flight"); otherwise it stays silent. It has no
/// timing of its own: what the coach does next depends only on the coach's clock.
struct ScriptedTrainer: DeviceModel {
    let name = "scripted-punch"
    var finishedAfter: UInt16?

    var advertising: AdvertisingHints { AdvertisingHints(localName: "Reflex-VT01", serviceUUIDs: [PunchUUID.service]) }

    var services: [EmulatedService] {
        [EmulatedService(PunchUUID.service, [
            EmulatedCharacteristic(PunchUUID.response, [.read, .notify]),
            EmulatedCharacteristic(PunchUUID.timeSequence, [.read, .write]),
            EmulatedCharacteristic(PunchUUID.sequence, [.read, .write]),
            EmulatedCharacteristic(PunchUUID.control, [.write, .notify]),
        ])]
    }

    /// Nothing happens on ticks.
    var tickInterval: Double { 3600 }

    func read(_ characteristic: BluetoothUUID, now: Double) -> [UInt8]? {
        services[0].characteristics.contains { $0.uuid == characteristic } ? [] : nil
    }

    mutating func write(_ characteristic: BluetoothUUID, _ bytes: [UInt8], now: Double) -> WriteOutcome {
        guard characteristic == PunchUUID.control, bytes == PunchControlCommand.start.bytes else { return .accepted([]) }
        var statuses: [PunchControlStatus] = [.running]
        if let finishedAfter { statuses.append(.finished(stepsDone: finishedAfter)) }
        return .accepted(statuses.map { EmulatedOutput(PunchUUID.control, $0.bytes) })
    }

    mutating func tick(now: Double) -> [EmulatedOutput] { [] }
}

/// The coach's own waits — the once-a-second silence check and the grace after `finished` — run
/// on the clock of the Bluetooth it runs on: in a world on a ``ManualClock`` they pass in virtual
/// time, minutes of it in a moment of wall time, the same way however busy the machine is.
@Suite(.timeLimit(.minutes(4))) struct ReflexCoachVirtualTimeTests {
    /// Runs the two-step sequence `Pair` against `trainer` in a world on `manual`; returns the
    /// events and the virtual time from the session's start to its end.
    static func run(
        _ trainer: ScriptedTrainer, on manual: ManualClock, configure: @escaping @Sendable (inout ReflexCoach) -> Void
    ) async throws -> (events: [CoachEvent], virtual: Duration) {
        let world = VirtualWorld(clock: BluetideClock(manual))
        let store = try CoachStore.inMemory()
        let athlete = try store.addAthlete(Athlete(name: "Vera", created: Date(timeIntervalSince1970: 0)))
        let athleteID = try #require(athlete.id)
        try store.saveSequence(name: "Pair", targets: [0, 1], milliseconds: [500, 500], at: Date(timeIntervalSince1970: 0))
        do {
            // A hang guard only (the coach never waits on the wall clock here). Steps of up to
            // 100 ms of virtual time: five minutes of silence then take 3,000 quiet moments
            // rather than 30,000 (one run beside two CPU hogs and a release build needed more
            // than a minute of wall time at 10 ms); the bounds below allow many ticks more. The
            // full suite beside two hogs once needed 79 s for the 3,000 (each waits for the
            // queued work to have had a turn): the guard allows 200 s, still short of the 300 s
            // a wall-clock silence would take.
            let result = try await within(200, "virtual session") {
                try await manual.advancing(step: .milliseconds(100)) {
                    _ = try await world.emulate([trainer])
                    let bluetooth = try await world.openHost()
                    var coach = ReflexCoach(central: bluetooth.central, store: store)
                    configure(&coach)
                    #expect(coach.waitClock.manual === manual, "the coach waits on its central's clock")
                    var events: [CoachEvent] = []
                    var started: ManualClock.Instant?
                    for try await event in coach.run(athleteID: athleteID, sequenceName: "Pair") {
                        if case .sessionStarted = event { started = manual.now }
                        events.append(event)
                    }
                    let begin = try #require(started)
                    return (events, begin.duration(to: manual.now))
                }
            }
            await world.close()
            return result
        } catch {
            await world.close()
            throw error
        }
    }

    /// Silence is judged by ticks of the coach's clock: with a 5-minute quiet limit the session
    /// ends after 5 minutes (and at most one tick more) of virtual time, never of wall time.
    @Test func aSilentTrainerIsGivenUpAfterTheQuietLimitOfTheManualClock() async throws {
        let manual = ManualClock()
        let wall = ContinuousClock.now
        let (events, virtual) = try await Self.run(ScriptedTrainer(finishedAfter: nil), on: manual) { coach in
            coach.quietTimeout = .seconds(300)
        }
        guard case let .ended(outcome)? = events.last else { Issue.record("no end event: \(events)"); return }
        #expect(outcome.reason == "no word from the trainer for 300.0 s", "\(outcome.reason)")
        #expect(outcome.failure == outcome.reason)
        #expect(!outcome.complete && outcome.stepsStored == 0)
        // `ManualClock.advancing` moves time on once queued work has had a turn; a starved tick
        // task may see a few ticks' worth at once (304.6 s under two CPU hogs), so the bound
        // says "at the limit, not an hour later", not "within one tick".
        #expect(virtual > .seconds(300) && virtual <= .seconds(300) + ReflexCoach.silenceTick * 15, "\(virtual)")
        // Less wall time than the 300 s the coach was silent for: a wall-clock silence fails here.
        #expect(ContinuousClock.now - wall < .seconds(240))
    }

    /// After `finished` with step results missing, the coach waits ``ReflexCoach/finishGrace`` on
    /// its clock, then ends the session saying how many never arrived.
    @Test func theFinishGraceEndsWhenTheManualClockPassesIt() async throws {
        let manual = ManualClock()
        let (events, virtual) = try await Self.run(ScriptedTrainer(finishedAfter: 2), on: manual) { coach in
            coach.finishGrace = .seconds(120)
            coach.quietTimeout = .seconds(3600)
        }
        #expect(events.contains { if case .status(.finished(stepsDone: 2)) = $0 { return true } else { return false } })
        guard case let .ended(outcome)? = events.last else { Issue.record("no end event: \(events)"); return }
        #expect(outcome.reason == "finished, but 2 step results never arrived", "\(outcome.reason)")
        #expect(!outcome.complete && outcome.stepsStored == 0)
        #expect(virtual >= .seconds(120) && virtual < .seconds(135), "\(virtual)")  // see the bound above
    }
}
