import BluetideBase
import BluetideProfiles

/// The FTMS side of ``RideBridge`` without I/O: what an app's Fitness Machine Control Point
/// writes mean, which of them go to the real trainer, and the answers and status changes the
/// app gets.
///
/// FTMS sequencing as a real trainer does it: one app at a time holds control after Request
/// Control (`00`), every other request before it is answered `80 op 05` (control not
/// permitted); Reset releases control, and so does the controlling app's disconnection.
/// Requests the bridge carries out on the trainer (target power, simulation, inclination,
/// resistance, reset) come back as ``Decision/forward(_:request:)``; call
/// ``completed(_:failure:)`` with the trainer's outcome to get the answer (success, or
/// operation failed `04` when the trainer refused or did not confirm).
public struct FTMSBridgeCore: Sendable {
    /// What the real trainer is asked to do for an app's request.
    public enum TrainerCommand: Sendable, Hashable, CustomStringConvertible {
        /// ERG, W.
        case targetPower(watts: Int)
        /// Simulation: grade, wind, Crr, Cw.
        case simulation(SimulationParameters)
        /// Basic resistance, % of the trainer's range.
        case resistance(percent: Double)
        /// Back to free riding.
        case reset

        /// `target power 180 W`.
        public var description: String {
            switch self {
            case let .targetPower(watts): "target power \(watts) W"
            case let .simulation(p): "simulation: grade \(RideFormat.fixed(p.gradePercent, 2)) %"
            case let .resistance(percent): "resistance \(RideFormat.fixed(percent, 1)) %"
            case .reset: "reset"
            }
        }
    }

    /// What to do with one control point write.
    public enum Decision: Sendable, Equatable {
        /// Answer at once: indicate `response` on the control point, then notify `statuses`.
        case answer(response: FitnessMachineControlPointResponse, statuses: [FitnessMachineStatus])
        /// Send `command` to the trainer, then answer with ``completed(_:failure:)``.
        case forward(TrainerCommand, request: FitnessMachineControlPointRequest)
    }

    /// The features the bridge announces (Fitness Machine Feature, 0x2ACC).
    public static let feature = FitnessMachineFeature(
        machineFeatures: [.cadence, .totalDistance, .heartRateMeasurement, .elapsedTime, .powerMeasurement],
        targetSettingFeatures: [.inclination, .resistanceLevel, .power, .indoorBikeSimulation])
    /// ERG targets the bridge accepts: 0–2000 W in 1 W steps.
    public static let powerRange = SupportedPowerRange(minimumWatts: 0, maximumWatts: 2000, incrementWatts: 1)
    /// Resistance levels the bridge accepts: 0–20.0 in 0.1 steps, mapped onto 0–100 % of the
    /// trainer's range.
    public static let resistanceRange = SupportedResistanceLevelRange(minimumRaw: 0, maximumRaw: 200, incrementRaw: 1)
    /// Inclinations the bridge accepts: −20 to +20 % in 0.1 steps (sent as a simulated grade).
    public static let inclinationRange = SupportedInclinationRange(minimumTenthPercent: -200, maximumTenthPercent: 200, incrementTenthPercent: 1)

    /// The connection handle of the app holding control, if any.
    public private(set) var controller: UInt16?
    /// Training status now (Training Status, 0x2AD3).
    public private(set) var trainingStatus = TrainingStatus(status: .idle)

    /// A core in which nobody holds control.
    public init() {}

