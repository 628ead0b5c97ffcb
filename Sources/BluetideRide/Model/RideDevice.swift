import BluetideBase
import BluetideProfiles

/// What a device contributes to a ride, which decides how its values are decoded and which
/// metrics it may give.
public enum RideDeviceRole: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// A smart trainer speaking the Fitness Machine Service (Indoor Bike Data, control point).
    case ftmsTrainer = "ftms-trainer"
    /// A Tacx trainer speaking ANT+ FE-C pages over BLE (`6E40FEC1-…`).
    case fecTrainer = "fec-trainer"
    /// A Cycling Speed and Cadence sensor (wheel and/or crank revolutions).
    case speedCadence = "speed-cadence"
    /// A Cycling Power meter (power, maybe wheel and crank revolutions).
    case power
    /// A heart-rate strap.
    case heartRate = "heart-rate"

    /// The characteristic whose notifications carry this role's data.
    public var dataCharacteristic: BluetoothUUID {
        switch self {
        case .ftmsTrainer: .indoorBikeData
        case .fecTrainer: .tacxFECNotify
        case .speedCadence: .cscMeasurement
        case .power: .cyclingPowerMeasurement
        case .heartRate: .heartRateMeasurement
        }
    }

    /// The service a device of this role advertises and serves.
    public var service: BluetoothUUID {
        switch self {
        case .ftmsTrainer: .fitnessMachine
        case .fecTrainer: .tacxFECService
        case .speedCadence: .cyclingSpeedAndCadence
        case .power: .cyclingPower
        case .heartRate: .heartRate
        }
    }

    /// The role whose data `characteristic` carries (how a recording is read back).
    public static func carrying(_ characteristic: BluetoothUUID) -> RideDeviceRole? {
        allCases.first { $0.dataCharacteristic == characteristic }
    }

    /// Whether the role is a controllable trainer.
    public var isTrainer: Bool { self == .ftmsTrainer || self == .fecTrainer }

    /// The role's name, e.g. `fec-trainer`.
    public var description: String { rawValue }
}

/// One device of a ride: its role, and how it is known (address text and name).
public struct RideDevice: Sendable, Hashable, Codable, CustomStringConvertible {
    /// What the device gives.
    public var role: RideDeviceRole
    /// Its address as text (`C6:C5:C4:C3:C2:C1`) or another stable identifier.
    public var address: String
    /// Its advertised name, when known.
    public var name: String?

    /// A device with these parts.
    public init(role: RideDeviceRole, address: String, name: String? = nil) {
        self.role = role
        self.address = address
        self.name = name
    }

    /// The name when known, else the address.
    public var label: String { name ?? address }
    /// `Tacx Neo 123 (fec-trainer)`.
    public var description: String { "\(label) (\(role))" }
}

/// One value received from a ride's device: the raw bytes of a notification, with the time it
/// arrived (seconds since the ride started, monotonic). What live connections and replays both
/// produce, and what a ride records.
public struct RideReading: Sendable, Hashable {
    /// Seconds since the ride started.
    public var time: Double
    /// The device that sent it.
    public var device: RideDevice
    /// The characteristic it was notified on.
    public var characteristic: BluetoothUUID
    /// The value's bytes as carried by ATT.
    public var bytes: [UInt8]

    /// A reading with these parts.
    public init(time: Double, device: RideDevice, characteristic: BluetoothUUID, bytes: [UInt8]) {
        self.time = time
        self.device = device
        self.characteristic = characteristic
        self.bytes = bytes
    }
}

/// What a ride's data source tells the session, in order.
public enum RideEvent: Sendable, Hashable {
    /// A device sent a value.
    case reading(RideReading)
    /// A device's link went down (`connected` false) or came back (true) at `time`; while down
    /// its values are missing from the samples.
    case link(device: RideDevice, connected: Bool, time: Double)
    /// A whole second of ride time passed (the once-a-second sample).
    case tick(time: Double)
    /// The trainer was asked for `target` (nil: free riding) at `time`: what a recording keeps
    /// of the ride's targets, so its samples carry them again.
    case target(RideTarget?, time: Double)
}
