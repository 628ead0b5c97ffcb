import Foundation

/// The base types of the FIT protocol: how a field's value is laid out (size, signedness) and
/// which value means "invalid" (missing). Raw values are the base type numbers a definition
/// message carries (bit 7 set for multi-byte types, whose byte order the architecture names).
public enum FITBaseType: UInt8, Sendable, Hashable, CaseIterable {
    /// An enumeration, one byte; 0xFF is invalid.
    case enumeration = 0x00
    /// Signed 8-bit; 0x7F is invalid.
    case sint8 = 0x01
    /// Unsigned 8-bit; 0xFF is invalid.
    case uint8 = 0x02
    /// Signed 16-bit; 0x7FFF is invalid.
    case sint16 = 0x83
    /// Unsigned 16-bit; 0xFFFF is invalid.
    case uint16 = 0x84
    /// Signed 32-bit; 0x7FFFFFFF is invalid.
    case sint32 = 0x85
    /// Unsigned 32-bit; 0xFFFFFFFF is invalid.
    case uint32 = 0x86
    /// A null-terminated UTF-8 string padded to the field's size.
    case string = 0x07
    /// Unsigned 8-bit whose invalid value is 0.
    case uint8z = 0x0A
    /// Unsigned 16-bit whose invalid value is 0.
    case uint16z = 0x8B
    /// Unsigned 32-bit whose invalid value is 0.
    case uint32z = 0x8C

    /// Bytes of one value (a string's size is its field's).
    public var size: Int {
        switch self {
        case .enumeration, .sint8, .uint8, .uint8z, .string: 1
        case .sint16, .uint16, .uint16z: 2
        case .sint32, .uint32, .uint32z: 4
        }
    }

    /// The value meaning "no value", as an unsigned bit pattern.
    public var invalid: UInt64 {
        switch self {
        case .enumeration, .uint8: 0xFF
        case .sint8: 0x7F
        case .sint16: 0x7FFF
        case .uint16: 0xFFFF
        case .sint32: 0x7FFF_FFFF
        case .uint32: 0xFFFF_FFFF
        case .uint8z, .uint16z, .uint32z, .string: 0
        }
    }
}

/// One field of a FIT message: its number in the message's profile, its base type and its value
/// (nil: invalid, the base type's "no value"). Integers are the raw, already scaled values
/// (a speed of 8.333 m/s with scale 1000 is 8333).
public struct FITField: Sendable, Hashable {
    /// The field definition number from the FIT profile (e.g. record field 7, power).
    public var number: UInt8
    /// How the value is laid out.
    public var type: FITBaseType
    /// The value, when the base type is a number.
    public var integer: Int64?
    /// The value, when the base type is a string.
    public var text: String?

    /// A numeric field; a value outside the base type's range is written as invalid.
    public init(_ number: UInt8, _ type: FITBaseType, _ value: Int64?) {
        self.number = number
        self.type = type
        integer = value
    }

    /// A numeric field from an `Int`.
    public init(_ number: UInt8, _ type: FITBaseType, _ value: Int?) {
        self.init(number, type, value.map(Int64.init))
    }

    /// A string field (UTF-8, cut to 254 bytes at a character boundary).
    public init(_ number: UInt8, string: String) {
        self.number = number
        type = .string
        text = string
    }

    /// The bytes the field takes in a data message (strings: their UTF-8 plus a terminating zero).
    var size: Int {
        guard type == .string else { return type.size }
        return Self.utf8(text ?? "").count + 1
    }

    /// `text` as UTF-8, cut to at most 254 bytes without splitting a character.
    static func utf8(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        for character in text {
            let encoded = Array(String(character).utf8)
            if bytes.count + encoded.count > 254 { break }
            bytes += encoded
        }
        return bytes.filter { $0 != 0 }
    }

    /// Whether `value` fits the base type without being its invalid value.
    func fits(_ value: Int64) -> Bool {
        switch type {
        case .enumeration, .uint8: (0..<0xFF).contains(value)
        case .sint8: (-0x80..<0x7F).contains(value)
        case .sint16: (-0x8000..<0x7FFF).contains(value)
        case .uint16: (0..<0xFFFF).contains(value)
        case .sint32: (-0x8000_0000..<0x7FFF_FFFF).contains(value)
        case .uint32: (0..<0xFFFF_FFFF).contains(value)
        case .uint8z: (1...0xFF).contains(value)
        case .uint16z: (1...0xFFFF).contains(value)
        case .uint32z: (1...0xFFFF_FFFF).contains(value)
        case .string: false
        }
    }

    /// The field's bytes in a data message, little-endian.
    func bytes() -> [UInt8] {
        if type == .string { return Self.utf8(text ?? "") + [0] }
        let raw: UInt64
        if let integer, fits(integer) { raw = UInt64(bitPattern: integer) } else { raw = type.invalid }
        return (0..<type.size).map { UInt8(truncatingIfNeeded: raw >> (8 * UInt64($0))) }
    }
}

