/// How a Punch device runs a sequence, without any I/O: control commands, sensor activations and
/// the passing of time go in; LED switching, PunchResponses and control statuses come out.
///
/// Shared by the device daemon (GPIO LEDs and sensors) and the emulator model (a simulated
/// athlete), so both follow one definition of the protocol:
/// - `01` start / `03 n` countdown start: the sequences must both exist with the same length
///   (else `E0 01`); notifies `10` armed, then `11` running (after `n` seconds for a countdown).
/// - Each step: LED on, wait for that target's sensor or the step's time, LED off, one
///   ``PunchResponse`` (hit with the reaction time from the LED-on instant, or missed with the
///   step's whole time; bit1 when another target's sensor fired first), then ``gapSeconds`` with
///   every LED off before the next step.
/// - After the last step: `12` + steps done. `02` stop: LED off, `13` stopped.
///
/// Time is seconds on any monotonic scale chosen by the caller (the same for every call).
public struct PunchRunMachine: Sendable {
    /// Something the device must do, in order.
    public enum Action: Hashable, Sendable {
        /// Turn a target's LED on.
        case ledOn(target: UInt8)
        /// Turn a target's LED off.
        case ledOff(target: UInt8)
        /// Notify this step result on punchResponse.
        case response(PunchResponse)
        /// Notify this status on punchControl.
        case status(PunchControlStatus)
    }

    /// What the machine is doing.
    public enum Phase: Hashable, Sendable {
        /// No run in progress.
        case idle
        /// Armed, the run starts at `startsAt` (seconds).
        case countdown(program: PunchProgram, startsAt: Double)
        /// Step `step` is lit since `litAt`; `wrongTargetFirst` once another sensor fired.
        case lit(program: PunchProgram, step: Int, litAt: Double, wrongTargetFirst: Bool)
        /// Between steps: step `nextStep` lights at `startsAt`.
        case gap(program: PunchProgram, nextStep: Int, startsAt: Double)
    }

    /// Current phase.
    public private(set) var phase: Phase = .idle
    /// Seconds with every LED off between two steps (0 = the next target lights at once).
    public let gapSeconds: Double

    /// A machine pausing `gapSeconds` (≥ 0) between steps.
    public init(gapSeconds: Double = 0) {
        self.gapSeconds = gapSeconds.isFinite ? max(0, gapSeconds) : 0
    }

    /// True while a run is counting down, lit or between steps.
    public var isRunning: Bool { phase != .idle }

    /// When ``advance(to:)`` has something to do next (seconds), nil when only a command or a
    /// sensor can change anything.
    public var nextDeadline: Double? {
        switch phase {
        case .idle: return nil
        case let .countdown(_, startsAt): return startsAt
        case let .lit(program, step, litAt, _): return Self.deadline(program, step, litAt)
        case let .gap(_, _, startsAt): return startsAt
        }
    }

    /// Applies a control command written at `now`, with the sequences stored at that moment.
    public mutating func handle(
        _ command: PunchControlCommand, sequence: PunchSequence?, timeSequence: PunchTimeSequence?, now: Double
    ) -> [Action] {
        switch command {
        case .stop:
            var out = abandonRun()
            out.append(.status(.stopped))
            return out
        case .start, .countdownStart:
            guard let sequence, let timeSequence else { return [.status(.error(.sequencesMissing))] }
            let program: PunchProgram
            do { program = try PunchProgram(sequence: sequence, timeSequence: timeSequence) } catch {
                return [.status(.error(error.controlErrorCode))]
            }
            // A start during a run restarts it from step 0.
            var out = abandonRun()
            out.append(.status(.armed))
            if case let .countdownStart(seconds) = command, seconds > 0 {
                phase = .countdown(program: program, startsAt: now + Double(seconds))
                return out
            }
            out.append(.status(.running))
            out += light(program, step: 0, at: now)
            return out
        }
    }

    /// A target's sensor became active at `time` (the edge's own timestamp; it may be a little
    /// in the past). Deadlines up to `time` are handled first, so a late-delivered edge is judged
    /// by when it happened. Activations up to the instant the LED went on are ignored (no one
    /// reacts in 0 ms: such an edge comes from a sensor that was already held).
    public mutating func sensorActivated(target: UInt8, at time: Double) -> [Action] {
        var out = advance(to: time)
        guard case let .lit(program, step, litAt, wrongFirst) = phase, time > litAt else { return out }
        let lit = program.sequence.targets[step]
        if target == lit {
            out += endStep(program, step: step, litAt: litAt, hitAt: time, wrongTargetFirst: wrongFirst, now: time)
        } else if !wrongFirst {
            phase = .lit(program: program, step: step, litAt: litAt, wrongTargetFirst: true)
        }
        return out
    }

    /// Handles every deadline reached by `now`: the countdown's end, a step's timeout (a miss),
    /// the end of a gap. A step that becomes due late lights at `now`.
    public mutating func advance(to now: Double) -> [Action] {
        var out: [Action] = []
        while let due = nextDeadline, due <= now {
            switch phase {
            case .idle:
                return out
            case let .countdown(program, _):
                out.append(.status(.running))
                out += light(program, step: 0, at: now)
            case let .lit(program, step, litAt, wrongFirst):
                out += endStep(program, step: step, litAt: litAt, hitAt: nil, wrongTargetFirst: wrongFirst, now: due)
            case let .gap(program, nextStep, _):
                out += light(program, step: nextStep, at: now)
            }
        }
        return out
    }

    // MARK: - Steps

    private static func deadline(_ program: PunchProgram, _ step: Int, _ litAt: Double) -> Double {
        litAt + Double(program.timeSequence.milliseconds[step]) / 1000
    }

    private mutating func light(_ program: PunchProgram, step: Int, at time: Double) -> [Action] {
        phase = .lit(program: program, step: step, litAt: time, wrongTargetFirst: false)
        return [.ledOn(target: program.sequence.targets[step])]
    }

    /// LED off, the response, then the gap, the next step or the finish.
    private mutating func endStep(
        _ program: PunchProgram, step: Int, litAt: Double, hitAt: Double?, wrongTargetFirst: Bool, now: Double
    ) -> [Action] {
        let target = program.sequence.targets[step]
        let allowed = program.timeSequence.milliseconds[step]
        let milliseconds: UInt32
        if let hitAt {
            let elapsed = ((hitAt - litAt) * 1000).rounded()
            milliseconds = elapsed.isFinite ? UInt32(min(max(elapsed, 0), Double(allowed))) : UInt32(allowed)
        } else {
            milliseconds = UInt32(allowed)
        }
        var out: [Action] = [
            .ledOff(target: target),
            .response(PunchResponse(
                reactionTimeMilliseconds: milliseconds, target: target, hit: hitAt != nil,
                wrongTargetFirst: wrongTargetFirst, step: UInt16(truncatingIfNeeded: step))),
        ]
        let next = step + 1
        if next >= program.sequence.count {
            phase = .idle
            out.append(.status(.finished(stepsDone: UInt16(truncatingIfNeeded: next))))
        } else if gapSeconds > 0 {
            phase = .gap(program: program, nextStep: next, startsAt: now + gapSeconds)
        } else {
            out += light(program, step: next, at: now)
        }
        return out
    }

    /// Ends the run in progress (if any), turning its LED off.
    private mutating func abandonRun() -> [Action] {
        defer { phase = .idle }
        if case let .lit(program, step, _, _) = phase { return [.ledOff(target: program.sequence.targets[step])] }
        return []
    }
}
