import Foundation
import Testing
@testable import BluetideReflex

@Suite("ReflexStatistics")
struct ReflexStatisticsTests {
    /// Hits 400, 300, 500, 200 ms, one miss (1500 ms, wrong target first).
    static let steps: [StepResult] = [
        Fixture.step(0, target: 0, hit: true, ms: 400),
        Fixture.step(1, target: 1, hit: true, ms: 300),
        Fixture.step(2, target: 0, hit: true, ms: 500),
        Fixture.step(3, target: 1, hit: false, ms: 1500, wrong: true),
        Fixture.step(4, target: 2, hit: true, ms: 200),
    ]

    @Test func summaryWithMissesAndEvenMedian() {
        let s = ReflexStatistics.summary(of: Self.steps)
        #expect(s.count == 5)
        #expect(s.hits == 4)
        #expect(s.misses == 1)
        #expect(s.wrongTargetFirst == 1)
        #expect(s.hitRate == 0.8)
        #expect(s.meanMilliseconds == 350)
        #expect(s.medianMilliseconds == 350)  // (300 + 400) / 2: the miss's 1500 ms is not counted
        #expect(s.bestMilliseconds == 200)
        #expect(s.worstMilliseconds == 500)
        // Population SD: deviations ±50, ±150 → sqrt((2500 + 2500 + 22500 + 22500) / 4) = sqrt(12500).
        #expect(abs((s.standardDeviationMilliseconds ?? 0) - 12_500.0.squareRoot()) < 1e-9)
    }

    @Test func oddMedianAndSingleHit() {
        let odd = ReflexStatistics.summary(of: Array(Self.steps.prefix(3)))
        #expect(odd.medianMilliseconds == 400)
        #expect(odd.hitRate == 1)
        let one = ReflexStatistics.summary(of: [Fixture.step(0, target: 5, hit: true, ms: 321)])
        #expect(one.meanMilliseconds == 321)
        #expect(one.medianMilliseconds == 321)
        #expect(one.standardDeviationMilliseconds == 0)
    }

    @Test func perTargetSummaries() {
        let per = ReflexStatistics.perTarget(Self.steps)
        #expect(per.map(\.target) == [0, 1, 2])
        #expect(per[0].summary.meanMilliseconds == 450)
        #expect(per[0].summary.hitRate == 1)
        #expect(per[1].summary.count == 2)
        #expect(per[1].summary.hitRate == 0.5)
        #expect(per[1].summary.meanMilliseconds == 300)
        #expect(per[1].summary.wrongTargetFirst == 1)
        #expect(per[2].summary.bestMilliseconds == 200)
    }

    @Test func emptyAndHitlessDataGiveNilsNotCrashes() {
        let empty = ReflexStatistics.summary(of: [])
        #expect(empty == .empty)
        #expect(empty.hitRate == nil)
        #expect(empty.meanMilliseconds == nil)
        let misses = ReflexStatistics.summary(of: [Fixture.step(0, target: 0, hit: false, ms: 1000), Fixture.step(1, target: 1, hit: false, ms: 1000)])
        #expect(misses.hitRate == 0)
        #expect(misses.meanMilliseconds == nil)
        #expect(misses.medianMilliseconds == nil)
        #expect(misses.standardDeviationMilliseconds == nil)
        #expect(ReflexStatistics.perTarget([]).isEmpty)

        let noSessions = ReflexStatistics.trend(of: [])
        #expect(noSessions.points.isEmpty)
        #expect(noSessions.perSession == nil)
        #expect(noSessions.millisecondsPerWeek == nil)
        let hitless = ReflexStatistics.trend(of: [Fixture.results(id: 1, started: Fixture.day0, hitTimes: [], misses: 3)])
        #expect(hitless.points.isEmpty)
        let single = ReflexStatistics.trend(of: [Fixture.results(id: 1, started: Fixture.day0, hitTimes: [300])])
        #expect(single.points.count == 1)
        #expect(single.perSession == nil)
        // Two sessions at the same instant: a slope per session exists, per week does not.
        let sameTime = ReflexStatistics.trend(of: [
            Fixture.results(id: 1, started: Fixture.day0, hitTimes: [300]), Fixture.results(id: 2, started: Fixture.day0, hitTimes: [200]),
        ])
        #expect(sameTime.millisecondsPerSession == -100)
        #expect(sameTime.perWeek == nil)
    }

    /// Issue 21 item 12: the trend says slower or faster, and per week only when the sessions
    /// span two weeks (sessions seconds apart once read "3524497.1 ms per week").
    @Test func trendTextSaysTheDirectionAndPerWeekOnlyOverWeeks() throws {
        let secondsApart = ReflexStatistics.trend(of: [
            Fixture.results(id: 1, started: Fixture.day0, hitTimes: [400]),
            Fixture.results(id: 2, started: Fixture.day0.addingTimeInterval(10), hitTimes: [481]),
        ])
        #expect(secondsApart.millisecondsPerWeek != nil, "the fit exists")
        #expect(secondsApart.shownMillisecondsPerWeek == nil)
        #expect(secondsApart.text == "81.0 ms slower per session")
        let overWeeks = ReflexStatistics.trend(of: [
            Fixture.results(id: 1, started: Fixture.day0, hitTimes: [500]),
            Fixture.results(id: 2, started: Fixture.day0.addingTimeInterval(Fixture.week), hitTimes: [480]),
            Fixture.results(id: 3, started: Fixture.day0.addingTimeInterval(3 * Fixture.week), hitTimes: [350]),
        ])
        #expect(overWeeks.text == "75.0 ms faster per session (52.1 ms faster per week)")
        let flat = ReflexStatistics.trend(of: [
            Fixture.results(id: 1, started: Fixture.day0, hitTimes: [300]), Fixture.results(id: 2, started: Fixture.day0, hitTimes: [300]),
        ])
        #expect(flat.text == "no change per session")
        #expect(ReflexStatistics.trend(of: []).text == nil)
    }

