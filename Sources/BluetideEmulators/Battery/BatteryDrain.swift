import BluetideCore
import BluetideProfiles

/// A battery that drains one percent every `secondsPerPercent` and notifies Battery Level (0x2A19)
/// on each change; it jumps back to 100 % after reaching 0 (someone charged it) so a long run
/// keeps producing values. Used by the battery model and embedded in other models.
public struct BatteryDrain: Hashable, Sendable {
    /// Current level, percent.
    public private(set) var percent: UInt8
    /// Seconds per percent.
    public var secondsPerPercent: Double
    private var accumulated: Double = 0
    private var lastTime: Double?

    /// Memberwise initialiser.
    public init(percent: UInt8 = 100, secondsPerPercent: Double = 120) {
        self.percent = min(percent, 100)
        self.secondsPerPercent = max(secondsPerPercent, 0.001)
    }

    /// The Battery service with its level characteristic (read + notify).
    public var service: EmulatedService {
        EmulatedService(.battery, [
            EmulatedCharacteristic(.batteryLevel, [.read, .notify], initialValue: BatteryLevel(percent: percent).bytes)
        ])
    }

    /// The encoded level.
    public var value: [UInt8] { BatteryLevel(percent: percent).bytes }

    /// Advances to `now`; returns a notification when the level changed.
    public mutating func tick(now: Double) -> [EmulatedOutput] {
        guard let last = lastTime else {
            lastTime = now
            return []
        }
        guard now > last else { return [] }
        lastTime = now
        accumulated += now - last
        var changed = false
        while accumulated >= secondsPerPercent {
            accumulated -= secondsPerPercent
            percent = percent == 0 ? 100 : percent - 1
            changed = true
        }
        return changed ? [EmulatedOutput(.batteryLevel, value)] : []
    }
}

/// `battery`: a Battery service whose level drains slowly and is notified on change.
public struct BatteryModel: DeviceModel {
    /// Catalog name.
    public let name = "battery"
    /// The battery.
    public var battery: BatteryDrain
    private let localName: String

    /// Builds the model: `seed` fixes its randomness, `options` its rider and device settings.
    public init(seed: UInt64 = 0, options: EmulatorOptions = EmulatorOptions()) {
        battery = BatteryDrain(percent: options.batteryPercent, secondsPerPercent: options.batterySecondsPerPercent)
        localName = options.localName ?? "Bluetide Battery"
    }

    public var advertising: AdvertisingHints { AdvertisingHints(localName: localName, serviceUUIDs: [.battery]) }
    public var services: [EmulatedService] { [battery.service] }
    public var tickInterval: Double { 1 }

    public func read(_ characteristic: BluetoothUUID, now: Double) -> [UInt8]? {
        characteristic == .batteryLevel ? battery.value : nil
    }

    public mutating func write(_ characteristic: BluetoothUUID, _ bytes: [UInt8], now: Double) -> WriteOutcome {
        .rejected(attError: EmulatedATTError.writeNotPermitted)
    }

    public mutating func tick(now: Double) -> [EmulatedOutput] { battery.tick(now: now) }
}