/// One FIT message: its global message number (from the FIT profile: 0 file_id, 20 record, …)
/// and its fields, in the order they are written.
public struct FITMessage: Sendable, Hashable {
    /// The global message number.
    public var global: UInt16
    /// The fields.
    public var fields: [FITField]

    /// A message with these parts.
    public init(_ global: UInt16, _ fields: [FITField]) {
        self.global = global
        self.fields = fields
    }

    /// What a definition message says of it: global number and each field's number, size and type.
    var layout: [UInt8] {
        var bytes = [UInt8(truncatingIfNeeded: global), UInt8(truncatingIfNeeded: global >> 8)]
        for field in fields { bytes += [field.number, UInt8(field.size), field.type.rawValue] }
        return bytes
    }
}

/// Writes FIT files (the Flexible and Interoperable Data Transfer protocol Garmin devices and
/// training sites use) from messages: the 14-byte file header with its CRC, a definition message
/// before the first data message of each layout (local message types 0…15 reused, least recently
/// used first), the data messages, and the file's CRC. Little-endian throughout; no I/O.
public struct FITEncoder: Sendable {
    /// The FIT protocol version written in the header (2.0).
    public static let protocolVersion: UInt8 = 0x20
    /// The profile version written in the header (21.00, as major × 100 + minor).
    public static let profileVersion: UInt16 = 2100
    /// Seconds from 1970-01-01 (the Unix epoch) to 1989-12-31T00:00:00Z, the FIT epoch.
    public static let epochOffset: Int64 = 631_065_600

    private var body: [UInt8] = []
    /// The layout each local message type holds now, and when it was last used.
    private var locals: [(layout: [UInt8], lastUse: Int)] = []
    private var uses = 0

    /// An encoder with no messages yet.
    public init() {}

    /// The 14-byte file header for `dataSize` bytes of messages: header size, protocol and
    /// profile versions, the data size, `.FIT`, and the CRC of the 12 bytes before it.
    public static func header(dataSize: UInt32) -> [UInt8] {
        var header: [UInt8] = [14, protocolVersion, UInt8(profileVersion & 0xFF), UInt8(profileVersion >> 8)]
        header += (0..<4).map { UInt8(truncatingIfNeeded: dataSize >> (8 * UInt32($0))) }
        header += Array(".FIT".utf8)
        let crc = FITCRC.checksum(header)
        return header + [UInt8(crc & 0xFF), UInt8(crc >> 8)]
    }

    /// A FIT `date_time` (seconds since the FIT epoch) for `date`, whole seconds rounded down.
    public static func timestamp(_ date: Date) -> Int64 {
        Int64(date.timeIntervalSince1970.rounded(.down)) - epochOffset
    }

    /// Appends `message`, preceded by its definition when no local message type holds its layout.
    public mutating func append(_ message: FITMessage) {
        uses += 1
        let layout = message.layout
        let local: Int
        if let index = locals.firstIndex(where: { $0.layout == layout }) {
            local = index
        } else {
            if locals.count < 16 {
                locals.append((layout, 0))
                local = locals.count - 1
            } else {
                local = locals.indices.min { locals[$0].lastUse < locals[$1].lastUse } ?? 0
                locals[local].layout = layout
            }
            // Definition: header (bit 6), reserved, architecture 0 (little-endian), global, field count, fields.
            body.append(0x40 | UInt8(local))
            body += [0, 0, layout[0], layout[1], UInt8(message.fields.count)]
            body += layout.dropFirst(2)
        }
        locals[local].lastUse = uses
        body.append(UInt8(local))
        for field in message.fields { body += field.bytes() }
    }

    /// The whole file: header (with its CRC), the messages, and the CRC of everything before it.
    public func file() -> [UInt8] {
        var file = Self.header(dataSize: UInt32(clamping: body.count)) + body
        let crc = FITCRC.checksum(file)
        file += [UInt8(crc & 0xFF), UInt8(crc >> 8)]
        return file
    }
}

/// The FIT protocol's 16-bit CRC: reflected polynomial 0x8005 (0xA001), initial value 0, no
/// final XOR (the CRC-16 known as ARC). A file's CRC over everything before it, header included,
/// makes a checksum of the whole file (CRC included) come out 0.
public enum FITCRC {
    /// The CRC of `bytes`, continuing from `crc`.
    public static func checksum(_ bytes: some Sequence<UInt8>, crc: UInt16 = 0) -> UInt16 {
        var crc = crc
        for byte in bytes {
            crc ^= UInt16(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xA001 : crc >> 1 }
        }
        return crc
    }
}
