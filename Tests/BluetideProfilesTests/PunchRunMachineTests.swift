import BluetideBase
@testable import BluetideProfiles
import Testing

@Suite struct PunchRunMachineTests {
    typealias Action = PunchRunMachine.Action

    func load(_ targets: [UInt8], _ ms: [UInt16]) throws -> (PunchSequence, PunchTimeSequence) {
        (try PunchSequence(targets: targets), try PunchTimeSequence(milliseconds: ms))
    }

    @Test func hitThenFinish() throws {
        var machine = PunchRunMachine()
        let (s, t) = try load([3], [1000])
        #expect(machine.handle(.start, sequence: s, timeSequence: t, now: 10) == [.status(.armed), .status(.running), .ledOn(target: 3)])
        #expect(machine.nextDeadline == 11)
        #expect(machine.advance(to: 10.3) == [])
        let out = machine.sensorActivated(target: 3, at: 10.412)
        #expect(out == [
            .ledOff(target: 3),
            .response(PunchResponse(reactionTimeMilliseconds: 412, target: 3, hit: true, step: 0)),
            .status(.finished(stepsDone: 1)),
        ])
        #expect(!machine.isRunning && machine.nextDeadline == nil)
        #expect(machine.sensorActivated(target: 3, at: 10.5) == [])
    }

    @Test func missesGapsAndWrongTargets() throws {
        var machine = PunchRunMachine(gapSeconds: 0.25)
        let (s, t) = try load([0, 4, 2], [1500, 1000, 1000])
        _ = machine.handle(.start, sequence: s, timeSequence: t, now: 0)
        // Step 0 times out: the response carries the whole time (reflex-trainer.md's example bytes, step 0).
        let missed = machine.advance(to: 1.5)
        #expect(missed == [.ledOff(target: 0), .response(PunchResponse(reactionTimeMilliseconds: 1500, target: 0, hit: false, step: 0))])
        #expect(machine.nextDeadline == 1.75)
        #expect(machine.sensorActivated(target: 4, at: 1.6) == [])  // during the gap: nothing lit
        #expect(machine.advance(to: 1.8) == [.ledOn(target: 4)])  // lit when handled
        #expect(machine.sensorActivated(target: 1, at: 1.9) == [])
        #expect(machine.sensorActivated(target: 5, at: 1.95) == [])
        let hit = machine.sensorActivated(target: 4, at: 2.05)
        #expect(hit[1] == .response(PunchResponse(reactionTimeMilliseconds: 250, target: 4, hit: true, wrongTargetFirst: true, step: 1)))
        // A late-delivered edge is judged by its own time: deadline handled first → a miss.
        _ = machine.advance(to: 2.3)
        let late = machine.sensorActivated(target: 2, at: 3.5)
        #expect(late == [
            .ledOff(target: 2), .response(PunchResponse(reactionTimeMilliseconds: 1000, target: 2, hit: false, step: 2)),
            .status(.finished(stepsDone: 3)),
        ])
    }

    @Test func activationAtTheLightingInstantIsIgnored() throws {
        var machine = PunchRunMachine()
        let (s, t) = try load([1], [500])
        _ = machine.handle(.start, sequence: s, timeSequence: t, now: 2)
        #expect(machine.sensorActivated(target: 1, at: 2) == [])
        #expect(machine.sensorActivated(target: 1, at: 1.9) == [])
        #expect(machine.isRunning)
    }

    @Test func countdownStopRestartAndErrors() throws {
        var machine = PunchRunMachine()
        #expect(machine.handle(.start, sequence: nil, timeSequence: nil, now: 0) == [.status(.error(.sequencesMissing))])
        let (s, _) = try load([1, 2], [1000, 1000])
        let short = try PunchTimeSequence(milliseconds: [1000])
        #expect(machine.handle(.countdownStart(seconds: 3), sequence: s, timeSequence: short, now: 0) == [.status(.error(.sequencesMissing))])
        let (_, t) = try load([1, 2], [1000, 1000])
        #expect(machine.handle(.countdownStart(seconds: 3), sequence: s, timeSequence: t, now: 0) == [.status(.armed)])
        #expect(machine.advance(to: 2.99) == [])
        #expect(machine.advance(to: 3) == [.status(.running), .ledOn(target: 1)])
        // Start again while lit: the lit LED goes off, the run restarts from step 0.
        #expect(machine.handle(.start, sequence: s, timeSequence: t, now: 3.5)
            == [.ledOff(target: 1), .status(.armed), .status(.running), .ledOn(target: 1)])
        #expect(machine.handle(.stop, sequence: s, timeSequence: t, now: 3.6) == [.ledOff(target: 1), .status(.stopped)])
        #expect(machine.advance(to: 100) == [])
        #expect(machine.handle(.countdownStart(seconds: 0), sequence: s, timeSequence: t, now: 100)
            == [.status(.armed), .status(.running), .ledOn(target: 1)])
    }

    @Test func randomDrivingNeverTrapsAndReportsStepsInOrder() throws {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            var machine = PunchRunMachine(gapSeconds: Double.random(in: 0...0.5, using: &rng))
            let count = Int.random(in: 1...20, using: &rng)
            let (s, t) = try load(
                (0..<count).map { _ in UInt8.random(in: 0...5, using: &rng) },
                (0..<count).map { _ in UInt16.random(in: 1...3000, using: &rng) })
            var now = 0.0
            var steps: [UInt16] = []
            var lit: Set<UInt8> = []
            _ = machine.handle(.start, sequence: s, timeSequence: t, now: now)
            lit.insert(s.targets[0])
            for _ in 0..<200 {
                now += Double.random(in: 0...0.8, using: &rng)
                let out: [Action]
                switch Int.random(in: 0..<10, using: &rng) {
                case 0: out = machine.handle(.stop, sequence: s, timeSequence: t, now: now)
                case 1...5: out = machine.sensorActivated(target: UInt8.random(in: 0...5, using: &rng), at: now - Double.random(in: 0...0.3, using: &rng))
                default: out = machine.advance(to: now)
                }
                for action in out {
                    switch action {
                    case let .ledOn(target): lit.insert(target)
                    case let .ledOff(target): lit.remove(target)
                    case let .response(r): steps.append(r.step ?? 0)
                    case .status: break
                    }
                }
                #expect(lit.count <= 1)
            }
            #expect(steps == Array(steps.sorted()))
            #expect(steps.count <= count)
        }
    }
}
