import BluetideProfiles
import Foundation
import Testing
@testable import BluetideReflex

@Suite struct HeadToHeadRulesTests {
    @Test func firstToNHitsIsDecidedByTheHitThatReachesIt() throws {
        var game = try HeadToHead(lanes: 2, rule: .firstTo(hits: 3))
        #expect(game.record(lane: 0, hit: true, milliseconds: 300) == nil)
        #expect(game.record(lane: 1, hit: true, milliseconds: 200) == nil)
        #expect(game.record(lane: 1, hit: false, milliseconds: 900) == nil)
        #expect(game.record(lane: 0, hit: true, milliseconds: 310) == nil)
        #expect(game.record(lane: 1, hit: true, milliseconds: 210) == nil)
        let decided = game.record(lane: 0, hit: true, milliseconds: 320)
        #expect(decided == .winner(0, why: "first to 3 hits"))
        // Later steps and ends do not change it, though lane 1 has a better mean.
        game.record(lane: 1, hit: true, milliseconds: 100)
        #expect(game.laneEnded(0, complete: false) == nil)
        #expect(game.laneEnded(1, complete: false) == nil)
        #expect(game.decision == .winner(0, why: "first to 3 hits"))
    }

    @Test func firstToWithNobodyThereRanksByHitsThenMean() throws {
        var game = try HeadToHead(lanes: 3, rule: .firstTo(hits: 10))
        for (lane, hits, ms) in [(0, 2, 300), (1, 3, 500), (2, 3, 400)] {
            for _ in 0..<hits { game.record(lane: lane, hit: true, milliseconds: ms) }
        }
        #expect(game.laneEnded(0, complete: true) == nil)
        #expect(game.laneEnded(1, complete: true) == nil)
        let decision = game.laneEnded(2, complete: true)
        #expect(decision == .winner(2, why: "most hits (3), nobody reached the target"))
        #expect(game.standings.map(\.lane) == [2, 1, 0])
    }

    @Test func bestMeanWaitsForEveryLaneAndPutsACompleteRunFirst() throws {
        var game = try HeadToHead(lanes: 2, rule: .bestMean)
        game.record(lane: 0, hit: true, milliseconds: 400)
        game.record(lane: 0, hit: true, milliseconds: 200)   // mean 300
        game.record(lane: 1, hit: true, milliseconds: 150)   // mean 150, but its trainer was lost
        #expect(game.laneEnded(1, complete: false) == nil)
        #expect(game.decision == nil)
        #expect(game.laneEnded(0, complete: true) == .winner(0, why: "best mean 300 ms"))
    }

    @Test func equalFiguresAreADrawAndNoHitsIsNoResult() throws {
        var tie = try HeadToHead(lanes: 2, rule: .bestMean)
        for lane in 0..<2 { tie.record(lane: lane, hit: true, milliseconds: 250); tie.laneEnded(lane, complete: true) }
        #expect(tie.decision == .draw([0, 1], why: "best mean 250 ms"))

        var none = try HeadToHead(lanes: 2, rule: .bestMean)
        for lane in 0..<2 { none.record(lane: lane, hit: false, milliseconds: 900); none.laneEnded(lane, complete: true) }
        guard case .noResult = none.decision else { Issue.record("\(String(describing: none.decision))"); return }
    }

    @Test func badSetUpsAreRefusedWithTheValue() {
        #expect(throws: GameSetupError("a head-to-head needs at least 2 athletes, got 1")) { try HeadToHead(lanes: 1, rule: .bestMean) }
        #expect(throws: GameSetupError("first-to needs at least 1 hit, got 0")) { try HeadToHead(lanes: 2, rule: .firstTo(hits: 0)) }
    }
}

@Suite struct RelayRulesTests {
    @Test func teamsSplitInOrderAndOnlyEvenly() throws {
        #expect(try Relay.teams(of: ["A", "B", "C", "D"], count: 2) == [["A", "B"], ["C", "D"]])
        #expect(try Relay.teams(of: ["A", "B", "C"], count: 1) == [["A", "B", "C"]])
        #expect(throws: GameSetupError.self) { try Relay.teams(of: ["A", "B", "C"], count: 2) }
        #expect(throws: GameSetupError.self) { try Relay.teams(of: ["A"], count: 2) }
    }

