import BluetideCore
import BluetideHCI

// Minimal decoding of the few controller events the host's HCI layer acts on. Kept in this one
// file so it can be swapped for the typed event codecs of BluetideHCI when they land.

/// The events the command queue and ACL flow control consume, decoded from `HCIPacket.event`.
public enum HCIHostEvent: Sendable, Equatable {
    /// 0x0E Command Complete: credits, opcode, return parameters (status first for nearly all).
    case commandComplete(numCommandPackets: UInt8, opcode: HCIOpcode, returnParameters: [UInt8])
    /// 0x0F Command Status: status, credits, opcode.
    case commandStatus(status: UInt8, numCommandPackets: UInt8, opcode: HCIOpcode)
    /// 0x13 Number Of Completed Packets: (handle, count) pairs.
    case numberOfCompletedPackets([(handle: UInt16, count: UInt16)])
    /// 0x05 Disconnection Complete: status, handle, reason.
    case disconnectionComplete(status: UInt8, handle: UInt16, reason: UInt8)

    /// Event code of Command Complete.
    public static let commandCompleteCode: UInt8 = 0x0E
    /// Event code of Command Status.
    public static let commandStatusCode: UInt8 = 0x0F
    /// Event code of Number Of Completed Packets.
    public static let numberOfCompletedPacketsCode: UInt8 = 0x13
    /// Event code of Disconnection Complete.
    public static let disconnectionCompleteCode: UInt8 = 0x05

    /// Decodes `code`/`parameters`; nil for events this layer does not handle. Throws
    /// `DecodingError` (naming the field) for a handled event that is truncated.
    public init?(code: UInt8, parameters: [UInt8]) throws(DecodingError) {
        var r = ByteReader(parameters)
        switch code {
        case Self.commandCompleteCode:
            let credits = try r.readUInt8("Command Complete num_hci_command_packets")
            let opcode = try r.read(UInt16.self, "Command Complete command_opcode")
            self = .commandComplete(numCommandPackets: credits, opcode: HCIOpcode(rawValue: opcode), returnParameters: r.readRemaining())
        case Self.commandStatusCode:
            let status = try r.readUInt8("Command Status status")
            let credits = try r.readUInt8("Command Status num_hci_command_packets")
            let opcode = try r.read(UInt16.self, "Command Status command_opcode")
            self = .commandStatus(status: status, numCommandPackets: credits, opcode: HCIOpcode(rawValue: opcode))
        case Self.numberOfCompletedPacketsCode:
            let count = try r.readUInt8("Number Of Completed Packets num_handles")
            var pairs: [(handle: UInt16, count: UInt16)] = []
            for i in 0..<Int(count) {
                let handle = try r.read(UInt16.self, "Number Of Completed Packets connection_handle[\(i)]")
                let completed = try r.read(UInt16.self, "Number Of Completed Packets num_completed_packets[\(i)]")
                pairs.append((handle & 0x0FFF, completed))
            }
            self = .numberOfCompletedPackets(pairs)
        case Self.disconnectionCompleteCode:
            let status = try r.readUInt8("Disconnection Complete status")
            let handle = try r.read(UInt16.self, "Disconnection Complete connection_handle")
            let reason = try r.readUInt8("Disconnection Complete reason")
            self = .disconnectionComplete(status: status, handle: handle & 0x0FFF, reason: reason)
        default:
            return nil
        }
    }

    /// Decodes an event packet; nil for other packets and unhandled events.
    public init?(_ packet: HCIPacket) throws(DecodingError) {
        guard case let .event(code, parameters) = packet else { return nil }
        try self.init(code: code, parameters: parameters)
    }

