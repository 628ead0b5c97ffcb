import BluetideCore
import BluetideProfiles

/// `punch`: the boxing reflex trainer's Punch service (reflex-trainer.md) with a simulated
/// athlete in front of it.
///
/// punchSequence / punchTimeSequence accept valid values and refuse invalid ones with ATT error
/// 0x80, keeping the previous values. punchControl `01` starts (notifies `10` armed then `11`
/// running), `03 n` starts after an n-second countdown, `02` stops (`13`); a start whose
/// sequences are missing, differ in length or hold bad values notifies `E0 code`. While running,
/// each step notifies one PunchResponse (hit after the athlete's reaction time, or missed when the
/// step times out, with the reaction time then equal to the step's interval); the next target
/// lights as soon as the previous step ends. After the last step `12` + steps done is notified.
public struct PunchTrainerModel: DeviceModel {
    /// Catalog name.
    public let name = "punch"
    private var random: SeededGenerator
    private let localName: String
    /// The athlete.
    public var athlete: SimulatedAthlete
    /// Targets per step, as last written (nil before the first valid write).
    public private(set) var sequence: PunchSequence?
    /// Milliseconds per step, as last written (nil before the first valid write).
    public private(set) var timeSequence: PunchTimeSequence?
    /// The last response notified.
    public private(set) var lastResponse: PunchResponse?
    /// What the trainer is doing.
    public private(set) var phase: Phase = .idle

    /// Trainer phase.
    public enum Phase: Hashable, Sendable {
        /// Waiting for a start.
        case idle
        /// Armed, counting down to `start` (model seconds).
        case countdown(program: PunchProgram, start: Double)
        /// Running step `step`, lit at `litAt`; the athlete's attempt ends at `endsAt`.
        case running(program: PunchProgram, step: Int, litAt: Double, endsAt: Double, attempt: SimulatedAthlete.Attempt)
    }

    /// Builds the model: `seed` fixes its randomness, `options` its rider and device settings.
    public init(seed: UInt64 = 0, options: EmulatorOptions = EmulatorOptions()) {
        random = SeededGenerator(seed: seed)
        var naming = SeededGenerator(seed: seed ^ 0x5EED)
        let suffix = [UInt8(truncatingIfNeeded: naming.next()), UInt8(truncatingIfNeeded: naming.next())].hexString.uppercased()
        localName = options.localName ?? "\(PunchUUID.namePrefix)-\(suffix)"
        athlete = SimulatedAthlete(
            reactionMeanMilliseconds: options.reactionMeanMilliseconds,
            reactionStandardDeviationMilliseconds: options.reactionStandardDeviationMilliseconds,
            missProbability: options.missProbability, wrongTargetProbability: options.wrongTargetProbability)
    }

    public var advertising: AdvertisingHints { AdvertisingHints(localName: localName, serviceUUIDs: [PunchUUID.service]) }

    public var services: [EmulatedService] {
        [EmulatedService(PunchUUID.service, [
            EmulatedCharacteristic(PunchUUID.response, [.read, .notify]),
            EmulatedCharacteristic(PunchUUID.timeSequence, [.read, .write]),
            EmulatedCharacteristic(PunchUUID.sequence, [.read, .write]),
            EmulatedCharacteristic(PunchUUID.control, [.write, .notify]),
        ])]
    }

    public var tickInterval: Double { 0.02 }

    public func read(_ characteristic: BluetoothUUID, now: Double) -> [UInt8]? {
        switch characteristic {
        case PunchUUID.response: return lastResponse?.bytes ?? []
        case PunchUUID.timeSequence: return timeSequence?.bytes ?? []
        case PunchUUID.sequence: return sequence?.bytes ?? []
        default: return nil
        }
    }

    public mutating func write(_ characteristic: BluetoothUUID, _ bytes: [UInt8], now: Double) -> WriteOutcome {
        switch characteristic {
        case PunchUUID.sequence:
            guard let value = try? PunchSequence(exactly: bytes) else { return .rejected(attError: PunchUUID.invalidSequenceATTError) }
            sequence = value
            return .ok
        case PunchUUID.timeSequence:
            guard let value = try? PunchTimeSequence(exactly: bytes) else {
                return .rejected(attError: PunchUUID.invalidSequenceATTError)
            }
            timeSequence = value
            return .ok
        case PunchUUID.control:
            guard let command = try? PunchControlCommand(exactly: bytes) else {
                return .rejected(attError: PunchUUID.invalidSequenceATTError)
            }
            return .accepted(handle(command, now: now))
        default:
            return .rejected(attError: EmulatedATTError.writeNotPermitted)
        }
    }

    private mutating func handle(_ command: PunchControlCommand, now: Double) -> [EmulatedOutput] {
        switch command {
        case .stop:
            phase = .idle
            return [status(.stopped)]
        case .start, .countdownStart:
            guard let sequence, let timeSequence else { return [status(.error(.sequencesMissing))] }
            let program: PunchProgram
            do { program = try PunchProgram(sequence: sequence, timeSequence: timeSequence) } catch {
                return [status(.error(error.controlErrorCode))]
            }
            if case let .countdownStart(seconds) = command, seconds > 0 {
                phase = .countdown(program: program, start: now + Double(seconds))
                return [status(.armed)]
            }
            phase = light(program, step: 0, at: now)
            return [status(.armed), status(.running)]
        }
    }

    private func status(_ s: PunchControlStatus) -> EmulatedOutput { EmulatedOutput(PunchUUID.control, s.bytes) }

    private mutating func light(_ program: PunchProgram, step: Int, at time: Double) -> Phase {
        let window = program.steps[step].milliseconds
        let attempt = athlete.attempt(windowMilliseconds: window, using: &random)
        let ms = attempt.hitAfterMilliseconds ?? UInt32(window)
        return .running(program: program, step: step, litAt: time, endsAt: time + Double(ms) / 1000, attempt: attempt)
    }

    public mutating func tick(now: Double) -> [EmulatedOutput] {
        var out: [EmulatedOutput] = []
        while true {
            switch phase {
            case .idle:
                return out
            case let .countdown(program, start):
                guard now >= start else { return out }
                out.append(status(.running))
                phase = light(program, step: 0, at: start)
            case let .running(program, step, _, endsAt, attempt):
                guard now >= endsAt else { return out }
                let stepInfo = program.steps[step]
                let response = PunchResponse(
                    reactionTimeMilliseconds: attempt.hitAfterMilliseconds ?? UInt32(stepInfo.milliseconds),
                    target: stepInfo.target, hit: attempt.hitAfterMilliseconds != nil,
                    wrongTargetFirst: attempt.wrongTargetFirst, step: UInt16(truncatingIfNeeded: step))
                lastResponse = response
                out.append(EmulatedOutput(PunchUUID.response, response.bytes))
                if step + 1 < program.steps.count {
                    phase = light(program, step: step + 1, at: endsAt)
                } else {
                    phase = .idle
                    out.append(status(.finished(stepsDone: UInt16(truncatingIfNeeded: program.steps.count))))
                }
            }
        }
    }
}
