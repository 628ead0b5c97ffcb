import BluetideBase
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import BluetideProfiles

/// `heart-rate`: a chest strap. Heart rate drifts between 60 and 180 bpm towards targets that
/// change every minute or so; beats happen in real time at that rate and each notification
/// (1 Hz) carries the RR intervals of the beats since the previous one, so the intervals agree
/// with the rate. Sensor contact is detected; energy expended rides along on every 10th
/// notification. Also: Body Sensor Location (chest), Heart Rate Control Point (reset energy
/// expended; anything else is refused with ATT 0x80) a draining Battery service and
/// Device Information (0x180A).
public struct HeartRateModel: DeviceModel {
    /// Catalog name.
    public let name = "heart-rate"
    private var random: SeededGenerator
    private let localName: String
    /// The battery.
    public var battery: BatteryDrain
    /// Device Information (0x180A): manufacturer, model, serial and revisions.
    public let deviceInformation: EmulatedDeviceInformation
    /// Current heart rate, bpm (continuous).
    public private(set) var beatsPerMinute: Double
    private var targetBPM: Double
    private var nextTargetChange: Double = 0
    private var beatPhase: Double = 0
    private var lastBeatTime: Double?
    private var pendingRR: [UInt16] = []
    /// Energy expended since the last reset, kJ (saturates at 0xFFFF on the wire).
    public private(set) var energyKilojoules: Double = 0
    private var notificationCount = 0
    private var nextNotification: Double?
    private var lastTime: Double?
    /// The most recent measurement sent.
    public private(set) var lastMeasurement = HeartRateMeasurement(beatsPerMinute: 70, sensorContact: .detected)

    /// Builds the model: `seed` fixes its randomness, `options` its rider and device settings.
    public init(seed: UInt64 = 0, options: EmulatorOptions = EmulatorOptions()) {
        random = SeededGenerator(seed: seed)
        localName = options.localName ?? "Bluetide HRM"
        battery = BatteryDrain(percent: options.batteryPercent, secondsPerPercent: options.batterySecondsPerPercent)
        deviceInformation = EmulatedDeviceInformation(
            manufacturerName: "Bluetide", modelNumber: "HRM", serialNumber: EmulatedDeviceInformation.serialNumber(seed: seed))
        beatsPerMinute = 70
        targetBPM = 70
        notificationInterval = 1 / min(1000, max(0.1, options.heartRateNotificationsPerSecond))
    }

    /// Seconds between two measurements notified (1 s unless `rate` says otherwise).
    public let notificationInterval: Double

    public var advertising: AdvertisingHints {
        AdvertisingHints(localName: localName, serviceUUIDs: [.heartRate, .battery], appearance: 0x0341)
    }

    public var services: [EmulatedService] {
        [
            EmulatedService(.heartRate, [
                EmulatedCharacteristic(.heartRateMeasurement, [.notify]),
                EmulatedCharacteristic(.bodySensorLocation, [.read], initialValue: BodySensorLocation.chest.bytes),
                EmulatedCharacteristic(.heartRateControlPoint, [.write]),
            ]),
            battery.service,
            deviceInformation.service,
        ]
    }

    public var tickInterval: Double { min(0.1, notificationInterval) }

    public func read(_ characteristic: BluetoothUUID, now: Double) -> [UInt8]? {
        switch characteristic {
        case .bodySensorLocation: return BodySensorLocation.chest.bytes
        case .batteryLevel: return battery.value
        default: return deviceInformation.read(characteristic)
        }
    }

    public mutating func write(_ characteristic: BluetoothUUID, _ bytes: [UInt8], now: Double) -> WriteOutcome {
        guard characteristic == .heartRateControlPoint else {
            return .rejected(attError: EmulatedATTError.writeNotPermitted)
        }
        guard let command = try? HeartRateControlPoint(bytes: bytes), command == .resetEnergyExpended else {
            return .rejected(attError: HeartRateControlPoint.controlPointNotSupportedError)
        }
        energyKilojoules = 0
        return .ok
    }

    public mutating func tick(now: Double) -> [EmulatedOutput] {
        var out = battery.tick(now: now)
        advance(to: now)
        if nextNotification == nil { nextNotification = now + notificationInterval }
        while let due = nextNotification, now >= due {
            nextNotification = due + notificationInterval
            out.append(EmulatedOutput(.heartRateMeasurement, makeMeasurement().bytes))
        }
        return out
    }

    private mutating func advance(to now: Double) {
        guard let last = lastTime else {
            lastTime = now
            lastBeatTime = now
            nextTargetChange = now + 30
            return
        }
        guard now > last else { return }
        var t = last
        while t < now {
            let dt = min(0.1, now - t)
            if t >= nextTargetChange {
                // Mostly moderate effort, sometimes rest or a hard interval.
                targetBPM = min(180, max(60, random.normal(mean: 120, standardDeviation: 30)))
                nextTargetChange = t + 45 + random.unit() * 60
            }
            beatsPerMinute += (targetBPM - beatsPerMinute) * (1 - exp(-dt / 20))
            beatsPerMinute = min(180, max(60, beatsPerMinute + random.normal(mean: 0, standardDeviation: 0.05)))
            energyKilojoules += max(4, (beatsPerMinute - 60) * 0.45) / 60 * dt
            let rate = beatsPerMinute / 60
            let total = beatPhase + rate * dt
            if total >= 1 {
                let beatTime = t + (1 - beatPhase) / rate
                if let previous = lastBeatTime {
                    let rr = ((beatTime - previous) * 1024).rounded()
                    pendingRR.append(UInt16(clamping: Int(rr)))
                }
                lastBeatTime = beatTime
            }
            beatPhase = total - total.rounded(.down)
            t += dt
        }
        lastTime = now
    }

    private mutating func makeMeasurement() -> HeartRateMeasurement {
        notificationCount += 1
        // At most 9 RR values fit a 20-byte notification next to the energy field.
        let rr = Array(pendingRR.suffix(8))
        pendingRR = []
        let energy: UInt16? = notificationCount % 10 == 0 ? UInt16(min(energyKilojoules, 65535)) : nil
        let measurement = HeartRateMeasurement(
            beatsPerMinute: UInt16(beatsPerMinute.rounded()), sensorContact: .detected,
            energyExpendedKilojoules: energy, rrIntervals1024: rr)
        lastMeasurement = measurement
        return measurement
    }
}
