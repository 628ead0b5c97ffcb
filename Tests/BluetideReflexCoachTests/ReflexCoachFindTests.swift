import Bluetide
import BluetideProfiles
import BluetideReflex
import BluetideSupport
import BluetideEmulation
import Foundation
import Testing
@testable import BluetideReflexCoach

/// Issue 22 item 3: the coach finds its trainer through `Central.find` (one finder for the
/// CLI, the serial scanner, the coach and the ride), with its own "seen" list in the error.
@Suite(.timeLimit(.minutes(1))) struct ReflexCoachFindTests {
    @Test func theChoiceBecomesAQueryForAPunchTrainer() async throws {
        // A host alone in a world on a manual clock: its set-up's time limits run in virtual time.
        let manual = ManualClock()
        let world = VirtualWorld(clock: BluetideClock(manual))
        let bluetooth = try await within(30, "host set-up") { try await manual.advancing { try await world.openHost() } }
        let coach = ReflexCoach(central: bluetooth.central, store: try CoachStore.inMemory())
        let strongest = coach.trainerQuery(.strongest)
        #expect(strongest.services == [PunchUUID.service] && strongest.namePrefix == PunchUUID.namePrefix && strongest.name == nil)
        let named = coach.trainerQuery(TrainerChoice(parsing: "punch-a"))
        #expect(named.name == "punch-a" && named.ignoresNameCase)
        let address = coach.trainerQuery(TrainerChoice(parsing: "c6:c5:c4:c3:c2:c1/R"))
        #expect(address.address?.value == (try BluetoothAddress("C6:C5:C4:C3:C2:C1", type: .random)).value)
        #expect(coach.trainerQuery(.address("not an address")).minimumRSSI == .max, "text that is no address matches no device")
        await world.close()
    }

    @Test func findsTheEmulatedTrainerAndNamesTheTrainersSeenWhenTheChoiceIsNotThere() async throws {
        let rig = try await CoachRig.start()
        defer { Task { await rig.close() } }
        let coach = rig.coach()
        // Virtual time: the coach's own scan rounds (2 s) and its 30 s limit for a trainer not there.
        let (found, error) = try await rig.run(30, "find the trainer") {
            let found = try await coach.findTrainer()
            let error = await #expect(throws: CoachError.self) { _ = try await coach.findTrainer(.name("Nobody")) }
            return (found, error)
        }
        #expect(found.address == rig.trainer.address)
        guard case let .trainerNotFound(choice, _, seen)? = error else { Issue.record("\(String(describing: error))"); return }
        #expect(choice == .name("Nobody"))
        #expect(seen == ["\(found.name ?? "?") \(found.address.string)"], "\(seen)")
    }
}
