import BluetideRecording
import BluetideSupport
import Foundation

/// A ride from its start to its end, as one library call: what `bluetide ride` does between
/// opening its devices and closing them, without a terminal, signals or an argument parser.
///
/// ``run(_:commands:stopWhen:report:)`` starts the session, asks the trainer for the ``target``
/// or starts the ``workout``, then reports every sample, notice and answer to a typed command
/// until the first of: ``duration`` passes (on ``clock``), `stopWhen` returns (a Ctrl-C the
/// caller caught, a button), the samples end (a replay played out), or the workout finishes —
/// which ends the ride with a summary of the workout unless ``keepRiding``. A replay that
/// stopped at a damaged line, or played to its end without any device's values, is an error.
///
/// ```swift
/// let run = RideRun(workout: plan, duration: .seconds(3600))
/// let outcome = try await run.run(session) { event in
///     if case let .sample(sample) = event { print(RideView.line(sample)) }
/// }
/// ```
///
/// It installs no signal handler and prints nothing: the caller decides what stops the ride
/// and how events are shown. It does not stop the session either (the caller owns it).
public struct RideRun: Sendable {
    /// The trainer's target from the start (nil: free riding, or the ``workout``'s steps).
    public var target: RideTarget?
    /// A structured workout to ride from the start.
    public var workout: Workout?
    /// Whether the ride goes on after the ``workout`` finishes (until the duration or a stop),
    /// instead of ending there with a summary.
    public var keepRiding: Bool
    /// How long to ride, counted from when the ride runs (after the target was asked); nil:
    /// until a stop, the end of the samples or of the workout.
    public var duration: Duration?
    /// The clock ``duration`` is counted on (a test's manual clock runs it in virtual time).
    public var clock: BluetideClock

    /// A run with these choices (all optional: by default a free ride until it is stopped).
    public init(
        target: RideTarget? = nil, workout: Workout? = nil, keepRiding: Bool = false, duration: Duration? = nil,
        clock: BluetideClock = .continuous
    ) {
        self.target = target
        self.workout = workout
        self.keepRiding = keepRiding
        self.duration = duration
        self.clock = clock
    }

    /// What happens during a run, in the order each kind happens (kinds interleave: notices,
    /// answers and samples come from their own tasks).
    public enum Event: Sendable {
        /// The session started: a live source knows its devices now (a replay learns them as
        /// their first values play). The target is not asked yet.
        case started
        /// The target was asked and the workout started: from here the ride takes commands.
        case riding
        /// A sample of the ride (once a second, ``RideSample/trigger`` `.tick`, and on every
        /// device update).
        case sample(RideSample)
        /// What the session has to say: trainer confirmations and refusals, link changes, the
        /// workout's steps.
        case notice(String)
        /// The answer to a typed command.
        case answer(Answer)
        /// The workout finished and ends the run (not reported with ``keepRiding``). Its
        /// ``WorkoutEnd/sample`` is the tick it finished at, reported here instead of as a
        /// ``sample(_:)``: the run goes no further.
        case workoutFinished(WorkoutEnd)
    }

    /// A typed command's answer: what the session did (`target 220 W`), or why it did not
    /// (an unknown command, a trainer that refused).
    public struct Answer: Sendable, Hashable {
        /// The line as typed.
        public var line: String
        /// The answer in words.
        public var text: String
        /// Whether the command failed (``text`` then says why).
        public var isError: Bool

        /// An answer.
        public init(line: String, text: String, isError: Bool) {
            self.line = line
            self.text = text
            self.isError = isError
        }
    }

    /// The end of the workout that ended the run.
    public struct WorkoutEnd: Sendable {
        /// The workout's name.
        public var name: String
        /// What the workout came to: the samples from its start to its end.
        public var summary: RideSummary
        /// The tick sample the workout finished at.
        public var sample: RideSample
    }

    /// Why a run ended.
    public enum Ending: Sendable, Hashable {
        /// ``RideRun/duration`` passed.
        case duration
        /// `stopWhen` returned, with its reason.
        case stopped(reason: String)
        /// The samples ended (a replay played out, the source stopped).
        case samplesEnded
        /// The ``RideRun/workout`` finished (without ``RideRun/keepRiding``).
        case workoutFinished
    }

    /// How a run ended.
    public struct Outcome: Sendable {
        /// Why it ended.
        public var ending: Ending
        /// The finished workout's summary, when the workout's end ended the run.
        public var workoutSummary: RideSummary?
    }