    /// What to do with `bytes` written to the control point by the app on `connection`.
    public mutating func receive(_ bytes: [UInt8], from connection: UInt16) -> Decision {
        guard let opcode = bytes.first else {
            return answer(0x00, .invalidParameter)
        }
        guard opcode != FitnessMachineControlPointRequest.responseOpcode,
              let request = try? FitnessMachineControlPointRequest(bytes: bytes) else {
            return answer(opcode, opcode == FitnessMachineControlPointRequest.responseOpcode ? .opCodeNotSupported : .invalidParameter)
        }
        if request == .requestControl {
            if let controller, controller != connection { return answer(opcode, .controlNotPermitted) }
            controller = connection
            return answer(opcode, .success)
        }
        let supported: Bool
        switch request {
        case .reset, .setTargetPower, .setIndoorBikeSimulation, .setTargetInclination, .setTargetResistanceLevel,
            .setTargetResistanceLevelWide, .startOrResume, .stopOrPause:
            supported = true
        default:
            supported = false
        }
        guard supported else { return answer(opcode, .opCodeNotSupported) }
        guard controller == connection else { return answer(opcode, .controlNotPermitted) }
        switch request {
        case .reset:
            return .forward(.reset, request: request)
        case let .setTargetPower(watts):
            guard watts >= Self.powerRange.minimumWatts, watts <= Self.powerRange.maximumWatts else {
                return answer(opcode, .invalidParameter)
            }
            return .forward(.targetPower(watts: Int(watts)), request: request)
        case let .setIndoorBikeSimulation(p):
            return .forward(.simulation(SimulationParameters(
                gradePercent: p.gradePercent, windSpeedMetersPerSecond: p.windSpeedMetersPerSecond,
                rollingResistance: p.rollingResistanceCoefficient, windResistanceKgPerMeter: p.windResistanceKgPerMeter)), request: request)
        case let .setTargetInclination(tenths):
            guard tenths >= Self.inclinationRange.minimumTenthPercent, tenths <= Self.inclinationRange.maximumTenthPercent else {
                return answer(opcode, .invalidParameter)
            }
            return .forward(.simulation(SimulationParameters(gradePercent: Double(tenths) / 10)), request: request)
        case let .setTargetResistanceLevel(tenths):
            return resistance(Int16(tenths), request: request)
        case let .setTargetResistanceLevelWide(tenths):
            return resistance(tenths, request: request)
        case .startOrResume:
            trainingStatus = TrainingStatus(status: .manualMode)
            return answer(opcode, .success, statuses: [.startedOrResumedByUser])
        case let .stopOrPause(control):
            guard control == .stop || control == .pause else { return answer(opcode, .invalidParameter) }
            trainingStatus = TrainingStatus(status: control == .stop ? .postWorkout : .idle)
            return answer(opcode, .success, statuses: [.stoppedOrPausedByUser(control: control)])
        default:
            return answer(opcode, .opCodeNotSupported)
        }
    }

    private func resistance(_ tenths: Int16, request: FitnessMachineControlPointRequest) -> Decision {
        guard tenths >= Self.resistanceRange.minimumRaw, tenths <= Self.resistanceRange.maximumRaw else {
            return answer(request.opcode, .invalidParameter)
        }
        let percent = Double(tenths) / Double(Self.resistanceRange.maximumRaw) * 100
        return .forward(.resistance(percent: percent), request: request)
    }

    /// The answer to a forwarded `request` once the trainer confirmed it (`failure` nil) or
    /// refused it / did not answer (`failure` says why): success with the matching status
    /// change, or operation failed (`04`) and no status.
    public mutating func completed(_ request: FitnessMachineControlPointRequest, failure: String?) -> Decision {
        guard failure == nil else { return answer(request.opcode, .operationFailed) }
        var statuses: [FitnessMachineStatus] = []
        switch request {
        case .reset:
            controller = nil
            trainingStatus = TrainingStatus(status: .idle)
            statuses = [.reset]
        case let .setTargetPower(watts):
            trainingStatus = TrainingStatus(status: .wattControl)
            statuses = [.targetPowerChanged(watts: watts)]
        case let .setIndoorBikeSimulation(p):
            trainingStatus = TrainingStatus(status: .manualMode)
            statuses = [.indoorBikeSimulationParametersChanged(parameters: p)]
        case let .setTargetInclination(tenths):
            trainingStatus = TrainingStatus(status: .manualMode)
            statuses = [.targetInclineChanged(tenthPercent: tenths)]
        case let .setTargetResistanceLevel(tenths):
            trainingStatus = TrainingStatus(status: .manualMode)
            statuses = [.targetResistanceLevelChanged(tenths: Int16(tenths))]
        case let .setTargetResistanceLevelWide(tenths):
            trainingStatus = TrainingStatus(status: .manualMode)
            statuses = [.targetResistanceLevelChanged(tenths: tenths)]
        default:
            break
        }
        return answer(request.opcode, .success, statuses: statuses)
    }

    /// The app on `connection` went away: it no longer holds control.
    public mutating func disconnected(_ connection: UInt16) {
        if controller == connection { controller = nil }
    }

    private func answer(_ opcode: UInt8, _ result: FTMSResultCode, statuses: [FitnessMachineStatus] = []) -> Decision {
        .answer(response: FitnessMachineControlPointResponse(requestOpcode: opcode, result: result), statuses: statuses)
    }
}
