import BluetideHCI
import Logging

/// One line per HCI packet at `trace` level (`--log-level trace`): what the host sends (`→`) and
/// receives (`←`), summarised: a command's name, an event's name (a Command Complete with the
/// command it completes and its status), an ACL packet's handle and length and, for ATT (L2CAP
/// channel 4), the ATT operation and its bytes. HCI lines go to `bluetide.hci`, ATT lines to
/// `bluetide.att`. Nothing is formatted unless the level is enabled.
enum PacketTrace {
    /// Whether any line would be printed (checked once per batch).
    static var isEnabled: Bool { HostLog.hci.logLevel <= .trace || HostLog.att.logLevel <= .trace }

    /// Logs `packets`, sent (`outbound`) or received.
    static func log(_ packets: [HCIPacket], outbound: Bool) {
        guard isEnabled else { return }
        let arrow = outbound ? "→" : "←"
        for packet in packets {
            if let att = attSummary(packet) {
                HostLog.att.trace("\(arrow) \(att)")
            } else {
                HostLog.hci.trace("\(arrow) \(summary(packet))")
            }
        }
    }

    /// `command LE Set Scan Enable (0x200C) 0100`, `event Command Complete: Reset (0x0C03) status 0x00`,
    /// `ACL handle 0x0040 27 bytes (L2CAP 0x0006) …`.
    static func summary(_ packet: HCIPacket) -> String {
        switch packet {
        case let .command(opcode, parameters):
            return "HCI command \(HCICommandNames.describe(opcode)) \(parameters.logHex)"
        case let .event(code, parameters):
            return "HCI event \(eventName(code, parameters))"
        case let .acl(handle, boundary, _, data):
            var text = "ACL handle \(hex16(handle)) \(data.count) bytes"
            if boundary.startsPDU, data.count >= 4 {
                text += " (L2CAP channel \(hex16(UInt16(data[2]) | UInt16(data[3]) << 8))) \(Array(data.dropFirst(4)).logHex)"
            } else {
                text += " (continuation) \(data.logHex)"
            }
            return text
        case let .sco(handle, data):
            return "SCO handle \(hex16(handle)) \(data.count) bytes"
        case let .iso(header, data):
            return "ISO \(hex16(header)) \(data.count) bytes"
        }
    }

    /// `ATT handle 0x0040 Read Request (0x0A) 0a0300` for the first fragment of an ATT PDU.
    static func attSummary(_ packet: HCIPacket) -> String? {
        guard case let .acl(handle, boundary, _, data) = packet, boundary.startsPDU, data.count >= 5,
            data[2] == 0x04, data[3] == 0x00
        else { return nil }
        let pdu = Array(data.dropFirst(4))
        let opcode = pdu[0]
        let name = attNames[opcode] ?? "opcode"
        return "ATT handle \(hex16(handle)) \(name) (\(hex8(opcode))) \(pdu.logHex)"
    }

    static func eventName(_ code: UInt8, _ p: [UInt8]) -> String {
        switch code {
        case 0x0E where p.count >= 4:
            let opcode = HCIOpcode(rawValue: UInt16(p[1]) | UInt16(p[2]) << 8)
            return "Command Complete: \(HCICommandNames.describe(opcode)) status \(hex8(p[3]))"
        case 0x0F where p.count >= 4:
            let opcode = HCIOpcode(rawValue: UInt16(p[2]) | UInt16(p[3]) << 8)
            return "Command Status: \(HCICommandNames.describe(opcode)) status \(hex8(p[0]))"
        case 0x13:
            return "Number Of Completed Packets \(p.logHex)"
        case 0x3E where !p.isEmpty:
            return "LE Meta: \(leSubeventNames[p[0]] ?? "subevent \(hex8(p[0]))") \(Array(p.dropFirst()).logHex)"
        default:
            return "\(eventNames[code] ?? "code \(hex8(code))") \(p.logHex)"
        }
    }

    static let eventNames: [UInt8: String] = [
        0x05: "Disconnection Complete", 0x08: "Encryption Change", 0x0C: "Read Remote Version Information Complete",
        0x10: "Hardware Error", 0x1A: "Data Buffer Overflow", 0x30: "Encryption Key Refresh Complete",
    ]

    static let leSubeventNames: [UInt8: String] = [
        0x01: "Connection Complete", 0x02: "Advertising Report", 0x03: "Connection Update Complete",
        0x04: "Read Remote Features Complete", 0x05: "Long Term Key Request", 0x07: "Data Length Change",
        0x08: "Read Local P-256 Public Key Complete", 0x09: "Generate DHKey Complete",
        0x0A: "Enhanced Connection Complete", 0x0C: "PHY Update Complete", 0x0D: "Extended Advertising Report",
    ]

    static let attNames: [UInt8: String] = [
        0x01: "Error Response", 0x02: "Exchange MTU Request", 0x03: "Exchange MTU Response",
        0x04: "Find Information Request", 0x05: "Find Information Response", 0x06: "Find By Type Value Request",
        0x07: "Find By Type Value Response", 0x08: "Read By Type Request", 0x09: "Read By Type Response",
        0x0A: "Read Request", 0x0B: "Read Response", 0x0C: "Read Blob Request", 0x0D: "Read Blob Response",
        0x0E: "Read Multiple Request", 0x0F: "Read Multiple Response", 0x10: "Read By Group Type Request",
        0x11: "Read By Group Type Response", 0x12: "Write Request", 0x13: "Write Response",
        0x16: "Prepare Write Request", 0x17: "Prepare Write Response", 0x18: "Execute Write Request",
        0x19: "Execute Write Response", 0x1B: "Handle Value Notification", 0x1D: "Handle Value Indication",
        0x1E: "Handle Value Confirmation", 0x20: "Read Multiple Variable Request", 0x21: "Read Multiple Variable Response",
        0x23: "Multiple Handle Value Notification", 0x52: "Write Command", 0xD2: "Signed Write Command",
    ]

    static func hex8(_ value: UInt8) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return "0x" + (digits.count < 2 ? "0" : "") + digits
    }

    static func hex16(_ value: UInt16) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
