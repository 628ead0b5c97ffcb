import Bluetide
import BluetideRecording
import BluetideSupport
import Synchronization
import Testing
@testable import BluetideRide

/// What a ``RideRun`` reported, kept for the checks.
final class RideRunLog: Sendable {
    private let events = Mutex<[RideRun.Event]>([])

    func add(_ event: RideRun.Event) { events.withLock { $0.append(event) } }

    var ticks: [RideSample] {
        events.withLock { $0 }.compactMap { if case let .sample(sample) = $0, sample.trigger == .tick { sample } else { nil } }
    }
    var answers: [RideRun.Answer] { events.withLock { $0 }.compactMap { if case let .answer(answer) = $0 { answer } else { nil } } }
    var workoutEnds: [RideRun.WorkoutEnd] {
        events.withLock { $0 }.compactMap { if case let .workoutFinished(end) = $0 { end } else { nil } }
    }
    /// The kinds in order: `started`, `riding`, `sample`, `notice`, `answer`, `workoutFinished`.
    var kinds: [String] {
        events.withLock { $0 }.map {
            switch $0 {
            case .started: "started"
            case .riding: "riding"
            case .sample: "sample"
            case .notice: "notice"
            case .answer: "answer"
            case .workoutFinished: "workoutFinished"
            }
        }
    }
}

/// A stop the test gives a run: ``stop(_:)`` ends it with a reason.
final class TestStop: Sendable {
    private let reasons: AsyncStream<String>
    private let sink: AsyncStream<String>.Continuation

    init() { (reasons, sink) = AsyncStream<String>.makeStream() }

    func stop(_ reason: String) { sink.yield(reason) }

    /// Waits for ``stop(_:)`` (returns at once when cancelled).
    @Sendable func wait() async -> String {
        for await reason in reasons { return reason }
        return "cancelled"
    }
}

/// ``RideRun`` without the argument parser: a ride over an emulated FTMS bike on a manual clock,
/// its end (duration, stop, a workout's end), its typed commands and its replay checks, all in
/// virtual time.
@Suite(.serialized) struct RideRunTests {
    /// A session over the rig's FTMS bike (model 0) with an FTP of 200 W.
    static func session(_ rig: EmulatedRig) -> RideSession {
        let source = LiveRideSource(
            central: rig.bluetooth.central, requests: [.init(.trainer, device: EmulatedRig.address(0).description)], configuration: .onRig())
        return RideSession(source: source, configuration: .init(ftpWatts: 200))
    }

    /// Runs `run` on a fresh session over the rig, stopping the session afterwards.
    static func ride(
        _ run: RideRun, on rig: EmulatedRig, commands: AsyncStream<String>? = nil, stopWhen: (@Sendable () async -> String)? = nil,
        log: RideRunLog, react: @escaping @Sendable (RideRun.Event) -> Void = { _ in }
    ) async throws -> RideRun.Outcome {
        let session = session(rig)
        do {
            let outcome = try await run.run(session, commands: commands, stopWhen: stopWhen) { event in
                log.add(event)
                react(event)
            }
            await session.stop()
            return outcome
        } catch {
            await session.stop()
            throw error
        }
    }

    @Test func endsAtTheDuration() async throws {
        try await EmulatedRig.with(["ftms-bike"], "a run to its duration") { rig in
            let log = RideRunLog()
            let run = RideRun(target: .power(watts: 150), duration: .seconds(5), clock: BluetideClock(rig.manual))
            let before = rig.manual.now
            let outcome = try await Self.ride(run, on: rig, log: log)
            let virtual = before.duration(to: rig.manual.now)
            #expect(outcome.ending == .duration)
            #expect(outcome.workoutSummary == nil)
            #expect(virtual >= .seconds(5), "\(virtual)")
            #expect(log.ticks.count >= 3, "\(log.ticks.map(\.time))")
            #expect(log.ticks.last?.target == .power(watts: 150))
            #expect(Array(log.kinds.prefix(2)) == ["started", "riding"], "\(log.kinds)")
        }
    }

    @Test func endsOnStop() async throws {
        try await EmulatedRig.with(["ftms-bike"], "a run stopped") { rig in
            let log = RideRunLog()
            let stop = TestStop()
            // No duration: only the stop (after the third tick) ends it.
            let run = RideRun(clock: BluetideClock(rig.manual))
            let outcome = try await Self.ride(run, on: rig, stopWhen: stop.wait, log: log) { event in
                if case let .sample(sample) = event, sample.trigger == .tick, sample.time >= 3 { stop.stop("the test's button") }
            }
            #expect(outcome.ending == .stopped(reason: "the test's button"))
            #expect(log.ticks.contains { $0.time >= 3 })
        }
    }

    static let twoSteps = Workout(name: "two steps", steps: [
        WorkoutStep(kind: "steady", durationSeconds: 3, startPower: .ftpFraction(0.6)),
        WorkoutStep(kind: "steady", durationSeconds: 2, startPower: .watts(140)),
    ])

