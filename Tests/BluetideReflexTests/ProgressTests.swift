import Foundation
import Testing
@testable import BluetideReflex

@Suite struct ProgressTests {
    static func session(_ id: Int64, day: Int, _ steps: [(UInt8, Bool, Int64)], heartRate: Int? = nil) -> SessionResults {
        let stored = steps.enumerated().map { index, step in
            StepResult(sessionId: id, stepIndex: index, target: step.0, hit: step.1, reactionMilliseconds: step.2,
                       heartRateBpm: heartRate.map { $0 + index })
        }
        return SessionResults(session: Fixture.session(id: id, started: Fixture.day0 + Double(day) * 86_400, steps: steps.count), steps: stored)
    }

    @Test func trendsOfMeanBestAndMissesOverallAndPerTarget() throws {
        // Getting faster on target 0 (400, 300, 200 ms), missing less on target 1.
        let sessions = [
            Self.session(3, day: 2, [(0, true, 200), (1, true, 500), (1, true, 500)]),
            Self.session(1, day: 0, [(0, true, 400), (1, false, 900), (1, false, 900)]),
            Self.session(2, day: 1, [(0, true, 300), (1, false, 900), (1, true, 500)]),
        ]
        let progress = AthleteProgress.of(sessions)
        #expect(progress.points.map(\.sessionID) == [1, 2, 3], "oldest first")
        #expect(progress.points.map(\.bestMilliseconds) == [400, 300, 200])
        #expect(progress.best.perSession == -100 && progress.best.first == 400 && progress.best.last == 200)
        let expectedMisses: [Double] = [2.0 / 3, 1.0 / 3, 0]
        #expect(progress.points.map(\.missRate) == expectedMisses)
        let missSlope = try #require(progress.missRate.perSession)
        #expect(abs(missSlope + 1.0 / 3) < 1e-9)
        #expect(progress.perTarget.map(\.target) == [0, 1])
        #expect(progress.perTarget[0].mean.perSession == -100)
        #expect(progress.perTarget[1].missRate.first == 1 && progress.perTarget[1].missRate.last == 0)
        #expect(progress.perTarget[1].mean.first == 500, "the first session of target 1 with a hit")

        let svg = SVGChart.progress(progress)
        #expect(svg.contains("class=\"mean\"") && svg.contains("class=\"best\"") && svg.contains("class=\"target-0\""))
        #expect(svg.contains("3 sessions; mean from"))
    }

    @Test func oneSessionHasNoSlopeAndNoneDrawsNoData() {
        let one = AthleteProgress.of([Self.session(1, day: 0, [(0, true, 300)])])
        #expect(one.mean.perSession == nil && one.mean.first == 300)
        #expect(SVGChart.progress(AthleteProgress.of([])).contains("No sessions"))
    }

    @Test func reactionAgainstHeartRatePlotsHitsWithAHeartRate() {
        let steps = Self.session(1, day: 0, [(0, true, 300), (1, false, 900), (2, true, 320), (3, true, 340)], heartRate: 120).steps
            + [StepResult(sessionId: 1, stepIndex: 9, target: 0, hit: true, reactionMilliseconds: 250)]
        let svg = SVGChart.reactionAgainstHeartRate(steps)
        #expect(svg.components(separatedBy: "<circle").count - 1 == 3, "three hits carry a heart rate")
        #expect(svg.contains("3 hits with a heart rate from 120 to 123 bpm; 12.9 ms per bpm."))
        #expect(svg.contains("class=\"fit\""))
        #expect(SVGChart.reactionAgainstHeartRate([]).contains("No hits with a heart rate"))
    }
}
