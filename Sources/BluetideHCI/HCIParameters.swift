import BluetideBase

/// A value carried as HCI command, return or event parameters: it reads itself from the
/// parameter bytes and writes the same layout back.
///
/// Decoding ignores bytes after the known fields (newer controllers may append some) and throws
/// ``DecodingError`` naming the field when a field is cut short. Encoding never fails.
public protocol HCIParameters: Sendable {
    /// Reads the fields, front to back, from `reader`.
    init(from reader: inout ByteReader) throws(DecodingError)
    /// Appends the fields in wire order (little-endian).
    func encode(to writer: inout ByteWriter)
}

extension HCIParameters {
    /// Decodes from a complete parameter block (trailing bytes are ignored).
    public init(parameters: [UInt8]) throws(DecodingError) {
        var reader = ByteReader(parameters)
        try self.init(from: &reader)
    }

    /// The encoded parameter block.
    public var parameterBytes: [UInt8] {
        var writer = ByteWriter()
        encode(to: &writer)
        return writer.bytes
    }
}

/// Parameters with no fields (e.g. HCI Reset's command parameters).
public struct HCIEmptyParameters: HCIParameters, Equatable {
    public init() {}
    public init(from reader: inout ByteReader) throws(DecodingError) {}
    public func encode(to writer: inout ByteWriter) {}
}

/// Return parameters that start with a status byte, so a host can check the outcome before
/// decoding the rest (on failure many controllers send the status alone).
public protocol HCIReturnParameters: HCIParameters {
    /// The command's outcome.
    var status: HCIStatus { get }
}

/// Return parameters made of the status byte only (most setter commands).
public struct HCIStatusReturn: HCIReturnParameters, HCIFieldTable, Equatable {
    /// Outcome (0x00 success).
    public var status: HCIStatus
    public init(status: HCIStatus = .success) { self.status = status }
    public static let fields: [HCIField<Self>] = [.status(\.status)]
    public static let blank = Self()
}

/// Status followed by the connection handle it applies to (Read RSSI style commands without
/// further values, LE Set Data Length).
public struct HCIHandleReturn: HCIReturnParameters, HCIFieldTable, Equatable {
    /// Outcome (0x00 success).
    public var status: HCIStatus
    /// Connection handle (12 bits).
    public var handle: UInt16
    public init(status: HCIStatus = .success, handle: UInt16) {
        self.status = status
        self.handle = handle
    }
    public static let fields: [HCIField<Self>] = [.status(\.status), .handle(\.handle)]
    public static let blank = Self(handle: 0)
}

/// An LE address type byte as HCI carries it: 0 public, 1 random, and in some parameters 2/3
/// (resolvable private address or public/random identity). Any byte is accepted.
public struct LEAddressType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The value as sent over HCI.
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// 0: public device address.
    public static let `public` = LEAddressType(rawValue: 0)
    /// 1: random device address.
    public static let random = LEAddressType(rawValue: 1)
    /// 2: public identity address (events) or "RPA, else public" (own address type).
    public static let publicIdentity = LEAddressType(rawValue: 2)
    /// 3: random identity address (events) or "RPA, else random" (own address type).
    public static let randomIdentity = LEAddressType(rawValue: 3)

    /// The type of an address.
    public init(_ type: BluetoothAddress.AddressType) { rawValue = type.rawValue }

    /// Public or random, as the address itself is (2 counts as public, 3 as random).
    public var addressType: BluetoothAddress.AddressType { rawValue & 1 == 1 ? .random : .public }

    public var description: String {
        switch rawValue {
        case 0: "public"
        case 1: "random"
        case 2: "public identity"
        case 3: "random identity"
        default: "address type \(rawValue)"
        }
    }
}

/// A connection's role byte in connection complete events.
public struct HCIRole: RawRepresentable, Hashable, Sendable {
    /// The value as sent over HCI.
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// 0: this device initiated the connection.
    public static let central = HCIRole(rawValue: 0)
    /// 1: this device was advertising and got connected.
    public static let peripheral = HCIRole(rawValue: 1)
}

/// An LE PHY number (1 = LE 1M, 2 = LE 2M, 3 = LE Coded).
public struct LEPHY: RawRepresentable, Hashable, Sendable {
    /// The value as sent over HCI.
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// LE 1M, the default PHY.
    public static let le1M = LEPHY(rawValue: 1)
    /// LE 2M.
    public static let le2M = LEPHY(rawValue: 2)
    /// LE Coded (long range).
    public static let leCoded = LEPHY(rawValue: 3)
}

extension ByteReader {
    /// Reads a six-byte address of the given type.
    mutating func readAddress(_ field: String, type: LEAddressType) throws(DecodingError) -> BluetoothAddress {
        BluetoothAddress(value: try readUInt48(field), type: type.addressType)
    }
    /// Reads a connection handle (the top 4 bits, reserved, are kept as sent).
    mutating func readHandle(_ field: String = "connection handle") throws(DecodingError) -> UInt16 {
        try read(UInt16.self, field)
    }
}

extension ByteWriter {
    /// Writes an address in HCI (little-endian) order.
    mutating func write(address: BluetoothAddress) {
        writeUInt48(address.value)
    }
}
