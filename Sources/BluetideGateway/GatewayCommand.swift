import BluetideBase
import BluetideProfiles
import Foundation

/// A command received on `<prefix>/<device>/set/<what>` (docs/gateway.md), checked before it
/// reaches the device.
public enum GatewayCommand: Sendable, Equatable {
    /// `set/write`, payload `UUID HEX`: a characteristic write with response.
    case write(BluetoothUUID, [UInt8])
    /// `set/read`, payload `UUID`: read once and publish the value.
    case read(BluetoothUUID)
    /// `set/target-power`, payload watts (0…4000): ERG on an FTMS or FE-C trainer.
    case targetPower(Int)
    /// `set/grade`, payload percent (−40…40): simulation on a trainer.
    case grade(Double)
    /// `set/uart`, payload text: one line to a Nordic UART or HM-10 device (a newline is added).
    case uart(String)
    /// `set/find`, any payload: a COLMI ring vibrates.
    case find

    /// The names `set/<what>` accepts.
    public static let names = ["write", "read", "target-power", "grade", "uart", "find"]

    /// The command's name as in its topic.
    public var name: String {
        switch self {
        case .write: "write"
        case .read: "read"
        case .targetPower: "target-power"
        case .grade: "grade"
        case .uart: "uart"
        case .find: "find"
        }
    }

    /// Parses `what` and its payload; throws one line naming what was wrong and what to send.
    public static func parse(_ what: String, payload: String) throws(GatewayError) -> GatewayCommand {
        let text = payload.trimmingCharacters(in: .whitespacesAndNewlines)
        switch what {
        case "write":
            let parts = text.split(separator: " ", maxSplits: 1).map(String.init)
            guard parts.count == 2, let uuid = try? BluetoothUUID(parts[0]) else {
                throw GatewayError(field: "set/write", "\"\(text)\": expected UUID HEX, e.g. 2A39 01")
            }
            let hex = parts[1].replacingOccurrences(of: " ", with: "")
            guard hex.count % 2 == 0, !hex.isEmpty, hex.allSatisfy(\.isHexDigit), hex.count <= 1024 else {
                throw GatewayError(field: "set/write", "\"\(parts[1])\" is not hex bytes (1…512); expected e.g. 0102ff")
            }
            var bytes: [UInt8] = []
            var index = hex.startIndex
            while index < hex.endIndex {
                let next = hex.index(index, offsetBy: 2)
                bytes.append(UInt8(hex[index..<next], radix: 16)!)
                index = next
            }
            return .write(uuid, bytes)
        case "read":
            guard let uuid = try? BluetoothUUID(text) else { throw GatewayError(field: "set/read", "\"\(text)\": expected a characteristic UUID, e.g. 2A19") }
            return .read(uuid)
        case "target-power":
            guard let watts = Int(text) else { throw GatewayError(field: "set/target-power", "\"\(text)\": expected whole watts, e.g. 200") }
            guard (0...4000).contains(watts) else { throw GatewayError(field: "set/target-power", "\(watts) W out of range; expected 0…4000") }
            return .targetPower(watts)
        case "grade":
            guard let percent = Double(text), percent.isFinite else { throw GatewayError(field: "set/grade", "\"\(text)\": expected a grade in percent, e.g. 4.5") }
            guard (-40...40).contains(percent) else { throw GatewayError(field: "set/grade", "\(text) % out of range; expected −40…40") }
            return .grade(percent)
        case "uart":
            guard !payload.isEmpty, payload.utf8.count <= 4096 else { throw GatewayError(field: "set/uart", "expected 1…4096 bytes of text") }
            return .uart(payload)
        case "find":
            return .find
        default:
            throw GatewayError(field: "set/\(what)", "unknown command; expected one of \(names.joined(separator: ", "))")
        }
    }
}
