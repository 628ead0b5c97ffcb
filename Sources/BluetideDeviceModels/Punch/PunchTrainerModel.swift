import BluetideBase
import BluetideProfiles

/// `punch`: the boxing reflex trainer's Punch service (reflex-trainer.md) with a simulated
/// athlete in front of it.
///
/// punchSequence / punchTimeSequence accept valid values and refuse invalid ones with ATT error
/// 0x80, keeping the previous values. Runs follow ``PunchRunMachine`` (shared with the real
/// device daemon): punchControl `01` starts (notifies `10` armed then `11` running), `03 n`
/// starts after an n-second countdown, `02` stops (`13`); a start whose sequences are missing
/// or differ in length notifies `E0 01`. While running, each step notifies one PunchResponse
/// (hit after the athlete's reaction time, or missed when the step times out, with the reaction
/// time then equal to the step's interval); the next target lights as soon as the previous step
/// ends. After the last step `12` + steps done is notified.
///
/// The athlete (the package's one simulated athlete, `AthleteModel`, as the GPIO simulation's)
/// decides once per lit step and plays it into the machine as sensor activations: a wrong
/// target at its reaction time when it errs, then the lit target (after a second reaction time
/// when it erred); nothing within the step's window is a miss.
public struct PunchTrainerModel: DeviceModel {
    /// Catalog name.
    public let name = "punch"
    private let localName: String
    /// The athlete.
    public var athlete: AthleteModel
    /// Targets per step, as last written (nil before the first valid write).
    public private(set) var sequence: PunchSequence?
    /// Milliseconds per step, as last written (nil before the first valid write).
    public private(set) var timeSequence: PunchTimeSequence?
    /// The last response notified.
    public private(set) var lastResponse: PunchResponse?
    private var machine = PunchRunMachine(gapSeconds: 0)
    private var pending: PendingAttempt?

    /// What the athlete will still do at the lit step (model seconds).
    private struct PendingAttempt {
        var step: Int
        var litAt: Double
        var wrongAt: Double?
        var wrongTarget: UInt8
        var hitAt: Double?
        var hitTarget: UInt8
    }

    /// What the trainer is doing (the shared machine's phase).
    public var phase: PunchRunMachine.Phase { machine.phase }

    /// Builds the model: `seed` fixes its randomness, `options` its rider and device settings.
    public init(seed: UInt64 = 0, options: EmulatorOptions = EmulatorOptions()) {
        var random = SeededGenerator(seed: seed)
        var naming = SeededGenerator(seed: seed ^ 0x5EED)
        let suffix = [UInt8(truncatingIfNeeded: naming.next()), UInt8(truncatingIfNeeded: naming.next())].hexString.uppercased()
        localName = options.localName ?? "\(PunchUUID.namePrefix)-\(suffix)"
        athlete = AthleteModel(
            behaviour: AthleteBehaviour(
                meanReactionMilliseconds: options.reactionMeanMilliseconds,
                reactionStandardDeviationMilliseconds: options.reactionStandardDeviationMilliseconds,
                missProbability: options.missProbability, wrongTargetProbability: options.wrongTargetProbability),
            targetCount: Int(PunchSequence.maxTarget) + 1, seed: random.next())
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
            return .accepted(outputs(machine.handle(command, sequence: sequence, timeSequence: timeSequence, now: now)))
        default:
            return .rejected(attError: EmulatedATTError.writeNotPermitted)
        }
    }

    public mutating func tick(now: Double) -> [EmulatedOutput] {
        var out: [EmulatedOutput] = []
        while true {
            // The athlete's next move, when it comes before the machine's own next deadline.
            if let attempt = pending {
                if let wrongAt = attempt.wrongAt, wrongAt <= now {
                    pending?.wrongAt = nil
                    out += outputs(machine.sensorActivated(target: attempt.wrongTarget, at: wrongAt))
                    continue
                }
                if let hitAt = attempt.hitAt, hitAt <= now {
                    pending = nil
                    out += outputs(machine.sensorActivated(target: attempt.hitTarget, at: hitAt))
                    continue
                }
            }
            // One deadline at a time, so the athlete can act on each step that lights.
            guard let deadline = machine.nextDeadline, deadline <= now else { return out }
            out += outputs(machine.advance(to: deadline))
        }
    }

    /// Notifications for the machine's actions; draws the athlete's attempt when a step lights.
    private mutating func outputs(_ actions: [PunchRunMachine.Action]) -> [EmulatedOutput] {
        var out: [EmulatedOutput] = []
        for action in actions {
            switch action {
            case let .status(status):
                out.append(EmulatedOutput(PunchUUID.control, status.bytes))
            case let .response(response):
                lastResponse = response
                out.append(EmulatedOutput(PunchUUID.response, response.bytes))
            case .ledOff:
                pending = nil
            case .ledOn:
                drawAttempt()
            }
        }
        if !machine.isRunning { pending = nil }
        return out
    }

    private mutating func drawAttempt() {
        guard case let .lit(program, step, litAt, _) = machine.phase else { return }
        let target = program.sequence.targets[step]
        let window = Double(program.timeSequence.milliseconds[step])
        // Whole milliseconds, at least 1 (the machine ignores activations at the very instant).
        func at(_ milliseconds: Double) -> Double? {
            let ms = max(milliseconds.rounded(), 1)
            return ms < window ? litAt + ms / 1000 : nil
        }
        var wrongAt: Double?, wrongTarget = (target &+ 1) % (PunchSequence.maxTarget + 1), hitAt: Double?
        switch athlete.respond(toLit: Int(target)) {
        case .miss: break
        case let .hit(_, after): hitAt = at(after)
        case let .wrongTarget(wrong, after, correction):
            wrongAt = at(after)
            wrongTarget = UInt8(truncatingIfNeeded: wrong)
            hitAt = wrongAt == nil ? nil : at(after.rounded() + correction)
        }
        pending = PendingAttempt(step: step, litAt: litAt, wrongAt: wrongAt, wrongTarget: wrongTarget, hitAt: hitAt, hitTarget: target)
    }
}
