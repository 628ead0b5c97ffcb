import Foundation
import Testing
@testable import BluetideReflex

@Suite struct LeaderboardTests {
    static let ana = Athlete(id: 1, name: "Ana", created: Fixture.day0)
    static let ben = Athlete(id: 2, name: "Ben", created: Fixture.day0)

    static func result(id: Int64, athlete: Int64, sequence: String = "Jab", started: Date, times: [Int64], misses: Int = 0,
                       complete: Bool = true) -> SessionResults {
        var base = Fixture.results(id: id, started: started, hitTimes: times, misses: misses)
        base.session.athleteId = athlete
        base.session.sequenceName = sequence
        base.session.complete = complete
        return base
    }

    @Test func oneBestCompleteSessionPerAthleteScoredWithMissesAtTheirWindow() {
        let results = [
            Self.result(id: 1, athlete: 1, started: Fixture.day0, times: [200, 200, 200], misses: 1),   // (600 + 1500) / 4 = 525
            Self.result(id: 2, athlete: 1, started: Fixture.day0 + 60, times: [300, 300, 300, 300]),    // 300: Ana's best
            Self.result(id: 3, athlete: 2, started: Fixture.day0, times: [250, 250, 250, 250]),         // 250
            Self.result(id: 4, athlete: 2, started: Fixture.day0, times: [100], complete: false),       // incomplete: left out
            Self.result(id: 5, athlete: 2, sequence: "Hook", started: Fixture.day0, times: [90]),       // other sequence
        ]
        let board = Leaderboard.board(results, athletes: [Self.ana, Self.ben], weights: [:], sequence: "Jab", now: Fixture.day0)
        #expect(board.map(\.athlete.name) == ["Ben", "Ana"])
        #expect(board.map(\.rank) == [1, 2])
        #expect(board.map(\.session.id) == [3, 2])
        #expect(board.map(\.scoreMilliseconds) == [250, 300])
        #expect(Leaderboard.score(results[0].steps) == 525)
    }

    @Test func periodsAndWeightClassesFilter() {
        let now = Fixture.day0
        let results = [
            Self.result(id: 1, athlete: 1, started: now - 3 * 86_400, times: [200]),
            Self.result(id: 2, athlete: 2, started: now - 3600, times: [300]),
            Self.result(id: 3, athlete: 2, started: now - 30 * 86_400, times: [100]),
        ]
        let athletes = [Self.ana, Self.ben]
        #expect(Leaderboard.board(results, athletes: athletes, weights: [:], sequence: "Jab", period: .day, now: now).map(\.session.id) == [2])
        #expect(Leaderboard.board(results, athletes: athletes, weights: [:], sequence: "Jab", period: .week, now: now).map(\.session.id) == [1, 2])
        #expect(Leaderboard.board(results, athletes: athletes, weights: [:], sequence: "Jab", period: .all, now: now).map(\.session.id) == [3, 1])

        let day = CalendarDate(utcDayOf: now - 40 * 86_400)
        let weights: [Int64: [WeightEntry]] = [
            1: [WeightEntry(athleteId: 1, date: day, kilograms: 62.0)],
            2: [WeightEntry(athleteId: 2, date: day, kilograms: 70.0), WeightEntry(athleteId: 2, date: CalendarDate(utcDayOf: now), kilograms: 63)],
        ]
        let light = WeightClass(parsing: "63.5")
        #expect(light == WeightClass(upperKilograms: 63.5))
        // Ben weighed 70 kg until today: his old session is in the 71 kg class, today's in 63.5.
        let board = Leaderboard.board(results, athletes: athletes, weights: weights, sequence: "Jab", weightClass: light, now: now)
        #expect(board.map(\.session.id) == [1, 2])
        #expect(Leaderboard.board(results, athletes: athletes, weights: weights, sequence: "Jab", weightClass: WeightClass(parsing: "71"), now: now)
            .map(\.session.id) == [3])
    }

    @Test func weightClassesReadAndPrint() {
        #expect(WeightClass.of(kilograms: 48) == WeightClass(upperKilograms: 48))
        #expect(WeightClass.of(kilograms: 48.1) == WeightClass(upperKilograms: 51))
        #expect(WeightClass.of(kilograms: 120) == WeightClass(upperKilograms: nil))
        #expect(WeightClass(parsing: "92+") == WeightClass(upperKilograms: nil))
        #expect(WeightClass(parsing: "65") == nil)
        #expect(WeightClass(upperKilograms: nil).description == "over 92 kg")
        #expect(WeightClass(upperKilograms: 63.5).argument == "63.5" && WeightClass(upperKilograms: 60).argument == "60")
    }
}
