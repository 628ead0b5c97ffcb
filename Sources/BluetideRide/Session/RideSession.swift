import BluetideBase
import BluetideProfiles

/// A ride: the data source's devices merged into one stream of ``RideSample``s (once a second
/// and on every update), the trainer's target (ERG, grade, resistance, or a workout's steps)
/// kept, and every reading recorded when asked.
///
/// ```swift
/// let source = LiveRideSource(central: bluetooth.central, requests: [.init(.trainer), .init(.heartRate)])
/// let session = RideSession(source: source)
/// for await sample in try await session.start() { print(sample.powerWatts ?? "–") }
/// ```
///
/// One owner of the ride's state (this actor); the merging itself is ``RideMerger`` (no I/O).
public actor RideSession {
    /// How the ride runs.
    public struct Configuration: Sendable {
        /// How values are merged (wheel circumference, freshness).
        public var merger: RideMerger.Configuration
        /// The rider's FTP, W, for workouts in fractions of FTP.
        public var ftpWatts: Double
        /// A value log to write every reading to, when set.
        public var recordPath: String?

        /// A configuration.
        public init(merger: RideMerger.Configuration = .init(), ftpWatts: Double = 200, recordPath: String? = nil) {
            self.merger = merger
            self.ftpWatts = ftpWatts
            self.recordPath = recordPath
        }
    }

    /// Where the values come from.
    public nonisolated let source: any RideDataSource
    /// The configuration.
    public nonisolated let configuration: Configuration
    /// What the ride has to say besides samples (trainer confirmations and refusals, link
    /// changes, the workout's steps), in words.
    public nonisolated let notices: AsyncStream<String>
    private let noticeContinuation: AsyncStream<String>.Continuation
    private var merger: RideMerger
    private var recorder: RideRecorder?
    private var target: RideTarget?
    /// The target before the last change, and the ride time of that change (the time its write
    /// is recorded at). A sample stamped before the change (a tick delivered late on a busy
    /// machine) carries the target in force at its own time, as a replay of the log gives it.
    private var targetBefore: RideTarget?
    private var targetSince = -Double.infinity
    private var workout: Workout?
    private var workoutStart: Double?
    private var lastWorkoutWatts: Int?
    private var lastStep: Int?
    /// The workout the ride was given (``ride(_:)``), which `workout` starts again.
    private var plannedWorkout: Workout?
    /// Ride time the ride was paused at, while paused.
    private var pausedAt: Double?
    /// The target before the pause, asked again when the ride goes on.
    private var pausedTarget: RideTarget?
    /// The current lap: its number and what it came to so far.
    private var lapNumber = 1
    private var lapSummary = RideSummary()
    private var now = 0.0
    private var runner: Task<Void, Never>?
    private var statusWatcher: Task<Void, Never>?
    private var controlTask: Task<Void, Never>?
    /// The last sample made.
    public private(set) var latest: RideSample?

    /// A session over `source`.
    public init(source: any RideDataSource, configuration: Configuration = Configuration()) {
        self.source = source
        self.configuration = configuration
        merger = RideMerger(configuration: configuration.merger)
        (notices, noticeContinuation) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingNewest(256))
    }

    /// Starts the source (and the recording) and returns the samples; they end when the source
    /// does or after ``stop()``.
    public func start() async throws -> AsyncStream<RideSample> {
        if let path = configuration.recordPath { recorder = try RideRecorder(path: path) }
        let events = try await source.start()
        trainerDevice = await source.trainer?.device
        if let trainer = await source.trainer {
            let notices = noticeContinuation
            statusWatcher = Task {
                for await update in trainer.statusUpdates { notices.yield("\(trainer.device.label): \(update.text)") }
            }
        }
        let (stream, continuation) = AsyncStream<RideSample>.makeStream(bufferingPolicy: .bufferingNewest(1024))
        runner = Task {
            for await event in events {
                if let sample = self.receive(event) { continuation.yield(sample) }
            }
            self.finishRecording()
            continuation.finish()
        }
        continuation.onTermination = { [weak self] _ in Task { await self?.stop() } }
        return stream
    }

    /// The trainer's control, when the source has a live trainer.
    public var trainer: (any TrainerControl)? { get async { await source.trainer } }
    /// The live trainer, known once the session started (for recording a workout's targets).
    private var trainerDevice: RideDevice?
    /// The trainer's target now (nil: free riding, or no trainer).
    public var currentTarget: RideTarget? { target }

    /// Asks the trainer for `target` (ERG watts, a grade or a resistance), ending any workout.
    /// Throws ``RideError`` without a trainer, ``TrainerControlError`` when it refuses.
    public func setTarget(_ target: RideTarget) async throws {
        let trainer = try await requireTrainer()
        workout = nil
        workoutStart = nil
        pausedAt = nil
        try await trainer.apply(target)
        change(target: target, at: now)
        await record(target, trainer: trainer)
    }

    /// Records the target asked of `trainer` in the value log (when recording), so an export
    /// and a replay of the ride show it.
    private func record(_ target: RideTarget?, trainer: any TrainerControl, parameters: SimulationParameters? = nil) async {
        guard recorder != nil else { return }
        var range: SupportedResistanceLevelRange?
        if case .resistance = target { range = await (trainer as? FTMSTrainerControl)?.supportedResistanceRange }
        recordTarget(target, trainer: trainer.device, parameters: parameters, resistanceRange: range)
    }

    private func recordTarget(
        _ target: RideTarget?, trainer: RideDevice, parameters: SimulationParameters? = nil,
        resistanceRange: SupportedResistanceLevelRange? = nil
    ) {
        do {
            try recorder?.recordTarget(target, trainer: trainer, time: now, parameters: parameters, resistanceRange: resistanceRange)
        } catch {
            noticeContinuation.yield("recording stopped: \(error)")
            recorder = nil
        }
    }

    private func requireTrainer() async throws -> any TrainerControl {
        guard let trainer = await source.trainer else { throw RideError("no controllable trainer in this ride (replays and sensors have none)") }
        return trainer
    }

    /// Asks the trainer for full simulation parameters (grade, wind, Crr, Cw), ending any
    /// workout; the sample's target shows the grade. Throws like ``setTarget(_:)``.
    public func setSimulation(_ parameters: SimulationParameters) async throws {
        let trainer = try await requireTrainer()
        workout = nil
        workoutStart = nil
        pausedAt = nil
        try await trainer.setSimulation(parameters)
        change(target: .grade(percent: parameters.gradePercent), at: now)
        await record(target, trainer: trainer, parameters: parameters)
    }

    /// Lets the trainer go back to free riding (FTMS Reset; FE-C: a flat road), ending any
    /// workout and target. Throws like ``setTarget(_:)``.
    public func resetTrainer() async throws {
        let trainer = try await requireTrainer()
        workout = nil
        workoutStart = nil
        pausedAt = nil
        try await trainer.reset()
        change(target: nil, at: now)
        await record(nil, trainer: trainer)
    }

    /// Carries out a command typed during the ride (``RideControlCommand``): a new target or free
    /// riding (either ends a running workout), or help. Returns what happened in words, e.g.
    /// `target 220 W`; throws like ``setTarget(_:)``.
    public func perform(_ command: RideControlCommand) async throws -> String {
        switch command {
        case .help:
            return RideControlCommand.usage
        case let .target(target):
            let endsWorkout = workout != nil
            try await setTarget(target)
            return "target \(target)" + (endsWorkout ? " (workout ended)" : "")
        case .free:
            let endsWorkout = workout != nil
            try await resetTrainer()
            return "free riding" + (endsWorkout ? " (workout ended)" : "")
        case .pause:
            return try await pause()
        case .resume:
            return try await resume()
        case .lap:
            return markLap()
        case .startWorkout:
            guard let plannedWorkout else { throw RideError("no workout in this ride: start it with --workout FILE") }
            try await ride(plannedWorkout)
            return "workout \(plannedWorkout.name) started"
        }
    }

    /// Whether the ride is paused (``pause()``).
    public var isPaused: Bool { pausedAt != nil }

    /// Pauses the ride: the trainer rides free (FTMS Reset; FE-C a flat road) and a workout's
    /// clock stops until ``resume()``. Returns `paused`; throws without a trainer, when already
    /// paused, or when the trainer refuses.
    public func pause() async throws -> String {
        let trainer = try await requireTrainer()
        guard pausedAt == nil else { throw RideError("already paused; `start` goes on") }
        pausedAt = now
        pausedTarget = target
        try await trainer.reset()
        change(target: nil, at: now)
        await record(nil, trainer: trainer)
        return "paused"
    }

    /// Goes on after ``pause()``: a workout from where it stopped (its step's target again),
    /// else the target the ride had. Throws when not paused or when the trainer refuses.
    public func resume() async throws -> String {
        let trainer = try await requireTrainer()
        guard let pausedAt else { throw RideError("not paused; `pause` first") }
        self.pausedAt = nil
        if workout != nil, let start = workoutStart {
            workoutStart = start + (now - pausedAt)
            lastWorkoutWatts = nil
            stepWorkout(at: now)
            return "riding on (workout)"
        }
        if let again = pausedTarget {
            try await trainer.apply(again)
            change(target: again, at: now)
            await record(again, trainer: trainer)
            return "riding on (target \(again))"
        }
        return "riding on"
    }

    /// Ends the current lap: `lap 2: 5:00, 3.10 km, 201 W average, …` (its summary), and starts
    /// the next one now.
    public func markLap() -> String {
        let text = "lap \(lapNumber): \(lapSummary.text)"
        lapNumber += 1
        lapSummary = RideSummary()
        return text
    }

    /// Rides `workout` from now: its target power is sent at each step and, on ramps, each time it
    /// changes by a watt or more (checked on every tick).
    public func ride(_ workout: Workout) async throws {
        _ = try await requireTrainer()
        self.workout = workout
        plannedWorkout = workout
        pausedAt = nil
        workoutStart = now
        lastWorkoutWatts = nil
        lastStep = nil
        stepWorkout(at: now)
    }

    private func receive(_ event: RideEvent) -> RideSample? {
        switch event {
        case let .reading(reading):
            now = max(now, reading.time)
            do { try recorder?.record(reading) } catch {
                noticeContinuation.yield("recording stopped: \(error)")
                recorder = nil
            }
        case let .link(device, connected, time):
            now = max(now, time)
            noticeContinuation.yield(connected ? "\(device.label) is back" : "\(device.label) dropped out; reconnecting…")
        case let .tick(time):
            now = max(now, time)
            recorder?.flush()
            stepWorkout(at: time)
        case let .target(recorded, time):
            // A recording's target (a replay has no trainer of its own to ask).
            now = max(now, time)
            change(target: recorded, at: time)
        }
        guard var sample = merger.receive(event) else { return nil }
        sample.target = sample.time < targetSince ? targetBefore : target
        // A paused workout stays where the pause found it.
        if let workout, let workoutStart { sample.workout = workout.position(at: (pausedAt ?? sample.time) - workoutStart) }
        lapSummary.add(sample)
        latest = sample
        return sample
    }

    /// Sends the workout's target for `time` when it changed.
    private func change(target new: RideTarget?, at time: Double) {
        targetBefore = target
        target = new
        targetSince = time
    }

    private func stepWorkout(at time: Double) {
        guard let workout, let workoutStart, pausedAt == nil else { return }
        let elapsed = time - workoutStart
        let position = workout.position(at: elapsed)
        if position.stepIndex != lastStep || position.isFinished != (lastStep == -1) {
            if position.isFinished {
                if lastStep != -1 { noticeContinuation.yield("workout \(workout.name) finished") }
                lastStep = -1
            } else {
                let step = workout.steps[position.stepIndex]
                noticeContinuation.yield(
                    "step \(position.stepIndex + 1)/\(position.stepCount): \(step.kind), \(RideFormat.clock(step.durationSeconds))")
                lastStep = position.stepIndex
            }
        }
        guard let watts = workout.targetWatts(at: elapsed, ftp: configuration.ftpWatts), watts != lastWorkoutWatts else { return }
        lastWorkoutWatts = watts
        change(target: .power(watts: watts), at: now)
        let source = source, notices = noticeContinuation
        if recorder != nil, let trainer = trainerDevice { recordTarget(target, trainer: trainer) }
        let previous = controlTask
        controlTask = Task {
            await previous?.value
            guard let trainer = await source.trainer else { return }
            do { try await trainer.setTargetPower(watts: watts) } catch { notices.yield("\(error)") }
        }
    }

    private func finishRecording() {
        do { try recorder?.close() } catch { noticeContinuation.yield("recording: \(error)") }
        recorder = nil
    }

    /// Stops the source and the recording. Idempotent.
    public func stop() async {
        runner?.cancel()
        statusWatcher?.cancel()
        controlTask?.cancel()
        await source.stop()
        finishRecording()
        noticeContinuation.finish()
    }
}
