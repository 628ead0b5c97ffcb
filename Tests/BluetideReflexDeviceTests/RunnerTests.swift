import BluetideGPIO
import BluetideProfiles
@testable import BluetideReflexDevice
import Testing
import BluetideTestSupport
import BluetideSupport

/// The sequence runner against the simulated chip directly, on a manual clock: the test plays
/// the athlete by driving sensor lines (active-low: pulling low is a logical rising edge).
@Suite struct SequenceRunnerTests {
    let clock = ManualClock()
    let configuration = GPIOConfiguration.reflexDefault

    /// A chip stamped by the manual clock, all twelve lines requested, and a runner on them.
    func makeRunner(gap: Double = 200) async throws -> (SimulatedGPIOChip, SequenceRunner<ManualClock>, ActionReader) {
        let chip = SimulatedGPIOChip(clock: clock)
        let lines = try await chip.request(configuration.lineRequest(consumer: "test"))
        let runner = SequenceRunner(
            lines: lines, targets: configuration.targets, clock: clock, origin: clock.now, gapMilliseconds: gap)
        await runner.start()
        return (chip, runner, ActionReader(runner.actions))
    }

    func sensor(_ target: Int) -> UInt32 { configuration.targets[target].sensorLine }
    func led(_ target: Int) -> UInt32 { configuration.targets[target].ledLine }

    func program(_ targets: [UInt8], _ ms: [UInt16]) throws -> (PunchSequence, PunchTimeSequence) {
        (try PunchSequence(targets: targets), try PunchTimeSequence(milliseconds: ms))
    }

    @Test func hitReportsReactionFromTheLEDOnInstantAndFinishes() async throws {
        let (chip, runner, reader) = try await makeRunner()
        let (sequence, times) = try program([3], [1000])
        clock.advance(by: .seconds(5))  // the run starts later than the runner's zero
        await runner.handle(.start, sequence: sequence, timeSequence: times)
        #expect(try await reader.next(3) == [.status(.armed), .status(.running), .ledOn(target: 3)])
        #expect(await chip.outputValue(of: led(3)) == true)
        clock.advance(by: .milliseconds(412))
        try await chip.drive(sensor(3), level: false)
        let out = try await reader.next(3)
        let expected = PunchResponse(reactionTimeMilliseconds: 412, target: 3, hit: true, step: 0)
        #expect(out == [.ledOff(target: 3), .response(expected), .status(.finished(stepsDone: 1))])
        #expect(expected.bytes == [0x9C, 0x01, 0x00, 0x00, 0x03, 0x01, 0x00, 0x00])
        #expect(await chip.outputValue(of: led(3)) == false)
        #expect(await runner.isRunning == false)
        await runner.shutdown()
    }

    @Test func missTimesOutWithTheStepsWholeTime() async throws {
        let (chip, runner, reader) = try await makeRunner(gap: 0)
        let (sequence, times) = try program([1, 1, 0], [1000, 1000, 1500])
        await runner.handle(.start, sequence: sequence, timeSequence: times)
        _ = try await reader.next(3)
        // Steps 0 and 1: hits; step 2: nothing until the time is up.
        for _ in 0..<2 {
            clock.advance(by: .milliseconds(300))
            try await chip.drive(sensor(1), level: false)
            _ = try await reader.next(2)  // LED off, response
            try await chip.drive(sensor(1), level: nil)
            _ = try await reader.next(1)  // next LED on (no gap)
        }
        #expect(await chip.outputValue(of: led(0)) == true)
        clock.advance(by: .milliseconds(1500))
        let out = try await reader.next(3)
        guard case let .response(missed) = out[1] else { Issue.record("expected a response, got \(out)"); return }
        #expect(missed.bytes == [0xDC, 0x05, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00])  // reflex-trainer.md's example
        #expect(out[0] == .ledOff(target: 0) && out[2] == .status(.finished(stepsDone: 3)))
        #expect(await chip.outputValue(of: led(0)) == false)
        await runner.shutdown()
    }

    @Test func wrongTargetFirstSetsTheFlag() async throws {
        let (chip, runner, reader) = try await makeRunner()
        let (sequence, times) = try program([2], [2000])
        await runner.handle(.start, sequence: sequence, timeSequence: times)
        _ = try await reader.next(3)
        clock.advance(by: .milliseconds(100))
        try await chip.drive(sensor(4), level: false)  // wrong target
        clock.advance(by: .milliseconds(200))
        try await chip.drive(sensor(2), level: false)
        let out = try await reader.next(3)
        #expect(out[1] == .response(PunchResponse(reactionTimeMilliseconds: 300, target: 2, hit: true, wrongTargetFirst: true, step: 0)))
        await runner.shutdown()
    }

    @Test func sensorReleasesAndEarlyActivationsAreIgnored() async throws {
        let (chip, runner, reader) = try await makeRunner()
        // Held before the LED lights: no new rising edge counts for the step.
        try await chip.drive(sensor(5), level: false)
        let (sequence, times) = try program([5], [800])
        await runner.handle(.start, sequence: sequence, timeSequence: times)
        _ = try await reader.next(3)
        try await chip.drive(sensor(5), level: nil)  // falling edge: ignored
        clock.advance(by: .milliseconds(800))
        let out = try await reader.next(3)
        #expect(out[1] == .response(PunchResponse(reactionTimeMilliseconds: 800, target: 5, hit: false, step: 0)))
        await runner.shutdown()
    }

