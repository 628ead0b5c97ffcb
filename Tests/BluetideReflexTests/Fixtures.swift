import BluetideProfiles
import Foundation
@testable import BluetideReflex

/// Shared test data: fixed instants and small builders.
enum Fixture {
    /// 2026-11-01T10:00:00Z.
    static let day0 = Date(timeIntervalSince1970: 1_793_527_200)
    static let week: TimeInterval = 7 * 86_400

    static func program(_ targets: [UInt8], _ ms: [UInt16]) throws -> PunchProgram {
        try PunchProgram(sequence: PunchSequence(targets: targets), timeSequence: PunchTimeSequence(milliseconds: ms))
    }

    static func step(_ index: Int, target: UInt8, hit: Bool, ms: Int64, wrong: Bool = false, session: Int64 = 1) -> StepResult {
        StepResult(sessionId: session, stepIndex: index, target: target, hit: hit, wrongTarget: wrong, reactionMilliseconds: ms)
    }

    static func session(id: Int64, started: Date, steps: Int = 4, complete: Bool = true) -> TrainingSession {
        TrainingSession(id: id, athleteId: 1, sequenceName: "S", targets: Array(repeating: 0, count: steps),
                        milliseconds: Array(repeating: 1500, count: steps), started: started, complete: complete)
    }

    /// A session whose hits all take `ms` milliseconds.
    static func results(id: Int64, started: Date, hitTimes: [Int64], misses: Int = 0) -> SessionResults {
        var steps = hitTimes.enumerated().map { step($0.offset, target: UInt8($0.offset % 6), hit: true, ms: $0.element, session: id) }
        for m in 0..<misses { steps.append(step(hitTimes.count + m, target: 0, hit: false, ms: 1500, session: id)) }
        return SessionResults(session: session(id: id, started: started, steps: steps.count), steps: steps)
    }

    static func temporaryPath(_ name: String) -> String {
        let folder = NSTemporaryDirectory() + "bluetide-reflex-tests-\(UUID().uuidString)"
        return folder + "/" + name
    }
}