    @Test func trendSlopesPerSessionAndPerWeek() throws {
        // Means 500, 480, 350 ms at weeks 0, 1, 3 (given out of order).
        let sessions = [
            Fixture.results(id: 3, started: Fixture.day0.addingTimeInterval(3 * Fixture.week), hitTimes: [300, 400]),
            Fixture.results(id: 1, started: Fixture.day0, hitTimes: [500], misses: 2),
            Fixture.results(id: 2, started: Fixture.day0.addingTimeInterval(Fixture.week), hitTimes: [480]),
        ]
        let trend = ReflexStatistics.trend(of: sessions)
        #expect(trend.points.map(\.sessionID) == [1, 2, 3])
        #expect(trend.points.map(\.meanMilliseconds) == [500, 480, 350])
        #expect(trend.points[0].hitRate == 1.0 / 3.0)
        // Per session: x = 0, 1, 2 → slope = ((-1)(56.67) + (1)(-93.33)) / 2 = -75.
        let perSession = try #require(trend.perSession)
        #expect(abs(perSession.slope - -75) < 1e-9)
        #expect(abs(perSession.value(at: 0) - (1330.0 / 3 + 75)) < 1e-9)
        // Per week: x = 0, 1, 3 → Sxy = -730/3, Sxx = 14/3 → slope = -365/7.
        #expect(abs((trend.millisecondsPerWeek ?? 0) - -365.0 / 7.0) < 1e-9)

        let completeOnly = ReflexStatistics.trend(of: [
            Fixture.results(id: 1, started: Fixture.day0, hitTimes: [500]),
            SessionResults(session: Fixture.session(id: 2, started: Fixture.day0.addingTimeInterval(60), complete: false),
                           steps: [Fixture.step(0, target: 0, hit: true, ms: 100, session: 2)]),
        ], includeIncomplete: false)
        #expect(completeOnly.points.map(\.sessionID) == [1])
    }

    @Test func athleteStatisticsCombineSessions() throws {
        let sessions = [
            Fixture.results(id: 1, started: Fixture.day0, hitTimes: [500, 300], misses: 2),
            Fixture.results(id: 2, started: Fixture.day0.addingTimeInterval(Fixture.week), hitTimes: [200]),
            SessionResults(session: Fixture.session(id: 3, started: Fixture.day0.addingTimeInterval(2 * Fixture.week), complete: false),
                           steps: [Fixture.step(0, target: 0, hit: true, ms: 100, session: 3)]),
        ]
        let all = ReflexStatistics.athlete(sessions)
        #expect(all.sessions == 3)
        #expect(all.overall.count == 6)
        #expect(all.overall.hits == 4)
        #expect(all.overall.meanMilliseconds == 275)
        #expect(all.overall.medianMilliseconds == 250)
        #expect(all.trend.points.map(\.meanMilliseconds) == [400, 200, 100])
        #expect(all.trend.millisecondsPerWeek == -150)
        let complete = ReflexStatistics.athlete(sessions, includeIncomplete: false)
        #expect(complete.sessions == 2)
        #expect(complete.overall.hits == 3)
        #expect(complete.trend.millisecondsPerSession == -200)
        #expect(ReflexStatistics.athlete([]) == AthleteStatistics(sessions: 0, overall: .empty, perTarget: [], trend: ReflexStatistics.trend(of: [])))
        // The statistics encode to JSON for a web page.
        let json = String(decoding: try JSONEncoder().encode(all), as: UTF8.self)
        #expect(json.contains("\"meanMilliseconds\":275"))
    }

    @Test func sessionStatisticsCountMissingSteps() {
        let results = SessionResults(session: Fixture.session(id: 1, started: Fixture.day0, steps: 8), steps: Self.steps)
        let stats = ReflexStatistics.session(results)
        #expect(stats.missingSteps == 3)
        #expect(stats.overall.hits == 4)
        #expect(stats.perTarget.count == 3)
    }

    @Test func leastSquaresEdgeCases() {
        #expect(ReflexStatistics.leastSquares(x: [1], y: [2]) == nil)
        #expect(ReflexStatistics.leastSquares(x: [1, 2], y: [2]) == nil)
        #expect(ReflexStatistics.leastSquares(x: [3, 3, 3], y: [1, 2, 3]) == nil)
        #expect(ReflexStatistics.leastSquares(x: [0, 1, 2], y: [1, 3, 5]) == LinearFit(slope: 2, intercept: 1))
        #expect(ReflexStatistics.median(ofSorted: []) == nil)
        #expect(ReflexStatistics.median(ofSorted: [1, 2, 3, 10]) == 2.5)
    }
}
