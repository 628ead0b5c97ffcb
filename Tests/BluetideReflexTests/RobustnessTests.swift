import BluetideCharts
import Foundation
import Testing
@testable import BluetideReflex

/// Random and extreme hand-made records: statistics, CSV and charts give values, never traps,
/// and the SVG stays well-formed.
@Suite("Robustness")
struct RobustnessTests {
    static func randomSteps(_ rng: inout SeededGenerator, session: Int64) -> [StepResult] {
        let extremes: [Int64] = [0, -1, 1, Int64.max, Int64.min, 60_000, 4_294_967_295]
        return (0..<Int(rng.below(12))).map { i in
            let ms = rng.below(4) == 0 ? extremes[Int(rng.below(UInt64(extremes.count)))] : Int64(rng.below(3000))
            let index = rng.below(8) == 0 ? [Int.max, Int.min, -1, 100_000][Int(rng.below(4))] : i
            let heartRate = rng.below(3) == 0 ? nil : (rng.below(6) == 0 ? [Int.max, Int.min, 0, -5][Int(rng.below(4))] : Int(rng.below(220)))
            return StepResult(sessionId: session, stepIndex: index, target: UInt8(truncatingIfNeeded: rng.next()),
                              hit: rng.below(3) != 0, wrongTarget: rng.below(5) == 0, reactionMilliseconds: ms, heartRateBpm: heartRate)
        }
    }

    @Test func randomRecordsNeverTrap() throws {
        var rng = SeededGenerator(seed: 0xB1E7)
        var svgChecked = 0
        for round in 0..<300 {
            var sessions: [SessionResults] = []
            for k in 0..<Int(rng.below(5)) {
                let id = Int64(k + 1)
                let seconds = rng.below(6) == 0 ? [-1e11, 0, 1e11, 253_402_300_799][Int(rng.below(4))] : Double(rng.below(100_000_000))
                let stepCount = Int(rng.below(10))
                let session = TrainingSession(
                    id: id, athleteId: 1, sequenceName: rng.below(2) == 0 ? nil : "Mix,\"\n\u{1}<&>",
                    targets: (0..<stepCount).map { _ in UInt8(truncatingIfNeeded: rng.next()) },
                    milliseconds: (0..<stepCount).map { _ in UInt16(truncatingIfNeeded: rng.next()) },
                    started: Date(timeIntervalSince1970: seconds), complete: rng.below(2) == 0)
                sessions.append(SessionResults(session: session, steps: Self.randomSteps(&rng, session: id)))
            }
            let all = sessions.flatMap(\.steps)
            let summary = ReflexStatistics.summary(of: all)
            #expect(summary.count == all.count)
            if let rate = summary.hitRate { #expect((0...1).contains(rate)) }
            _ = ReflexStatistics.perTarget(all)
            let trend = ReflexStatistics.trend(of: sessions)
            let csv = CSVExport.sessions(sessions, athletes: []) + CSVExport.steps(sessions, athletes: [])
            #expect(csv.hasSuffix("\r\n"))
            // Issue 27: fatigue, leaderboards, progress and the heart-rate chart on the same records.
            for results in sessions { _ = ReflexStatistics.session(results).fatigue?.text }
            _ = Leaderboard.board(sessions, athletes: [Athlete(id: 1, name: "A", created: Date(timeIntervalSince1970: 0))], weights: [:],
                                  sequence: "Mix,\"\n\u{1}<&>", period: .week, now: Date(timeIntervalSince1970: 1e8))
            let progress = AthleteProgress.of(sessions)
            let charts = sessions.map { SVGChart.reactionTimes(of: $0) } + [SVGChart.meansOverTime(trend), SVGChart.perTarget(ReflexStatistics.perTarget(all))]
                + [SVGChart.progress(progress), SVGChart.reactionAgainstHeartRate(all)]
            if round % 5 == 0 {
                for chart in charts {
                    #expect(SVGCollector.parse(chart) != nil, "not well-formed:\n\(chart)")
                    svgChecked += 1
                }
            }
        }
        #expect(svgChecked > 60)
    }

    @Test func formattingOfExtremeNumbers() {
        for value in [Double.infinity, -.infinity, .nan, 1e300, -1e300, .leastNonzeroMagnitude, 9.2e18] {
            for digits in [-3, 0, 2, 6, 9] { _ = DecimalText.fixed(value, digits) }
            _ = DecimalText.compact(value)
        }
        #expect(DecimalText.fixed(1e300, 6) == "1000000000000.000000")
        #expect(UTCCalendar.iso8601(Date(timeIntervalSince1970: .nan)) == "1970-01-01T00:00:00.000Z")
        #expect(UTCCalendar.iso8601(Date(timeIntervalSince1970: 1e300)) == "9999-12-31T23:59:59.999Z")
        #expect(UTCCalendar.iso8601(Date(timeIntervalSince1970: -1e300)) == "0001-01-01T00:00:00.000Z")
        #expect(ChartAxis.valueTicks(upTo: .nan) == [0, 200, 400, 600, 800, 1000])
        #expect(ChartAxis.valueTicks(upTo: 1234) == [0, 500, 1000, 1500])
        #expect(ChartAxis.timeTicks(from: Date(timeIntervalSince1970: 0), to: Date(timeIntervalSince1970: 1e15)).ticks.count <= 100)
    }
}
