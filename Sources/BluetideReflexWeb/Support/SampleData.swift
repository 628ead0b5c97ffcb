import BluetideProfiles
import BluetideReflex
import Foundation

/// A small made-up gym for trying the dashboard without history: three athletes with
/// weigh-ins, three saved sequences, and a few weeks of sessions in which each athlete slowly
/// gets faster. The same `seed` and `now` always give the same data.
public enum SampleData {
    /// What ``add(to:now:seed:)`` created.
    public struct Summary: Sendable, Hashable {
        /// Athletes added, in order.
        public var athletes: [Athlete]
        /// Sequence names saved.
        public var sequences: [String]
        /// Sessions stored.
        public var sessions: Int
    }

    /// Adds the sample athletes, sequences and sessions to `store` (ending just before `now`).
    @discardableResult
    public static func add(to store: CoachStore, now: Date, seed: UInt64 = 2026) throws -> Summary {
        var random = SeededGenerator(seed: seed)
        let day: TimeInterval = 86_400
        let people: [(String, String, String, Stance, String, Double, Double)] = [
            ("Ana Ruiz", "2004-05-17", "female", .orthodox, "Amateur featherweight; works on her left hook.", 57.2, 330),
            ("Marco Bianchi", "1998-11-02", "male", .southpaw, "Comes back from a shoulder injury.", 74.8, 410),
            ("Lea Schmidt", "2009-03-09", "female", .switchStance, "Junior squad.", 49.5, 470),
        ]
        let warmUp = try store.saveSequence(name: "Jab warm-up", targets: [0, 1, 0, 1, 2, 3], milliseconds: Array(repeating: 1200, count: 6),
                                            maxIntervalMilliseconds: 2000, at: now.addingTimeInterval(-40 * day))
        let circle = try store.saveSequence(name: "Full circle", targets: [0, 1, 2, 3, 4, 5, 4, 3, 2, 1],
                                            milliseconds: [900, 900, 900, 900, 900, 900, 800, 800, 800, 800],
                                            at: now.addingTimeInterval(-39 * day))
        let speed = try RandomSequenceGenerator(stepCount: 12, times: .uniform(700...1100)).generate(seed: seed)
        let speedSaved = try store.saveSequence(name: "Speed 12", program: speed, maxIntervalMilliseconds: 1500,
                                                at: now.addingTimeInterval(-38 * day))
        let sequences = [warmUp, circle, speedSaved]

        var athletes: [Athlete] = []
        var sessionCount = 0
        for (index, person) in people.enumerated() {
            let athlete = try store.addAthlete(Athlete(
                name: person.0, birthDate: CalendarDate(iso: person.1), sex: person.2, stance: person.3, notes: person.4,
                created: now.addingTimeInterval(-42 * day)))
            athletes.append(athlete)
            guard let id = athlete.id else { continue }
            for week in 0..<6 {
                let drift = (Double(random.below(9)) - 4) / 10
                try store.recordWeight(athleteID: id, date: CalendarDate(utcDayOf: now.addingTimeInterval(Double(week - 6) * 7 * day)),
                                       kilograms: ((person.5 + drift - Double(week) * 0.15) * 10).rounded() / 10)
            }
            for number in 0..<(6 - index) {
                let saved = sequences[(number + index) % sequences.count]
                let program = try saved.program()
                let started = now.addingTimeInterval(Double(number - 6 + index) * 6 * day + Double(17 + index) * 3600)
                let session = try store.startSession(athleteID: id, program: program, sequenceName: saved.name, started: started,
                                                     deviceName: "Reflex-C1C2", deviceAddress: "C6:C5:C4:C3:C2:C1")
                // Slowly faster: the mean drops ~12 ms per session; each target a little different.
                let mean = person.6 - 12 * Double(number)
                for (step, target) in program.sequence.targets.enumerated() {
                    let allowed = UInt32(program.timeSequence.milliseconds[step])
                    let missed = random.below(100) < 8
                    let jitter = Double(random.below(121)) - 60 + Double(target) * 9
                    let reaction = missed ? allowed : UInt32(min(Double(allowed - 1), max(150, mean + jitter)))
                    try store.appendStep(sessionID: session, response: PunchResponse(
                        reactionTimeMilliseconds: reaction, target: target, hit: !missed, wrongTargetFirst: !missed && random.below(100) < 5,
                        step: UInt16(step)))
                }
                try store.finishSession(id: session, ended: started.addingTimeInterval(30), complete: true)
                sessionCount += 1
            }
        }
        return Summary(athletes: athletes, sequences: sequences.map(\.name), sessions: sessionCount)
    }
}
