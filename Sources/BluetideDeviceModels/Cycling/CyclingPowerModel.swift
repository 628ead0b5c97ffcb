import BluetideBase
import BluetideProfiles

/// `cycling-power`: a hub power meter under a rider producing about the configured power (small
/// pedal-stroke noise), at the configured cadence, on a flat road: speed follows the power
/// through ``RiderPhysics``. CP Measurement at 1 Hz carries instantaneous power, wheel data
/// (uint32 count, event time 1/2048 s), crank data (uint16, 1/1024 s) and accumulated energy;
/// CP Feature, Sensor Location (rear hub), CP Control Point (set cumulative value) and a
/// Battery service and Device Information (0x180A).
public struct CyclingPowerModel: DeviceModel {
    /// Catalog name.
    public let name = "cycling-power"
    private var random: SeededGenerator
    private let localName: String
    /// Average power the rider produces, watts (may be changed while running).
    public var targetPowerWatts: Double
    /// Cadence, rpm (may be changed while running).
    public var cadenceRPM: Double
    /// Wheel circumference, metres.
    public let wheelCircumferenceMeters: Double
    /// The bike on the road.
    public private(set) var physics: RiderPhysics
    /// Wheel counter, 1/2048 s event times.
    public private(set) var wheel = RevolutionCounter(ticksPerSecond: 2048)
    /// Crank counter, 1/1024 s event times.
    public private(set) var crank = RevolutionCounter(ticksPerSecond: 1024)
    /// Power in the last notification, watts.
    public private(set) var instantaneousPowerWatts: Double
    /// Energy since start, joules.
    public private(set) var energyJoules: Double = 0
    /// The battery.
    public var battery: BatteryDrain
    /// Device Information (0x180A): manufacturer, model, serial and revisions.
    public let deviceInformation: EmulatedDeviceInformation
    private var lastTime: Double?
    private var nextNotification: Double?

    /// Features this meter reports.
    public static let feature: CyclingPowerFeature = [.wheelRevolutionData, .crankRevolutionData, .accumulatedEnergy]

    /// Builds the model: `seed` fixes its randomness, `options` its rider and device settings.
    public init(seed: UInt64 = 0, options: EmulatorOptions = EmulatorOptions()) {
        random = SeededGenerator(seed: seed)
        localName = options.localName ?? "Bluetide Power"
        targetPowerWatts = options.powerWatts
        cadenceRPM = options.cadenceRPM
        wheelCircumferenceMeters = options.wheelCircumferenceMeters
        physics = RiderPhysics(massKilograms: options.riderMassKilograms)
        physics.settle(watts: options.powerWatts)
        instantaneousPowerWatts = options.powerWatts
        battery = BatteryDrain(percent: options.batteryPercent, secondsPerPercent: options.batterySecondsPerPercent)
        deviceInformation = EmulatedDeviceInformation(
            manufacturerName: "Bluetide", modelNumber: "Power Meter", serialNumber: EmulatedDeviceInformation.serialNumber(seed: seed))
    }

    public var advertising: AdvertisingHints {
        AdvertisingHints(localName: localName, serviceUUIDs: [.cyclingPower], appearance: 0x0484)
    }

    public var services: [EmulatedService] {
        [
            EmulatedService(.cyclingPower, [
                EmulatedCharacteristic(.cyclingPowerMeasurement, [.notify]),
                EmulatedCharacteristic(.cyclingPowerFeature, [.read], initialValue: Self.feature.bytes),
                EmulatedCharacteristic(.sensorLocation, [.read], initialValue: SensorLocation.rearHub.bytes),
                EmulatedCharacteristic(.cyclingPowerControlPoint, [.write, .indicate]),
            ]),
            battery.service,
            deviceInformation.service,
        ]
    }

    public var tickInterval: Double { 0.1 }

    /// The measurement for the current state.
    public var measurement: CyclingPowerMeasurement {
        CyclingPowerMeasurement(
            instantaneousPowerWatts: Int16(clamping: Int(instantaneousPowerWatts.rounded())),
            wheel: WheelRevolutionData(
                cumulativeRevolutions: UInt32(truncatingIfNeeded: wheel.revolutions), lastEventTimeTicks: wheel.lastEventTicks),
            crank: CrankRevolutionData(
                cumulativeRevolutions: UInt16(truncatingIfNeeded: crank.revolutions), lastEventTimeTicks: crank.lastEventTicks),
            accumulatedEnergyKilojoules: UInt16(truncatingIfNeeded: Int((energyJoules / 1000 + 1e-6).rounded(.down))))
    }

    public func read(_ characteristic: BluetoothUUID, now: Double) -> [UInt8]? {
        switch characteristic {
        case .cyclingPowerFeature: return Self.feature.bytes
        case .sensorLocation: return SensorLocation.rearHub.bytes
        case .batteryLevel: return battery.value
        default: return deviceInformation.read(characteristic)
        }
    }

    public mutating func write(_ characteristic: BluetoothUUID, _ bytes: [UInt8], now: Double) -> WriteOutcome {
        guard characteristic == .cyclingPowerControlPoint else {
            return .rejected(attError: EmulatedATTError.writeNotPermitted)
        }
        guard let opCode = bytes.first else { return .rejected(attError: EmulatedATTError.invalidAttributeValueLength) }
        let response: CyclingPowerControlPointResponse
        if let request = try? CyclingPowerControlPointRequest(bytes: bytes) {
            if case let .setCumulativeValue(value) = request {
                advance(to: now)
                wheel.setRevolutions(UInt64(value))
                response = CyclingPowerControlPointResponse(requestOpCode: opCode, result: .success)
            } else {
                response = CyclingPowerControlPointResponse(requestOpCode: opCode, result: .opCodeNotSupported)
            }
        } else {
            response = CyclingPowerControlPointResponse(requestOpCode: opCode, result: .invalidParameter)
        }
        return .accepted([EmulatedOutput(.cyclingPowerControlPoint, response.bytes, .indicate)])
    }

    public mutating func tick(now: Double) -> [EmulatedOutput] {
        var out = battery.tick(now: now)
        advance(to: now)
        if nextNotification == nil { nextNotification = now + 1 }
        while let due = nextNotification, now >= due {
            nextNotification = due + 1
            instantaneousPowerWatts = max(0, random.normal(mean: targetPowerWatts, standardDeviation: targetPowerWatts * 0.03))
            out.append(EmulatedOutput(.cyclingPowerMeasurement, measurement.bytes))
        }
        return out
    }

    private mutating func advance(to now: Double) {
        if let last = lastTime {
            guard now > last else { return }
            physics.advance(seconds: now - last, watts: targetPowerWatts)
            energyJoules += targetPowerWatts * (now - last)
        }
        lastTime = now
        wheel.advance(to: now, revolutionsPerSecond: physics.speedMetersPerSecond / wheelCircumferenceMeters)
        crank.advance(to: now, revolutionsPerSecond: targetPowerWatts > 0 ? cadenceRPM / 60 : 0)
    }
}
