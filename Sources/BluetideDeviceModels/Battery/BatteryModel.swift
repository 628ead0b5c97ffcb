import BluetideBase
import BluetideProfiles

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
