import BluetideBase

/// A device a ride asks for: what it is for, and which one (a name or address, or nil to take
/// the first device advertising the right service).
public struct RideDeviceRequest: Sendable, Hashable, CustomStringConvertible {
    /// What the device is for.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// A smart trainer (FTMS, or Tacx FE-C over BLE; found by service).
        case trainer
        /// A power meter (Cycling Power).
        case power
        /// A speed and/or cadence sensor (CSC).
        case speedCadence = "speed-cadence"
        /// A heart-rate strap.
        case heartRate = "heart-rate"

        /// The services that identify such a device, preferred first.
        public var services: [BluetoothUUID] {
            switch self {
            case .trainer: [.fitnessMachine, .tacxFECService]
            case .power: [.cyclingPower]
            case .speedCadence: [.cyclingSpeedAndCadence]
            case .heartRate: [.heartRate]
            }
        }
    }

    /// What the device is for.
    public var kind: Kind
    /// Its advertised name or address (`C6:C5:C4:C3:C2:C1`, `/R` or `/P` to skip the scan);
    /// nil: the first device advertising ``Kind/services``.
    public var device: String?
    /// Whether the ride goes on without it (automatic discovery takes what it finds).
    public var isOptional: Bool

    /// A request; an optional one that is not found is left out instead of failing the ride.
    public init(_ kind: Kind, device: String? = nil, optional: Bool = false) {
        self.kind = kind
        self.device = device
        isOptional = optional
    }

    /// `trainer "Tacx Neo"` or `any heart-rate`.
    public var description: String { device.map { "\(kind.rawValue) \"\($0)\"" } ?? "any \(kind.rawValue)" }
}
