import BluetideBase
import BluetideProfiles

/// `ftms-bike`: a smart trainer speaking the Fitness Machine Service (indoor bike).
///
/// Indoor Bike Data at 1 Hz (speed, cadence, distance, resistance level, power, energy, elapsed
/// time); Fitness Machine Feature; supported speed, inclination, resistance and power ranges;
/// Training Status; Fitness Machine Control Point with the FTMS sequencing: a client must
/// Request Control (`00`) first, otherwise every command is answered `80 op 05` (control not
/// permitted); Reset releases control. Every write is answered by an indication `80 op result`,
/// and each change is also notified on Fitness Machine Status. ERG (Set Target Power) makes the
/// power converge to the target; simulation parameters (grade, wind, Crr, Cw) and target
/// inclination drive ``RiderPhysics`` at the rider's own power; resistance level loads the rider
/// as a climb; start/stop/pause start and stop the rider. Device Information (0x180A) names it
/// `Bluetide` `FTMS Bike`, as a real trainer names itself.
public struct FTMSBikeModel: DeviceModel {
    /// Catalog name.
    public let name = "ftms-bike"
    private var random: SeededGenerator
    private let localName: String
    /// The trainer's physics.
    public private(set) var engine: TrainerEngine
    /// Whether a client holds control (after Request Control, until Reset).
    public private(set) var hasControl = false
    /// Training status now.
    public private(set) var trainingStatus = TrainingStatus(status: .idle)
    /// Wheel circumference, 0.1 mm.
    public private(set) var wheelCircumferenceTenthMillimeters: UInt16
    /// Resistance level last set, 0.1 units.
    public private(set) var resistanceTenths: Int16 = 0
    private var nextNotification: Double?
    /// Device Information (0x180A): manufacturer, model, serial and revisions.
    public let deviceInformation: EmulatedDeviceInformation

    /// Features this trainer reports.
    public static let feature = FitnessMachineFeature(
        machineFeatures: [.cadence, .totalDistance, .resistanceLevel, .expendedEnergy, .elapsedTime, .powerMeasurement],
        targetSettingFeatures: [.inclination, .resistanceLevel, .power, .indoorBikeSimulation, .wheelCircumference])
    /// Supported speed range: 0–60 km/h in 0.01 steps.
    public static let speedRange = SupportedSpeedRange(minimumHundredthKmh: 0, maximumHundredthKmh: 6000, incrementHundredthKmh: 1)
    /// Supported inclination range: −20 to +20 % in 0.1 steps.
    public static let inclinationRange = SupportedInclinationRange(minimumTenthPercent: -200, maximumTenthPercent: 200, incrementTenthPercent: 1)
    /// Supported resistance range: 0–20.0 in 0.1 steps.
    public static let resistanceRange = SupportedResistanceLevelRange(minimumRaw: 0, maximumRaw: 200, incrementRaw: 1)
    /// Supported power range: 0–2000 W in 1 W steps.
    public static let powerRange = SupportedPowerRange(minimumWatts: 0, maximumWatts: 2000, incrementWatts: 1)

    /// Builds the model: `seed` fixes its randomness, `options` its rider and device settings.
    public init(seed: UInt64 = 0, options: EmulatorOptions = EmulatorOptions()) {
        random = SeededGenerator(seed: seed)
        localName = options.localName ?? "Bluetide FTMS"
        engine = TrainerEngine(
            riderPowerWatts: options.powerWatts, riderCadenceRPM: options.cadenceRPM, massKilograms: options.riderMassKilograms)
        wheelCircumferenceTenthMillimeters = UInt16(clamping: Int((options.wheelCircumferenceMeters * 10_000).rounded()))
        deviceInformation = EmulatedDeviceInformation(
            manufacturerName: "Bluetide", modelNumber: "FTMS Bike", serialNumber: EmulatedDeviceInformation.serialNumber(seed: seed))
    }

    public var advertising: AdvertisingHints {
        AdvertisingHints(
            localName: localName, serviceUUIDs: [.fitnessMachine],
            serviceData: [.init(uuid: .fitnessMachine, data: FitnessMachineServiceData(machineAvailable: true, machineTypes: .indoorBike).bytes)],
            appearance: 0x0480)
    }

