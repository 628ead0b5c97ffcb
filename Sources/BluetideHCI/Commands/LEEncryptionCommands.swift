import BluetideBase

// LE encryption commands (Core spec Vol 4 Part E 7.8.24-7.8.26). The keys come from SMP in the
// host; the controller only applies them.

/// A 128-bit key as HCI carries it (least significant byte first).
public struct HCIKey128: Hashable, Sendable {
    /// The 16 bytes in HCI order.
    public var bytes: [UInt8]
    /// Takes the first 16 bytes of `bytes`, zero-padded when shorter.
    public init(bytes: [UInt8]) {
        self.bytes = Array(bytes.prefix(16)) + [UInt8](repeating: 0, count: max(0, 16 - bytes.count))
    }

    init(from reader: inout ByteReader, _ field: String) throws(DecodingError) {
        bytes = try reader.readBytes(16, field)
    }
}

/// LE Enable Encryption (0x2019): the central starts (or refreshes) encryption with a long-term
/// key; Command Status, then Encryption Change on both sides once the peripheral's host answers
/// its LE Long Term Key Request.
public struct LEEnableEncryption: HCICommand, HCIFieldTable, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x2019)
    public static let name = "LE Enable Encryption"
    public static var completion: HCICommandCompletion { .commandStatus }
    /// Connection handle (12 bits).
    public var handle: UInt16
    /// Rand and EDIV identify a legacy-pairing key; both 0 for LE Secure Connections.
    public var randomNumber: UInt64
    /// EDIV of a legacy-pairing key (0 for LE Secure Connections).
    public var encryptedDiversifier: UInt16
    /// The 128-bit long-term key from pairing.
    public var longTermKey: HCIKey128
    public init(handle: UInt16, randomNumber: UInt64 = 0, encryptedDiversifier: UInt16 = 0, longTermKey: HCIKey128) {
        self.handle = handle
        self.randomNumber = randomNumber
        self.encryptedDiversifier = encryptedDiversifier
        self.longTermKey = longTermKey
    }
    public static let fields: [HCIField<Self>] = [
        .handle(\.handle), .integer(\.randomNumber, "random number"),
        .integer(\.encryptedDiversifier, "encrypted diversifier"), .key(\.longTermKey, "long term key"),
    ]
    public static let blank = Self(handle: 0, longTermKey: HCIKey128(bytes: []))
}

/// LE Long Term Key Request Reply (0x201A): the peripheral's host supplies the key.
public struct LELongTermKeyRequestReply: HCICommand, HCIFieldTable, Equatable {
    /// What Command Complete returns for this command (status first).
    public typealias ReturnParameters = HCIHandleReturn
    public static let opcode = HCIOpcode(rawValue: 0x201A)
    public static let name = "LE Long Term Key Request Reply"
    /// Connection handle (12 bits).
    public var handle: UInt16
    /// The 128-bit long-term key from pairing.
    public var longTermKey: HCIKey128
    public init(handle: UInt16, longTermKey: HCIKey128) {
        self.handle = handle
        self.longTermKey = longTermKey
    }
    public static let fields: [HCIField<Self>] = [.handle(\.handle), .key(\.longTermKey, "long term key")]
    public static let blank = Self(handle: 0, longTermKey: HCIKey128(bytes: []))
}

/// LE Long Term Key Request Negative Reply (0x201B): the peripheral's host has no key.
public struct LELongTermKeyRequestNegativeReply: HCICommand, HCIFieldTable, Equatable {
    /// What Command Complete returns for this command (status first).
    public typealias ReturnParameters = HCIHandleReturn
    public static let opcode = HCIOpcode(rawValue: 0x201B)
    public static let name = "LE Long Term Key Request Negative Reply"
    /// Connection handle (12 bits).
    public var handle: UInt16
    public init(handle: UInt16) { self.handle = handle }
    public static let fields: [HCIField<Self>] = [.handle(\.handle)]
    public static let blank = Self(handle: 0)
}
