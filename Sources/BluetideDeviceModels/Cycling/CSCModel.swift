import BluetideBase
import BluetideProfiles

/// `csc`: a speed and cadence sensor on a bike ridden at a set speed and cadence. Wheel and crank
/// counters advance by whole revolutions at the real revolution timing, and each event time is
/// the instant of the last revolution in 1/1024 s, wrapping every 64 s (never the time of the
/// notification). Notifies CSC Measurement at 1 Hz; CSC Feature (wheel + crank), Sensor
/// Location (rear wheel), SC Control Point (set cumulative value, answered by indication) and
/// a Battery service and Device
/// Information (0x180A).
public struct CSCModel: DeviceModel {
    /// Catalog name.
    public let name = "csc"
    private let localName: String
    /// Speed the rider holds, km/h (may be changed while running).
    public var speedKilometresPerHour: Double
    /// Cadence the rider holds, rpm (may be changed while running).
    public var cadenceRPM: Double
    /// Wheel circumference, metres.
    public let wheelCircumferenceMeters: Double
    /// The wheel counter (1/1024 s).
    public private(set) var wheel = RevolutionCounter(ticksPerSecond: 1024)
    /// The crank counter (1/1024 s).
    public private(set) var crank = RevolutionCounter(ticksPerSecond: 1024)
    /// The battery.
    public var battery: BatteryDrain
    /// Device Information (0x180A): manufacturer, model, serial and revisions.
    public let deviceInformation: EmulatedDeviceInformation
    private var nextNotification: Double?

    /// Builds the model: `seed` fixes its randomness, `options` its rider and device settings.
    public init(seed: UInt64 = 0, options: EmulatorOptions = EmulatorOptions()) {
        localName = options.localName ?? "Bluetide CSC"
        speedKilometresPerHour = options.speedKilometresPerHour
        cadenceRPM = options.cadenceRPM
        wheelCircumferenceMeters = options.wheelCircumferenceMeters
        battery = BatteryDrain(percent: options.batteryPercent, secondsPerPercent: options.batterySecondsPerPercent)
        deviceInformation = EmulatedDeviceInformation(
            manufacturerName: "Bluetide", modelNumber: "Speed/Cadence Sensor", serialNumber: EmulatedDeviceInformation.serialNumber(seed: seed))
    }

    /// Features this sensor reports.
    public static let feature: CSCFeature = [.wheelRevolutionData, .crankRevolutionData]

    public var advertising: AdvertisingHints {
        AdvertisingHints(localName: localName, serviceUUIDs: [.cyclingSpeedAndCadence], appearance: 0x0485)
    }

    public var services: [EmulatedService] {
        [
            EmulatedService(.cyclingSpeedAndCadence, [
                EmulatedCharacteristic(.cscMeasurement, [.notify]),
                EmulatedCharacteristic(.cscFeature, [.read], initialValue: Self.feature.bytes),
                EmulatedCharacteristic(.sensorLocation, [.read], initialValue: SensorLocation.rearWheel.bytes),
                EmulatedCharacteristic(.scControlPoint, [.write, .indicate]),
            ]),
            battery.service,
            deviceInformation.service,
        ]
    }

    public var tickInterval: Double { 0.1 }

    /// The measurement for the current counters.
    public var measurement: CSCMeasurement {
        CSCMeasurement(
            wheel: WheelRevolutionData(
                cumulativeRevolutions: UInt32(truncatingIfNeeded: wheel.revolutions), lastEventTimeTicks: wheel.lastEventTicks),
            crank: CrankRevolutionData(
                cumulativeRevolutions: UInt16(truncatingIfNeeded: crank.revolutions), lastEventTimeTicks: crank.lastEventTicks))
    }

    public func read(_ characteristic: BluetoothUUID, now: Double) -> [UInt8]? {
        switch characteristic {
        case .cscFeature: return Self.feature.bytes
        case .sensorLocation: return SensorLocation.rearWheel.bytes
        case .batteryLevel: return battery.value
        default: return deviceInformation.read(characteristic)
        }
    }

    public mutating func write(_ characteristic: BluetoothUUID, _ bytes: [UInt8], now: Double) -> WriteOutcome {
        guard characteristic == .scControlPoint else { return .rejected(attError: EmulatedATTError.writeNotPermitted) }
        guard let opCode = bytes.first else { return .rejected(attError: EmulatedATTError.invalidAttributeValueLength) }
        let response: SCControlPointResponse
        if let request = try? SCControlPointRequest(bytes: bytes) {
            switch request {
            case let .setCumulativeValue(value):
                advance(to: now)
                wheel.setRevolutions(UInt64(value))
                response = SCControlPointResponse(requestOpCode: opCode, result: .success)
            default:
                response = SCControlPointResponse(requestOpCode: opCode, result: .opCodeNotSupported)
            }
        } else {
            response = SCControlPointResponse(requestOpCode: opCode, result: .invalidParameter)
        }
        return .accepted([EmulatedOutput(.scControlPoint, response.bytes, .indicate)])
    }

    public mutating func tick(now: Double) -> [EmulatedOutput] {
        var out = battery.tick(now: now)
        advance(to: now)
        if nextNotification == nil { nextNotification = now + 1 }
        while let due = nextNotification, now >= due {
            nextNotification = due + 1
            out.append(EmulatedOutput(.cscMeasurement, measurement.bytes))
        }
        return out
    }

    private mutating func advance(to now: Double) {
        wheel.advance(to: now, revolutionsPerSecond: speedKilometresPerHour / 3.6 / wheelCircumferenceMeters)
        crank.advance(to: now, revolutionsPerSecond: cadenceRPM / 60)
    }
}
