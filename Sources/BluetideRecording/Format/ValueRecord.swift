import BluetideBase

/// What happened to a characteristic value: how it travelled between the device and us.
public enum ValueOperation: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The device notified the value (no acknowledgement).
    case notify
    /// The device indicated the value (acknowledged by the client).
    case indicate
    /// We read the value.
    case read
    /// We wrote the value with a Write Request (acknowledged).
    case write
    /// We wrote the value with a Write Command (no response).
    case writeWithoutResponse = "write_without_response"

    /// The name written in value logs, e.g. `write_without_response`.
    public var description: String { rawValue }

    /// Whether the value came from the device (notify, indicate, read) rather than from us.
    public var isFromDevice: Bool {
        switch self {
        case .notify, .indicate, .read: return true
        case .write, .writeWithoutResponse: return false
        }
    }
}

/// Which device a value belongs to.
public struct DeviceIdentity: Sendable, Hashable, CustomStringConvertible {
    /// The device's address as text, e.g. `C6:C5:C4:C3:C2:C1`, or another stable identifier
    /// when no address is known (a platform UUID, a virtual device's name). Never empty.
    public var address: String
    /// The advertised or GAP name, when known, e.g. `KICKR CORE 1234`.
    public var name: String?

    /// A device known by an address string (or another stable identifier) and maybe a name.
    public init(address: String, name: String? = nil) {
        self.address = address
        self.name = name
    }

    /// A device known by its Bluetooth address (written as `C6:C5:C4:C3:C2:C1`).
    public init(_ address: BluetoothAddress, name: String? = nil) {
        self.init(address: address.string, name: name)
    }

    /// `KICKR (C6:C5:C4:C3:C2:C1)`, or the address alone.
    public var description: String {
        if let name { return "\(name) (\(address))" }
        return address
    }

    /// Whether `text` names this device: its address (case-insensitive, with or without the
    /// `/R` or `/P` that says its type) or its name (exact).
    public func matches(_ text: String) -> Bool {
        Self.bare(address) == Self.bare(text) || name == text
    }

    /// `c6:c5:c4:c3:c2:c1/r` → `C6:C5:C4:C3:C2:C1`.
    private static func bare(_ text: String) -> String {
        let upper = text.uppercased()
        return upper.hasSuffix("/R") || upper.hasSuffix("/P") ? String(upper.dropLast(2)) : upper
    }
}

/// One characteristic value seen during a recording: a notification or indication received, a
/// value read, or a value written. One line of a value log (see docs/value-log-format.md).
public struct ValueRecord: Sendable, Hashable {
    /// Seconds since the recording started, on the recorder's monotonic clock (never goes back,
    /// unaffected by wall-clock changes). Pacing and derived rates (speed, cadence) use this.
    public var timestamp: Double
    /// Wall-clock time of the event, when the recorder wrote it (for people, not for pacing).
    public var wallClock: WallClockTime?
    /// The device the value came from or went to.
    public var device: DeviceIdentity
    /// The service holding the characteristic, when known.
    public var service: BluetoothUUID?
    /// The characteristic whose value this is.
    public var characteristic: BluetoothUUID
    /// How the value travelled.
    public var operation: ValueOperation
    /// The value's bytes exactly as carried by ATT (hex in the log).
    public var value: [UInt8]
    /// Name of the ``BluetideProfiles/ProfileCatalog`` profile the recorder decoded it with,
    /// e.g. `csc`; replays prefer it over a lookup by characteristic.
    public var profile: String?

    /// A record; see the properties for units.
    public init(
        timestamp: Double, wallClock: WallClockTime? = nil, device: DeviceIdentity, service: BluetoothUUID? = nil,
        characteristic: BluetoothUUID, operation: ValueOperation, value: [UInt8], profile: String? = nil
    ) {
        self.timestamp = timestamp
        self.wallClock = wallClock
        self.device = device
        self.service = service
        self.characteristic = characteristic
        self.operation = operation
        self.value = value
        self.profile = profile
    }
}
