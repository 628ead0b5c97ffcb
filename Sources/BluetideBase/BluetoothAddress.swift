/// A 48-bit Bluetooth device address and its type.
///
/// Written most significant byte first (`C6:C5:C4:C3:C2:C1`) as people read it; sent over HCI
/// least significant byte first.
public struct BluetoothAddress: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// Whether the address is the device's public (IEEE-assigned) one or a random one.
    public enum AddressType: UInt8, Sendable, Hashable, Codable {
        case `public` = 0
        case random = 1
    }

    /// The kind of a random address, from its two most significant bits.
    public enum RandomKind: Sendable, Equatable {
        /// `11`: fixed for a power cycle or the device's life.
        case `static`
        /// `01`: changes over time, resolvable with the peer's IRK.
        case resolvablePrivate
        /// `00`: changes over time, not resolvable.
        case nonResolvablePrivate
        /// `10`: not defined by the specification.
        case reserved
    }

    /// The 48-bit value; bits 47-40 are the first byte as written.
    public let value: UInt64
    public let type: AddressType

    public init(value: UInt64, type: AddressType = .public) {
        self.value = value & 0xFFFF_FFFF_FFFF
        self.type = type
    }

    /// From the six bytes in HCI (little-endian) order.
    public init(littleEndian bytes: [UInt8], type: AddressType = .public) throws(DecodingError) {
        var reader = ByteReader(bytes)
        self.init(value: try reader.readUInt48("address"), type: type)
    }

    /// Why an address string could not be read.
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public let input: String
        public var description: String {
            "invalid Bluetooth address \"\(input)\": expected six hex bytes like C6:C5:C4:C3:C2:C1, optionally followed by /P or /R for public or random"
        }
    }

    /// Parses `AA:BB:CC:DD:EE:FF` (also `-` separated), with an optional `/P` or `/R` suffix
    /// (Bumble's convention) that overrides `type`.
    public init(_ text: String, type: AddressType = .public) throws(ParseError) {
        var body = Substring(text)
        var kind = type
        if let slash = body.firstIndex(of: "/") {
            switch body[body.index(after: slash)...].uppercased() {
            case "P", "PUBLIC": kind = .public
            case "R", "RANDOM": kind = .random
            default: throw ParseError(input: text)
            }
            body = body[..<slash]
        }
        let parts = body.split(whereSeparator: { $0 == ":" || $0 == "-" })
        guard parts.count == 6 else { throw ParseError(input: text) }
        var value: UInt64 = 0
        for part in parts {
            guard part.count == 2, let byte = UInt8(part, radix: 16) else { throw ParseError(input: text) }
            value = value << 8 | UInt64(byte)
        }
        self.init(value: value, type: kind)
    }

    /// The six bytes in HCI order (least significant first).
    public var littleEndianBytes: [UInt8] {
        (0..<6).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }

    /// The kind of random address, or nil for a public address.
    public var randomKind: RandomKind? {
        guard type == .random else { return nil }
        switch value >> 46 {
        case 0b11: return .static
        case 0b01: return .resolvablePrivate
        case 0b00: return .nonResolvablePrivate
        default: return .reserved
        }
    }

    /// `C6:C5:C4:C3:C2:C1`, most significant byte first.
    public var string: String {
        (0..<6).reversed().map { i -> String in
            let byte = UInt8(truncatingIfNeeded: value >> (8 * UInt64(i)))
            let text = String(byte, radix: 16, uppercase: true)
            return byte < 0x10 ? "0" + text : text
        }.joined(separator: ":")
    }

    public var description: String { type == .random ? string + "/R" : string }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.value, lhs.type.rawValue) < (rhs.value, rhs.type.rawValue)
    }

    /// A random static address from a 48-bit seed (top two bits forced to `11`).
    public static func randomStatic(_ seed: UInt64) -> BluetoothAddress {
        BluetoothAddress(value: (seed & 0x3FFF_FFFF_FFFF) | 0xC000_0000_0000, type: .random)
    }
}
