/// What a simulated athlete decided when a target lit up (for logs and tests).
public struct AthleteDecision: Sendable, Equatable {
    /// The target whose LED turned on.
    public var litTarget: Int
    /// What the athlete will do.
    public var response: AthleteResponse
    /// When the LED turned on, nanoseconds on the chip's time source.
    public var litAtNanoseconds: UInt64

    public init(litTarget: Int, response: AthleteResponse, litAtNanoseconds: UInt64) {
        self.litTarget = litTarget
        self.response = response
        self.litAtNanoseconds = litAtNanoseconds
    }
}

/// The environment of a simulated reflex trainer: an athlete who watches the LEDs of a
/// ``SimulatedGPIOChip`` and hits the sensors.
///
/// When a target's LED turns on, the athlete draws a response from ``AthleteModel``: after the
/// reaction time it activates that target's sensor (an active-low sensor is pulled low: a
/// physical falling transition, which the kernel — and the simulated chip — report as a logical
/// rising edge on an active-low request), keeps it active for the hold time, then lets go; or
/// it first hits a wrong target; or it misses. A hit only lands if the LED is still on when the
/// reaction time has passed. Time comes from the injected clock, scaled by `timeScale`
/// (0.01 = a hundred times faster), so tests run on a ``ManualClock`` without real waiting.
public actor SimulatedAthlete<C: Clock> where C.Duration == Duration {
    private let chip: SimulatedGPIOChip
    private let targets: [GPIOTarget]
    private let sensorActiveLow: Bool
    private let clock: C
    private let timeScale: Double
    private var model: AthleteModel
    private var watcher: Task<Void, Never>?
    private var actions: [Int: Task<Void, Never>] = [:]
    private var nextActionID = 0
    private let decisionContinuation: AsyncStream<AthleteDecision>.Continuation

    /// Every decision, as the athlete makes it (single consumer).
    public nonisolated let decisions: AsyncStream<AthleteDecision>

    /// An athlete for `targets` on `chip`. `seed` fixes the sequence of responses.
    public init(
        chip: SimulatedGPIOChip, targets: [GPIOTarget], behaviour: AthleteBehaviour, seed: UInt64,
        sensorActiveLow: Bool = true, clock: C, timeScale: Double = 1
    ) {
        self.chip = chip
        self.targets = targets
        self.sensorActiveLow = sensorActiveLow
        self.clock = clock
        self.timeScale = timeScale
        model = AthleteModel(behaviour: behaviour, targetCount: targets.count, seed: seed)
        (decisions, decisionContinuation) = AsyncStream.makeStream(of: AthleteDecision.self)
    }

    /// An athlete configured from a ``GPIOConfiguration`` (targets, sensor polarity, behaviour, seed).
    public init(chip: SimulatedGPIOChip, configuration: GPIOConfiguration, clock: C, timeScale: Double = 1) {
        self.init(
            chip: chip, targets: configuration.targets, behaviour: configuration.athlete,
            seed: configuration.simulationSeed ?? UInt64.random(in: 0...UInt64.max),
            sensorActiveLow: configuration.sensorActiveLow, clock: clock, timeScale: timeScale)
    }

    /// Starts watching the LEDs. Returns once the athlete is watching (LEDs lit after this are seen).
    public func start() async {
        guard watcher == nil else { return }
        let changes = await chip.outputChanges()
        watcher = Task { [weak self] in
            for await change in changes {
                guard let self else { return }
                await self.outputChanged(change)
            }
        }
    }

    /// Stops watching and abandons any hit in progress (sensors held are let go).
    public func stop() async {
        watcher?.cancel()
        watcher = nil
        for task in actions.values { task.cancel() }
        actions = [:]
        for target in targets { try? await chip.drive(target.sensorLine, level: nil) }
        decisionContinuation.finish()
    }

    /// Returns when every hit in progress has finished (on a ``ManualClock``, advance it past
    /// the pending deadlines first, or this waits for ever).
    public func waitUntilIdle() async {
        while let task = actions.values.first {
            await task.value
            actions = actions.filter { !$0.value.isCancelled && $0.value != task }
        }
    }

    private func outputChanged(_ change: SimulatedOutputChange) {
        guard change.value, let target = targets.first(where: { $0.ledLine == change.offset }) else { return }
        let response = model.respond(toLit: target.index)
        decisionContinuation.yield(AthleteDecision(litTarget: target.index, response: response, litAtNanoseconds: change.timestampNanoseconds))
        let hold = model.behaviour.holdMilliseconds
        let plan: [(target: Int, delay: Double)]
        switch response {
        case .miss: return
        case let .hit(hit, after): plan = [(hit, after)]
        case let .wrongTarget(wrong, after, correction): plan = [(wrong, after), (target.index, correction)]
        }
        let id = nextActionID
        nextActionID += 1
        actions[id] = Task { [chip, clock, targets, sensorActiveLow, timeScale] in
            let led = target.ledLine
            for (index, step) in plan.enumerated() {
                do {
                    try await clock.sleep(for: scaled(step.delay, timeScale))
                } catch { return }
                guard await chip.outputValue(of: led) == true else { break }
                let sensor = targets[step.target].sensorLine
                try? await chip.drive(sensor, level: !sensorActiveLow)
                // Let go after the hold time; the next step (a correction) is timed from here.
                let lastStep = index == plan.count - 1
                let holdDone = Task {
                    try? await clock.sleep(for: scaled(hold, timeScale))
                    try? await chip.drive(sensor, level: nil)
                }
                if lastStep { await holdDone.value }
            }
            self.finished(id)
        }
    }

    private func finished(_ id: Int) {
        actions[id] = nil
    }
}

/// Milliseconds × scale as a Duration.
private func scaled(_ milliseconds: Double, _ scale: Double) -> Duration {
    let ms = max(0, milliseconds * scale)
    return .nanoseconds(Int64(min(ms * 1_000_000, Double(Int64.max / 2))))
}
