import BluetideBase
import BluetideHCI

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
