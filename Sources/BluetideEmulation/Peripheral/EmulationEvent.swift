import Bluetide
import BluetideBase

/// Something that happened on an emulated peripheral, for logs and the command line.
public enum EmulationEvent: Sendable, Hashable, CustomStringConvertible {
    /// A central connected (HCI connection handle, its address).
    case connected(connection: UInt16, peer: BluetoothAddress)
    /// The link closed with this reason.
    case disconnected(connection: UInt16, reason: DisconnectReason)
    /// A central wrote `value` to `characteristic` of device `device`; `attError` is the code the
    /// model refused it with, nil when accepted.
    case wrote(connection: UInt16, device: String, characteristic: BluetoothUUID, value: [UInt8], attError: UInt8?)
    /// A central changed its subscription (CCCD bits: 1 notify, 2 indicate, 0 none).
    case subscribed(connection: UInt16, device: String, characteristic: BluetoothUUID, configuration: UInt16)
    /// Advertising could not be (re)started.
    case advertisingFailed(String)

    /// One readable line, e.g. `write 0x0040 heart-rate 2A39: 02 → refused 0x80`.
    public var description: String {
        switch self {
        case let .connected(c, peer): return "connected \(Self.hex(c)) from \(peer)"
        case let .disconnected(c, reason): return "disconnected \(Self.hex(c)): \(reason)"
        case let .wrote(c, device, characteristic, value, error):
            let outcome = error.map { " → refused with ATT error 0x\(String($0, radix: 16, uppercase: true))" } ?? ""
            return "write \(Self.hex(c)) \(device) \(characteristic): \(value.spacedHex)\(outcome)"
        case let .subscribed(c, device, characteristic, configuration):
            let what = configuration & 2 != 0 ? "indications" : configuration & 1 != 0 ? "notifications" : "nothing"
            return "subscribe \(Self.hex(c)) \(device) \(characteristic): \(what)"
        case let .advertisingFailed(message): return "advertising failed: \(message)"
        }
    }

    /// A flat JSON-ready dictionary of strings, for `--json` output.
    public var fields: [String: String] {
        switch self {
        case let .connected(c, peer): return ["event": "connected", "connection": Self.hex(c), "peer": "\(peer)"]
        case let .disconnected(c, reason):
            return ["event": "disconnected", "connection": Self.hex(c), "reason": "\(reason)"]
        case let .wrote(c, device, characteristic, value, error):
            var f = ["event": "write", "connection": Self.hex(c), "device": device, "characteristic": characteristic.shortString,
                     "value": value.hexString]
            if let error { f["att_error"] = "0x" + String(error, radix: 16, uppercase: true) }
            return f
        case let .subscribed(c, device, characteristic, configuration):
            return ["event": "subscribe", "connection": Self.hex(c), "device": device,
                    "characteristic": characteristic.shortString, "configuration": String(configuration)]
        case let .advertisingFailed(message): return ["event": "advertising_failed", "message": message]
        }
    }

    private static func hex(_ handle: UInt16) -> String { "0x" + String(handle, radix: 16, uppercase: true) }
}