    public static func == (lhs: HCIHostEvent, rhs: HCIHostEvent) -> Bool {
        switch (lhs, rhs) {
        case let (.commandComplete(a, b, c), .commandComplete(d, e, f)): a == d && b == e && c == f
        case let (.commandStatus(a, b, c), .commandStatus(d, e, f)): a == d && b == e && c == f
        case let (.numberOfCompletedPackets(a), .numberOfCompletedPackets(b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.handle == $1.handle && $0.count == $1.count }
        case let (.disconnectionComplete(a, b, c), .disconnectionComplete(d, e, f)): a == d && b == e && c == f
        default: false
        }
    }
}

/// The controller's ACL buffers: the largest ACL payload it accepts and how many packets it holds.
public struct ACLBufferSize: Sendable, Equatable {
    /// Maximum data bytes in one ACL packet (not counting its 4-byte header).
    public var packetLength: Int
    /// Packets the controller can buffer: the host's ACL credits.
    public var packetCount: Int

    /// Sizes as given (bytes per packet, packets).
    public init(packetLength: Int, packetCount: Int) {
        self.packetLength = packetLength
        self.packetCount = packetCount
    }

    /// LE Read Buffer Size [v1], whose return parameters carry the LE buffer sizes.
    public static let leReadBufferSize = HCIOpcode(rawValue: 0x2002)
    /// LE Read Buffer Size v2 (adds ISO buffers after the same ACL fields).
    public static let leReadBufferSizeV2 = HCIOpcode(rawValue: 0x2060)
    /// Read Buffer Size (the shared BR/EDR buffers, used when LE reports none).
    public static let readBufferSize = HCIOpcode(rawValue: 0x1005)

    /// From LE Read Buffer Size (v1 or v2) return parameters:
    /// `status | LE_ACL_Data_Packet_Length u16 | Total_Num_LE_ACL_Data_Packets u8 [| ISO ...]`.
    /// Returns nil when the controller reports 0 length or 0 packets, which means "LE shares the
    /// buffers of Read Buffer Size": use ``init(readBufferSizeReturn:)`` then.
    public init?(leReadBufferSizeReturn parameters: [UInt8]) throws(DecodingError) {
        var r = ByteReader(parameters)
        let status = try r.readUInt8("LE Read Buffer Size status")
        guard status == 0 else {
            throw .invalid("LE Read Buffer Size status", expected: "0x00 success", found: hexByte(status), at: 0)
        }
        let length = try r.read(UInt16.self, "LE Read Buffer Size LE_ACL_Data_Packet_Length")
        let count = try r.readUInt8("LE Read Buffer Size Total_Num_LE_ACL_Data_Packets")
        guard length > 0, count > 0 else { return nil }
        self.init(packetLength: Int(length), packetCount: Int(count))
    }

    /// From Read Buffer Size return parameters: `status | ACL_Data_Packet_Length u16 |
    /// Synchronous_Data_Packet_Length u8 | Total_Num_ACL_Data_Packets u16 | Total_Num_Synchronous u16`.
    public init(readBufferSizeReturn parameters: [UInt8]) throws(DecodingError) {
        var r = ByteReader(parameters)
        let status = try r.readUInt8("Read Buffer Size status")
        guard status == 0 else {
            throw .invalid("Read Buffer Size status", expected: "0x00 success", found: hexByte(status), at: 0)
        }
        let length = try r.read(UInt16.self, "Read Buffer Size ACL_Data_Packet_Length")
        try r.skip(1, "Read Buffer Size Synchronous_Data_Packet_Length")
        let count = try r.read(UInt16.self, "Read Buffer Size Total_Num_ACL_Data_Packets")
        guard length > 0, count > 0 else {
            throw .invalid(
                "Read Buffer Size ACL buffers", expected: "a length and a count above 0",
                found: "length \(length), count \(count)", at: 1)
        }
        self.init(packetLength: Int(length), packetCount: Int(count))
    }
}

/// One byte as `0xNN`, for error messages.
func hexByte(_ value: UInt8) -> String {
    "0x" + (value < 0x10 ? "0" : "") + String(value, radix: 16, uppercase: true)
}
