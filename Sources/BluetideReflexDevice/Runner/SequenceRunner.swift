import BluetideGPIO
import BluetideProfiles
import BluetideSupport

/// Runs Punch sequences on GPIO: the I/O around ``PunchRunMachine``.
///
/// It feeds the machine control commands, the sensors' activations (logical rising edges, with
/// the edge's own timestamp) and timer expiries read from `clock`, and carries out the machine's
/// actions: LEDs are set on the GPIO request, responses and statuses come out of ``actions``.
/// All decisions are the machine's; this actor only translates time and lines.
///
/// Time: the runner's zero is `origin` on `clock`; an edge stamped `t` ns happened at
/// `(t − edgeNanosecondsAtOrigin) / 1e9` seconds. With the simulated chip stamped from the same
/// clock that offset is 0; with the Linux chip (CLOCK_MONOTONIC stamps) it is the monotonic
/// time read at `origin`.
public actor SequenceRunner<C: Clock> where C.Duration == Duration {
    /// One output of the runner.
    public typealias Action = PunchRunMachine.Action

    private var machine: PunchRunMachine
    private let lines: any GPIOLineRequest
    private let ledLines: [UInt8: UInt32]
    private let targetBySensor: [UInt32: UInt8]
    private let clock: C
    private let origin: C.Instant
    private let edgeNanosecondsAtOrigin: UInt64
    private var timer: Task<Void, Never>?
    private var timerGeneration = 0
    private var edgeTask: Task<Void, Never>?
    private var closed = false
    private let continuation: AsyncStream<Action>.Continuation

    /// Responses, statuses and LED switches, in the order the machine produced them (one
    /// consumer). Ends at ``shutdown()``.
    public nonisolated let actions: AsyncStream<Action>

    /// A runner on `lines` (which must hold every target's LED as an output and sensor as an
    /// edge-detecting input), pausing `gapMilliseconds` between steps.
    public init(
        lines: any GPIOLineRequest, targets: [GPIOTarget], clock: C, origin: C.Instant,
        edgeNanosecondsAtOrigin: UInt64 = 0, gapMilliseconds: Double = 200
    ) {
        self.lines = lines
        var leds: [UInt8: UInt32] = [:]
        var sensors: [UInt32: UInt8] = [:]
        for target in targets {
            guard let index = UInt8(exactly: target.index) else { continue }
            leds[index] = target.ledLine
            sensors[target.sensorLine] = index
        }
        ledLines = leds
        targetBySensor = sensors
        self.clock = clock
        self.origin = origin
        self.edgeNanosecondsAtOrigin = edgeNanosecondsAtOrigin
        machine = PunchRunMachine(gapSeconds: gapMilliseconds / 1000)
        (actions, continuation) = AsyncStream.makeStream(of: Action.self)
    }

    /// Starts listening to the sensors. Call once, before the first command.
    public func start() {
        guard edgeTask == nil, !closed else { return }
        let edges = lines.edges
        edgeTask = Task { [weak self] in
            for await edge in edges {
                guard let self else { return }
                await self.edge(edge)
            }
        }
    }

    /// True while a run counts down, lights a target or waits between steps.
    public var isRunning: Bool { machine.isRunning }

    /// The machine's phase (for tests and logs).
    public var phase: PunchRunMachine.Phase { machine.phase }

    /// Applies a control command with the sequences stored now.
    public func handle(_ command: PunchControlCommand, sequence: PunchSequence?, timeSequence: PunchTimeSequence?) async {
        guard !closed else { return }
        await apply(machine.handle(command, sequence: sequence, timeSequence: timeSequence, now: seconds(clock.now)))
    }

    /// Stops a run in progress (as a `02` command would, notifying `13`); does nothing when idle.
    public func stopIfRunning() async {
        guard machine.isRunning else { return }
        await handle(.stop, sequence: nil, timeSequence: nil)
    }

    /// Stops any run, turns every LED off, stops listening and ends ``actions``. Idempotent.
    /// The GPIO request itself stays with its owner.
    public func shutdown() async {
        guard !closed else { return }
        if machine.isRunning { await apply(machine.handle(.stop, sequence: nil, timeSequence: nil, now: seconds(clock.now))) }
        closed = true
        timer?.cancel()
        timer = nil
        edgeTask?.cancel()
        edgeTask = nil
        await allLEDsOff()
        continuation.finish()
    }

    /// Turns every target's LED off (errors ignored: used on the way out).
    public func allLEDsOff() async {
        try? await lines.setValues(Dictionary(uniqueKeysWithValues: ledLines.values.map { ($0, false) }))
    }

    // MARK: - Inputs

    private func edge(_ edge: GPIOEdge) async {
        guard !closed, edge.kind == .rising, let target = targetBySensor[edge.offset] else { return }
        let at = Double(Int64(bitPattern: edge.timestampNanoseconds &- edgeNanosecondsAtOrigin)) / 1e9
        // An edge stamped after "now" (clock skew between the stamp's and the runner's clock)
        // counts as happening now.
        await apply(machine.sensorActivated(target: target, at: min(at, seconds(clock.now))))
    }

    private func timerFired(_ generation: Int) async {
        guard !closed, generation == timerGeneration else { return }
        await apply(machine.advance(to: seconds(clock.now)))
    }

    // MARK: - Outputs

    private func apply(_ out: [Action]) async {
        for action in out {
            switch action {
            case let .ledOn(target):
                if let line = ledLines[target] { try? await lines.setValue(true, for: line) }
            case let .ledOff(target):
                if let line = ledLines[target] { try? await lines.setValue(false, for: line) }
            case .response, .status:
                break
            }
            continuation.yield(action)
        }
        rescheduleTimer()
    }

    /// One timer for the machine's next deadline, replaced whenever the machine acted.
    private func rescheduleTimer() {
        timer?.cancel()
        timerGeneration &+= 1
        guard !closed, let deadline = machine.nextDeadline else {
            timer = nil
            return
        }
        let generation = timerGeneration
        let wake = origin.advanced(by: duration(seconds: deadline))
        timer = Task { [weak self, clock] in
            do { try await clock.sleep(until: wake, tolerance: nil) } catch { return }
            await self?.timerFired(generation)
        }
    }

    // MARK: - Time

    private func seconds(_ instant: C.Instant) -> Double {
        instant.seconds(since: origin)
    }

    private func duration(seconds: Double) -> Duration {
        .nanoseconds(Int64((max(seconds, 0) * 1e9).rounded(.up)))
    }
}
