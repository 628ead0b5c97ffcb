import BluetideProfiles
import Foundation
import Testing
@testable import BluetideReflex

@Suite struct StrapStoreTests {
    @Test func aStrapIsPairedOnceReplacedAndForgotten() throws {
        let store = try CoachStore.inMemory()
        let ana = try #require(try store.addAthlete(Athlete(name: "Ana", created: Fixture.day0)).id)
        #expect(try store.strap(athleteID: ana) == nil)
        try store.setStrap(athleteID: ana, device: "Strap-1")
        try store.setStrap(athleteID: ana, device: "C6:C5:C4:C3:C2:C1")
        #expect(try store.strap(athleteID: ana) == "C6:C5:C4:C3:C2:C1")
        #expect(try store.removeStrap(athleteID: ana))
        #expect(try !store.removeStrap(athleteID: ana))
        #expect(throws: CoachStoreError.self) { try store.setStrap(athleteID: 999, device: "Strap-1") }
    }

    @Test func theHeartRateIsStoredBesideTheStepAndExported() throws {
        let store = try CoachStore.inMemory()
        let ana = try #require(try store.addAthlete(Athlete(name: "Ana", created: Fixture.day0)).id)
        let session = try store.startSession(athleteID: ana, program: Fixture.program([0, 1, 2], [900, 900, 900]), started: Fixture.day0)
        try store.appendStep(sessionID: session, response: PunchResponse(reactionTimeMilliseconds: 300, target: 0, hit: true, step: 0), heartRateBpm: 142)
        try store.appendStep(sessionID: session, response: PunchResponse(reactionTimeMilliseconds: 310, target: 1, hit: true, step: 1))
        // A value no heart has is not stored as one.
        try store.appendStep(sessionID: session, response: PunchResponse(reactionTimeMilliseconds: 320, target: 2, hit: true, step: 2), heartRateBpm: 0)
        #expect(try store.steps(sessionID: session).map(\.heartRateBpm) == [142, nil, nil])
        let csv = try CSVExport.steps(from: store).split(separator: "\r\n").map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        #expect(csv[0].last == "heart_rate_bpm")
        #expect(csv[1].last == "142" && csv[2].last == "")
    }
}