    @Test func gapBetweenStepsKeepsEveryLEDOff() async throws {
        let (chip, runner, reader) = try await makeRunner(gap: 250)
        let (sequence, times) = try program([0, 4], [1000, 1000])
        await runner.handle(.start, sequence: sequence, timeSequence: times)
        _ = try await reader.next(3)
        clock.advance(by: .milliseconds(200))
        try await chip.drive(sensor(0), level: false)
        _ = try await reader.next(2)
        for target in configuration.targets { #expect(await chip.outputValue(of: target.ledLine) == false) }
        clock.advance(by: .milliseconds(250))
        #expect(try await reader.next(1) == [.ledOn(target: 4)])
        #expect(await chip.outputValue(of: led(4)) == true)
        await runner.shutdown()
        #expect(await chip.outputValue(of: led(4)) == false)
    }

    @Test func stopMidRunTurnsTheLEDOffAndNotifiesStopped() async throws {
        let (chip, runner, reader) = try await makeRunner()
        let (sequence, times) = try program([0, 1], [5000, 5000])
        await runner.handle(.start, sequence: sequence, timeSequence: times)
        _ = try await reader.next(3)
        await runner.handle(.stop, sequence: sequence, timeSequence: times)
        #expect(try await reader.next(2) == [.ledOff(target: 0), .status(.stopped)])
        for target in configuration.targets { #expect(await chip.outputValue(of: target.ledLine) == false) }
        // Time passing after a stop changes nothing.
        clock.advance(by: .seconds(20))
        #expect(await runner.isRunning == false)
        await runner.shutdown()
        #expect(try await reader.rest() == [])
    }

    @Test func countdownStartArmsThenRunsAfterTheSeconds() async throws {
        let (_, runner, reader) = try await makeRunner()
        let (sequence, times) = try program([1], [1000])
        await runner.handle(.countdownStart(seconds: 3), sequence: sequence, timeSequence: times)
        #expect(try await reader.next(1) == [.status(.armed)])
        clock.advance(by: .milliseconds(2999))
        #expect(await runner.isRunning)
        clock.advance(by: .milliseconds(1))
        #expect(try await reader.next(2) == [.status(.running), .ledOn(target: 1)])
        await runner.shutdown()
    }

    @Test func startRefusedWhenSequencesAreMissingOrDiffer() async throws {
        let (_, runner, reader) = try await makeRunner()
        await runner.handle(.start, sequence: nil, timeSequence: nil)
        await runner.handle(.start, sequence: try PunchSequence(targets: [1, 2]), timeSequence: try PunchTimeSequence(milliseconds: [1000]))
        #expect(try await reader.next(2) == [.status(.error(.sequencesMissing)), .status(.error(.sequencesMissing))])
        #expect(PunchControlStatus.error(.sequencesMissing).bytes == [0xE0, 0x01])
        await runner.shutdown()
    }
}

/// Reads a runner's actions with a time limit, so a missing action fails instead of hanging.
final class ActionReader: Sendable {
    private let box: Mailbox<PunchRunMachine.Action>

    init(_ stream: AsyncStream<PunchRunMachine.Action>) { box = Mailbox(stream) }

    /// The next `count` actions (at most 5 s of real time).
    func next(_ count: Int) async throws -> [PunchRunMachine.Action] {
        try await TestTime.within(20, "\(count) runner actions") { [box] in await box.take(count) }
    }

    /// Everything until the stream ends.
    func rest() async throws -> [PunchRunMachine.Action] {
        try await TestTime.within(20, "end of runner actions") { [box] in await box.take(Int.max) }
    }
}

/// Collects a stream's elements; ``take(_:)`` waits (cancellably) until enough arrived, woken
/// by each arrival (no polling).
final class Mailbox<Element: Sendable>: Sendable {
    private struct Box: Sendable {
        var items: [Element] = []
        var ended = false
    }

    private let box = Observed(Box())

    init<S: AsyncSequence & Sendable>(_ stream: S) where S.Element == Element {
        Task { [box] in
            do { for try await item in stream { box.update { $0.items.append(item) } } } catch {}
            box.update { $0.ended = true }
        }
    }

    /// The next `count` elements (fewer when the stream ended or the task was cancelled).
    func take(_ count: Int) async -> [Element] {
        _ = try? await box.wait { $0.items.count >= count || $0.ended }
        return box.update { box in
            let n = min(count, box.items.count)
            defer { box.items.removeFirst(n) }
            return Array(box.items.prefix(n))
        }
    }
}

enum TestTime {
    struct TimedOut: Error, CustomStringConvertible {
        let what: String
        var description: String { "timed out waiting for \(what)" }
    }

    /// Runs `body`, failing when it takes longer than `seconds` of run time (see `withRunTimeLimit`).
    static func within<T: Sendable>(_ seconds: Double, _ what: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withRunTimeLimit(seconds, onTimeout: { TimedOut(what: what) }, body)
    }
}