    @Test func legsFollowOneAnotherAndTheLowerTimeWins() throws {
        var relay = try Relay(teams: 2, teamSize: 2)
        // Team 0: two fast legs with one miss (a miss costs its 1000 ms window).
        relay.record(team: 0, hit: true, milliseconds: 200)
        relay.record(team: 0, hit: false, milliseconds: 1000)
        #expect(relay.legEnded(team: 0, complete: true) == .leg(member: 1))
        relay.record(team: 0, hit: true, milliseconds: 200)
        relay.record(team: 0, hit: true, milliseconds: 200)
        #expect(relay.legEnded(team: 0, complete: true) == .teamDone)
        #expect(relay.decision == nil, "team 1 is still running")
        // Team 1: slower hits but no miss: 4 × 350 = 1400 < 1600.
        for _ in 0..<2 { relay.record(team: 1, hit: true, milliseconds: 350) }
        #expect(relay.legEnded(team: 1, complete: true) == .leg(member: 1))
        for _ in 0..<2 { relay.record(team: 1, hit: true, milliseconds: 350) }
        #expect(relay.legEnded(team: 1, complete: true) == .teamDone)
        #expect(relay.decision == .winner(1, why: "1400 ms over 4 steps, 4 hits"))
        #expect(relay.standings.map(\.team) == [1, 0])
        #expect(relay.standings.last?.tally.totalMilliseconds == 1600)
    }

    @Test func aLegCutShortStillHandsOverButRanksTheTeamLast() throws {
        var relay = try Relay(teams: 2, teamSize: 2)
        relay.record(team: 0, hit: true, milliseconds: 100)
        #expect(relay.legEnded(team: 0, complete: false) == .leg(member: 1), "the next member still runs")
        relay.record(team: 0, hit: true, milliseconds: 100)
        #expect(relay.legEnded(team: 0, complete: true) == .teamDone)
        for _ in 0..<2 {
            for _ in 0..<2 { relay.record(team: 1, hit: true, milliseconds: 300) }
            _ = relay.legEnded(team: 1, complete: true)
        }
        guard case .winner(1, _)? = relay.decision else { Issue.record("\(String(describing: relay.decision))"); return }
        #expect(relay.standings.first?.allComplete == true && relay.standings.last?.allComplete == false)
    }
}

@Suite struct ColourChaseRulesTests {
    @Test func eachPlayerOwnsOneColourAndTheProgramUsesOnlyThose() throws {
        let chase = try ColourChase(players: 3)
        #expect((0..<3).map { chase.target(of: $0) } == [0, 1, 2])
        #expect(chase.owner(of: 2) == 2 && chase.owner(of: 3) == nil)
        let times: [UInt16] = Array(repeating: 700, count: 60)
        let program = try chase.program(times: times, seed: 42)
        #expect(program.timeSequence.milliseconds == times)
        #expect(Set(program.sequence.targets) == [0, 1, 2], "every player gets steps, nobody else does")
        #expect(try chase.program(times: times, seed: 42) == program, "the same seed gives the same chase")
        #expect(try chase.program(times: times, seed: 43) != program)
    }

    @Test func stepsCountForTheTargetsOwnerAndMostHitsWins() throws {
        var chase = try ColourChase(players: 2)
        chase.record(target: 0, hit: true, milliseconds: 300)
        chase.record(target: 1, hit: true, milliseconds: 200)
        chase.record(target: 0, hit: true, milliseconds: 300)
        chase.record(target: 1, hit: false, milliseconds: 800)
        chase.record(target: 5, hit: true, milliseconds: 1)   // nobody's
        #expect(chase.tallies[0].hits == 2 && chase.tallies[1].hits == 1 && chase.tallies[1].misses == 1)
        #expect(chase.decision == .winner(0, why: "2 hits, mean 300 ms"))
    }