    public var services: [EmulatedService] {
        [
            EmulatedService(.fitnessMachine, [
                EmulatedCharacteristic(.fitnessMachineFeature, [.read], initialValue: Self.feature.bytes),
                EmulatedCharacteristic(.indoorBikeData, [.notify]),
                EmulatedCharacteristic(.trainingStatus, [.read, .notify], initialValue: TrainingStatus(status: .idle).bytes),
                EmulatedCharacteristic(.supportedSpeedRange, [.read], initialValue: Self.speedRange.bytes),
                EmulatedCharacteristic(.supportedInclinationRange, [.read], initialValue: Self.inclinationRange.bytes),
                EmulatedCharacteristic(.supportedResistanceLevelRange, [.read], initialValue: Self.resistanceRange.bytes),
                EmulatedCharacteristic(.supportedPowerRange, [.read], initialValue: Self.powerRange.bytes),
                EmulatedCharacteristic(.fitnessMachineControlPoint, [.write, .indicate]),
                EmulatedCharacteristic(.fitnessMachineStatus, [.notify]),
            ]),
            deviceInformation.service,
        ]
    }

    public var tickInterval: Double { 0.25 }

    public func read(_ characteristic: BluetoothUUID, now: Double) -> [UInt8]? {
        switch characteristic {
        case .fitnessMachineFeature: return Self.feature.bytes
        case .trainingStatus: return trainingStatus.bytes
        case .supportedSpeedRange: return Self.speedRange.bytes
        case .supportedInclinationRange: return Self.inclinationRange.bytes
        case .supportedResistanceLevelRange: return Self.resistanceRange.bytes
        case .supportedPowerRange: return Self.powerRange.bytes
        default: return deviceInformation.read(characteristic)
        }
    }

    /// The Indoor Bike Data for the current state.
    public var indoorBikeData: IndoorBikeData {
        let kcal = engine.energyJoules / 4184
        let kcalPerHour = engine.powerWatts * 3600 / 4184
        return IndoorBikeData(
            instantaneousSpeedHundredthKmh: UInt16(clamping: Int((engine.speedMetersPerSecond * 360).rounded())),
            instantaneousCadenceHalfRpm: UInt16(clamping: Int((engine.cadenceRPM * 2).rounded())),
            totalDistanceMeters: UInt32(clamping: min(Int(engine.distanceMeters), 0xFF_FFFF)),
            resistanceLevel: Int16(clamping: Int((Double(resistanceTenths) / 10).rounded())),
            instantaneousPowerWatts: Int16(clamping: Int(engine.powerWatts.rounded())),
            energy: .init(
                totalKcal: UInt16(clamping: Int(kcal)), perHourKcal: UInt16(clamping: Int(kcalPerHour)),
                perMinuteKcal: UInt8(clamping: Int(kcalPerHour / 60))),
            elapsedTimeSeconds: UInt16(truncatingIfNeeded: Int(engine.elapsedSeconds)))
    }

    public mutating func write(_ characteristic: BluetoothUUID, _ bytes: [UInt8], now: Double) -> WriteOutcome {
        guard characteristic == .fitnessMachineControlPoint else {
            return .rejected(attError: EmulatedATTError.writeNotPermitted)
        }
        guard let opcode = bytes.first else { return .rejected(attError: EmulatedATTError.invalidAttributeValueLength) }
        engine.advance(to: now)
        var out: [EmulatedOutput] = []
        let result: FTMSResultCode
        if opcode == FitnessMachineControlPointRequest.responseOpcode {
            result = .opCodeNotSupported
        } else if let request = try? FitnessMachineControlPointRequest(bytes: bytes) {
            result = handle(request, statuses: &out)
        } else {
            result = .invalidParameter
        }
        let response = FitnessMachineControlPointResponse(requestOpcode: opcode, result: result)
        return .accepted([EmulatedOutput(.fitnessMachineControlPoint, response.bytes, .indicate)] + out)
    }

    private mutating func handle(_ request: FitnessMachineControlPointRequest, statuses out: inout [EmulatedOutput]) -> FTMSResultCode {
        var statuses: [FitnessMachineStatus] = []
        var training: TrainingStatus.Code?
        let result = apply(request, statuses: &statuses, training: &training)
        out += statuses.map { EmulatedOutput(.fitnessMachineStatus, $0.bytes) }
        if let training, trainingStatus.status != training {
            trainingStatus = TrainingStatus(status: training)
            out.append(EmulatedOutput(.trainingStatus, trainingStatus.bytes))
        }
        return result
    }