    /// Rides `session` (started here) until its end (see the type's notes), reporting every
    /// event to `report` and awaiting it (so a slow reporter slows the samples, never drops
    /// them). `commands` are typed lines (``RideControlCommand``: `erg 220`, `grade 3.5`,
    /// `pause`, …), each carried out and answered; blank lines are skipped. `stopWhen`, when
    /// given, ends the run when it returns its reason; it must return when its task is
    /// cancelled. The session is not stopped: the caller stops it (and closes its devices).
    /// - Throws: ``RideRunError``.
    public func run(
        _ session: RideSession, commands: AsyncStream<String>? = nil, stopWhen: (@Sendable () async -> String)? = nil,
        report: @escaping @Sendable (Event) async -> Void
    ) async throws(RideRunError) -> Outcome {
        let samples: AsyncStream<RideSample>
        do { samples = try await session.start() } catch let error as RideError {
            throw .start(error.message)
        } catch {
            throw .start("\(error)")
        }
        await report(.started)
        if target != nil || workout != nil {
            do {
                if let target { try await session.setTarget(target) }
                if let workout { try await session.ride(workout) }
            } catch {
                throw .target("\(error)")
            }
        }
        await report(.riding)
        let notices = Task {
            for await notice in session.notices { await report(.notice(notice)) }
        }
        defer { notices.cancel() }
        let typed = commands.map { lines in
            Task {
                for await line in lines where !line.trimmingCharacters(in: .whitespaces).isEmpty {
                    await report(.answer(await Self.answer(line, on: session)))
                }
            }
        }
        defer { typed?.cancel() }
        let outcome = await race(samples: samples, report: report, stopWhen: stopWhen)
        if let replay = session.source as? any ReplayedRideSource {
            if let failure = replay.failure { throw .replayDamaged(failure) }
            if replay.playedToEnd, await replay.devices.isEmpty { throw .replayWithoutValues }
        }
        return outcome
    }

    /// Carries out the typed `line` on `session`.
    static func answer(_ line: String, on session: RideSession) async -> Answer {
        do {
            let text = try await session.perform(try RideControlCommand.parse(line))
            return Answer(line: line, text: text, isError: false)
        } catch {
            return Answer(line: line, text: "\(error)", isError: true)
        }
    }

    /// Reports the samples until the first end (see the type's notes).
    private func race(
        samples: AsyncStream<RideSample>, report: @escaping @Sendable (Event) async -> Void, stopWhen: (@Sendable () async -> String)?
    ) async -> Outcome {
        let endsWithWorkout = workout.map { keepRiding ? nil : $0.name } ?? nil
        return await Self.race(duration: duration, clock: clock, stopWhen: stopWhen) {
            await Self.pump(samples, endsWithWorkout: endsWithWorkout, report: report)
        }
    }

    /// Runs `pump` until it ends (nil: it was cancelled), `duration` passes on `clock` or
    /// `stopWhen` returns, whichever comes first; the others are cancelled and awaited.
    static func race(
        duration: Duration?, clock: BluetideClock, stopWhen: (@Sendable () async -> String)?,
        pump: @escaping @Sendable () async -> Outcome?
    ) async -> Outcome {
        await withTaskGroup(of: Outcome?.self) { group in
            group.addTask { await pump() }
            if let stopWhen {
                group.addTask {
                    let reason = await stopWhen()
                    return Task.isCancelled ? nil : Outcome(ending: .stopped(reason: reason))
                }
            }
            if let duration {
                group.addTask {
                    do { try await clock.sleep(for: duration) } catch { return nil }
                    return Outcome(ending: .duration)
                }
            }
            var first: Outcome?
            while first == nil, let next = await group.next() { first = next }
            group.cancelAll()
            return first ?? Outcome(ending: .stopped(reason: "cancelled"))
        }
    }

    /// Reports each sample; with `endsWithWorkout` (the workout's name) a finished workout's
    /// tick ends it, with the workout's summary. Nil when cancelled.
    private static func pump(
        _ samples: AsyncStream<RideSample>, endsWithWorkout: String?, report: @Sendable (Event) async -> Void
    ) async -> Outcome? {
        var tally = RideSummary()
        for await sample in samples {
            if sample.workout != nil { tally.add(sample) }
            if let name = endsWithWorkout, sample.trigger == .tick, sample.workout?.isFinished == true {
                await report(.workoutFinished(WorkoutEnd(name: name, summary: tally, sample: sample)))
                return Outcome(ending: .workoutFinished, workoutSummary: tally)
            }
            await report(.sample(sample))
        }
        return Task.isCancelled ? nil : Outcome(ending: .samplesEnded)
    }
}

extension RideRun.Outcome {
    init(ending: RideRun.Ending) { self.init(ending: ending, workoutSummary: nil) }
}

/// Why a ``RideRun`` could not ride, or what went wrong with the replay it rode.
public enum RideRunError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The session did not start (no device found, a replay's file missing or its header bad):
    /// why, in words.
    case start(String)
    /// The trainer did not take the target or the workout (or there is no trainer): why.
    case target(String)
    /// The replay stopped at a damaged line (strict replays stop there).
    case replayDamaged(ValueLogError)
    /// The replay played to its end without any trainer, power, speed/cadence or heart-rate
    /// values.
    case replayWithoutValues

    public var description: String {
        switch self {
        case let .start(message), let .target(message): message
        case let .replayDamaged(failure): "\(failure)"
        case .replayWithoutValues: "no trainer, power, speed/cadence or heart-rate values in it"
        }
    }
}

/// A source that plays a recording, whose end a ``RideRun`` checks.
protocol ReplayedRideSource: RideDataSource {
    /// Why the replay stopped early, when it did.
    var failure: ValueLogError? { get }
    /// Whether it played to its end.
    var playedToEnd: Bool { get }
}

extension RecordedRideSource: ReplayedRideSource {}