    @Test func oneToFourPlayers() {
        #expect(throws: GameSetupError.self) { try ColourChase(players: 0) }
        #expect(throws: GameSetupError.self) { try ColourChase(players: 5) }
        #expect((try? ColourChase(players: 1)) != nil && (try? ColourChase(players: 4)) != nil)
    }
}

@Suite struct AdaptiveIntervalTests {
    @Test func shortensAfterAStreakAndLengthensAfterAMiss() {
        var adaptive = AdaptiveInterval(start: 1000, range: 300...2000)
        #expect(adaptive.record(hit: true) == 1000)
        #expect(adaptive.record(hit: true) == 1000)
        #expect(adaptive.record(hit: true) == 900, "third hit in a row: 10 % shorter")
        #expect(adaptive.record(hit: true) == 900, "the streak starts again")
        #expect(adaptive.record(hit: false) == 1080, "a miss: 20 % longer, streak reset")
        #expect(adaptive.streak == 0)
    }

    @Test func staysWithinItsRange() {
        var fast = AdaptiveInterval(start: 320, range: 300...2000)
        for _ in 0..<30 { fast.record(hit: true) }
        #expect(fast.milliseconds == 300)
        var slow = AdaptiveInterval(start: 1900, range: 300...2000)
        for _ in 0..<5 { slow.record(hit: false) }
        #expect(slow.milliseconds == 2000)
        #expect(AdaptiveInterval(start: 10, range: 300...2000).milliseconds == 300)
    }
}

@Suite struct FatigueTests {
    @Test func driftFromTheFirstToTheLastThird() throws {
        // 12 hits: 200 ms for the first four, 240 in the middle, 260 for the last four; misses ignored.
        var steps = (0..<12).map { i in Fixture.step(i, target: 0, hit: true, ms: i < 4 ? 200 : (i < 8 ? 240 : 260)) }
        steps.append(Fixture.step(12, target: 1, hit: false, ms: 1500))
        let fatigue = try #require(Fatigue.of(steps.shuffled()))
        #expect(fatigue.firstThirdMilliseconds == 200 && fatigue.lastThirdMilliseconds == 260)
        #expect(fatigue.driftMilliseconds == 60)
        #expect(fatigue.showsFatigue)
        #expect(fatigue.text == "slower by 60 ms (+30 %) from the first to the last third")
        #expect((fatigue.millisecondsPerStep ?? 0) > 0)
    }

    @Test func steadyOrTooFewHitsShowNone() {
        let steady = (0..<9).map { Fixture.step($0, target: 0, hit: true, ms: 250) }
        #expect(Fatigue.of(steady)?.showsFatigue == false)
        #expect(Fatigue.of(Array(steady.prefix(8))) == nil)
        let results = SessionResults(session: Fixture.session(id: 1, started: Fixture.day0, steps: 9), steps: steady)
        #expect(ReflexStatistics.session(results).fatigue?.driftMilliseconds == 0)
    }
}

@Suite struct ColourChaseProgramTests {
    @Test func everyPlayerIsLitEvenInAShortChaseAndStepsSplitByOwner() throws {
        let chase = try ColourChase(players: 4)
        for seed in 0..<20 as Range<UInt64> {
            let program = try chase.program(times: [500, 500, 500, 500], seed: seed)
            #expect(Set(program.sequence.targets) == [0, 1, 2, 3])
        }
        let program = try chase.program(times: Array(repeating: 500, count: 12), seed: 1)
        let split = chase.stepsByPlayer(of: program)
        #expect(split.flatMap { $0 }.sorted() == Array(0..<12))
        for (player, steps) in split.enumerated() { #expect(steps.allSatisfy { program.sequence.targets[$0] == UInt8(player) }) }
        #expect(throws: GameSetupError("a colour chase of 4 players needs at least 4 steps; the sequence has 3")) {
            try chase.program(times: [500, 500, 500], seed: 0)
        }
    }
}