    private mutating func apply(
        _ request: FitnessMachineControlPointRequest, statuses: inout [FitnessMachineStatus], training: inout TrainingStatus.Code?
    ) -> FTMSResultCode {
        switch request {
        case .requestControl, .reset, .setTargetInclination, .setTargetResistanceLevel, .setTargetResistanceLevelWide,
            .setTargetPower, .startOrResume, .stopOrPause, .setIndoorBikeSimulation, .setWheelCircumference:
            break
        default:
            return .opCodeNotSupported
        }
        if request == .requestControl {
            hasControl = true
            return .success
        }
        guard hasControl else { return .controlNotPermitted }
        switch request {
        case .reset:
            engine.resetTargets()
            engine.isPedalling = true
            resistanceTenths = 0
            hasControl = false
            statuses.append(.reset)
            training = .idle
        case let .setTargetInclination(tenths):
            guard tenths >= Self.inclinationRange.minimumTenthPercent, tenths <= Self.inclinationRange.maximumTenthPercent else {
                return .invalidParameter
            }
            engine.road.gradePercent = Double(tenths) / 10
            engine.mode = .simulation
            statuses.append(.targetInclineChanged(tenthPercent: tenths))
            training = .manualMode
        case let .setTargetResistanceLevel(tenths):
            return setResistance(Int16(tenths), statuses: &statuses, training: &training)
        case let .setTargetResistanceLevelWide(tenths):
            return setResistance(tenths, statuses: &statuses, training: &training)
        case let .setTargetPower(watts):
            guard watts >= Self.powerRange.minimumWatts, watts <= Self.powerRange.maximumWatts else { return .invalidParameter }
            engine.mode = .targetPower(watts: Double(watts))
            statuses.append(.targetPowerChanged(watts: watts))
            training = .wattControl
        case .startOrResume:
            engine.isPedalling = true
            statuses.append(.startedOrResumedByUser)
            training = .manualMode
        case let .stopOrPause(control):
            guard control == .stop || control == .pause else { return .invalidParameter }
            engine.isPedalling = false
            statuses.append(.stoppedOrPausedByUser(control: control))
            training = control == .stop ? .postWorkout : .idle
        case let .setIndoorBikeSimulation(p):
            engine.road = RoadConditions(
                gradePercent: p.gradePercent, rollingResistance: p.rollingResistanceCoefficient,
                windResistanceKgPerMeter: p.windResistanceKgPerMeter, windSpeedMetersPerSecond: p.windSpeedMetersPerSecond)
            engine.mode = .simulation
            statuses.append(.indoorBikeSimulationParametersChanged(parameters: p))
            training = .manualMode
        case let .setWheelCircumference(tenthMillimeters):
            guard tenthMillimeters > 0 else { return .invalidParameter }
            wheelCircumferenceTenthMillimeters = tenthMillimeters
            statuses.append(.wheelCircumferenceChanged(tenthMillimeters: tenthMillimeters))
        default:
            return .opCodeNotSupported
        }
        return .success
    }

    private mutating func setResistance(
        _ tenths: Int16, statuses: inout [FitnessMachineStatus], training: inout TrainingStatus.Code?
    ) -> FTMSResultCode {
        guard tenths >= Self.resistanceRange.minimumRaw, tenths <= Self.resistanceRange.maximumRaw else { return .invalidParameter }
        resistanceTenths = tenths
        engine.mode = .resistance(fraction: Double(tenths) / Double(Self.resistanceRange.maximumRaw))
        statuses.append(.targetResistanceLevelChanged(tenths: tenths))
        training = .manualMode
        return .success
    }

    public mutating func tick(now: Double) -> [EmulatedOutput] {
        engine.advance(to: now)
        var out: [EmulatedOutput] = []
        if nextNotification == nil { nextNotification = now + 1 }
        while let due = nextNotification, now >= due {
            nextNotification = due + 1
            out.append(EmulatedOutput(.indoorBikeData, indoorBikeData.bytes))
        }
        return out
    }
}