    @Test func aWorkoutsEndEndsTheRunWithItsSummary() async throws {
        try await EmulatedRig.with(["ftms-bike"], "a run ended by its workout") { rig in
            let log = RideRunLog()
            // The duration is a backstop far past the workout's 5 s.
            let run = RideRun(workout: Self.twoSteps, duration: .seconds(120), clock: BluetideClock(rig.manual))
            let outcome = try await Self.ride(run, on: rig, log: log)
            #expect(outcome.ending == .workoutFinished)
            let summary = try #require(outcome.workoutSummary)
            #expect(summary.durationSeconds >= 4 && summary.durationSeconds <= 6, "\(summary.text)")
            #expect(summary.averagePowerWatts != nil, "\(summary.text)")
            let end = try #require(log.workoutEnds.first)
            #expect(log.workoutEnds.count == 1)
            #expect(end.name == "two steps")
            #expect(end.summary == summary)
            #expect(end.sample.workout?.isFinished == true)
            // The workout's end is the run's last sample: none is reported after it.
            #expect(log.kinds.filter { $0 == "sample" || $0 == "workoutFinished" }.last == "workoutFinished", "\(log.kinds)")
            #expect(log.ticks.contains { $0.target == .power(watts: 120) })
            #expect(log.ticks.allSatisfy { $0.workout?.isFinished != true })
        }
    }

    @Test func keepRidingRidesOnPastTheWorkout() async throws {
        try await EmulatedRig.with(["ftms-bike"], "a run riding on past its workout") { rig in
            let log = RideRunLog()
            let run = RideRun(workout: Self.twoSteps, keepRiding: true, duration: .seconds(9), clock: BluetideClock(rig.manual))
            let outcome = try await Self.ride(run, on: rig, log: log)
            #expect(outcome.ending == .duration)
            #expect(outcome.workoutSummary == nil)
            #expect(log.workoutEnds.isEmpty)
            #expect(log.ticks.contains { $0.workout?.isFinished == true }, "\(log.ticks.map(\.time))")
        }
    }

    /// `erg 220` typed mid-ride is answered and the trainer holds 220 W; an unknown command is
    /// answered with an error text and changes nothing.
    @Test func typedCommandsAreAnsweredAndReachTheTrainer() async throws {
        try await EmulatedRig.with(["ftms-bike"], "typed commands") { rig in
            let log = RideRunLog()
            let stop = TestStop()
            let (commands, typed) = AsyncStream<String>.makeStream()
            let typing = Mutex(0)
            let run = RideRun(target: .power(watts: 150), duration: .seconds(120), clock: BluetideClock(rig.manual))
            // The typing reacts to the run's own samples (the manual clock's driver sees it).
            let outcome = try await Self.ride(run, on: rig, commands: commands, stopWhen: stop.wait, log: log) { event in
                guard case let .sample(sample) = event, sample.trigger == .tick else { return }
                if sample.target == .power(watts: 150), typing.withLock({ step in defer { step = max(step, 1) }; return step == 0 }) {
                    typed.yield("warp 9")
                    typed.yield("  ")
                    typed.yield("erg 220")
                } else if sample.target == .power(watts: 220), log.answers.count == 2, settled(log.ticks, at: 220),
                    typing.withLock({ step in defer { step = 2 }; return step == 1 }) {
                    stop.stop("settled at 220 W")
                }
            }
            typed.finish()
            #expect(outcome.ending == .stopped(reason: "settled at 220 W"), "\(log.ticks.map { ($0.time, $0.powerWatts ?? -1) })")
            let answers = log.answers
            #expect(answers.count == 2, "\(answers)")
            let unknown = try #require(answers.first)
            #expect(unknown.line == "warp 9")
            #expect(unknown.isError)
            #expect(unknown.text.hasPrefix("unknown command \"warp\""), "\(unknown.text)")
            #expect(answers.last == RideRun.Answer(line: "erg 220", text: "target 220 W", isError: false))
            #expect(log.ticks.last?.target == .power(watts: 220))
        }
    }

    /// A replay that played out without any device's values is an error once it ended.
    @Test func aReplayWithoutValuesIsAnError() async throws {
        let source = RecordedRideSource(records: [], pace: .asFastAsPossible)
        let session = RideSession(source: source)
        let log = RideRunLog()
        await #expect(throws: RideRunError.replayWithoutValues) {
            _ = try await guarded("an empty replay") { try await RideRun().run(session) { log.add($0) } }
        }
        await session.stop()
        #expect(log.kinds.first == "started")
    }

    /// A trainer target without a trainer (a replay has none) fails with the session's reason.
    @Test func aTargetWithoutATrainerIsAnError() async throws {
        let session = RideSession(source: RecordedRideSource(records: [], pace: .asFastAsPossible))
        await #expect(throws: RideRunError.target("no controllable trainer in this ride (replays and sensors have none)")) {
            _ = try await guarded("a target on a replay") { try await RideRun(target: .power(watts: 200)).run(session) { _ in } }
        }
        await session.stop()
    }
}
