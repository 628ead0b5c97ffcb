/// A Bluetooth UUID in any of its three sizes.
///
/// 16- and 32-bit UUIDs are aliases inside the Bluetooth base UUID
/// `0000xxxx-0000-1000-8000-00805F9B34FB`; all forms are stored expanded to 128 bits, so
/// `BluetoothUUID(0x180D)` equals the parsed `"0000180D-0000-1000-8000-00805F9B34FB"`.
public struct BluetoothUUID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The 128-bit value, high 64 bits (first 8 bytes as written).
    public let high: UInt64
    /// The 128-bit value, low 64 bits.
    public let low: UInt64

    /// Low 64 bits of the Bluetooth base UUID.
    public static let baseLow: UInt64 = 0x8000_0080_5F9B_34FB
    /// High 64 bits of the base UUID with a zero alias.
    public static let baseHigh: UInt64 = 0x0000_0000_0000_1000

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// A 16-bit SIG-assigned UUID, e.g. `0x180D` (Heart Rate service).
    public init(_ uuid16: UInt16) {
        self.init(high: Self.baseHigh | UInt64(uuid16) << 32, low: Self.baseLow)
    }

    /// A 32-bit SIG-assigned UUID.
    public init(uuid32: UInt32) {
        self.init(high: Self.baseHigh | UInt64(uuid32) << 32, low: Self.baseLow)
    }

    /// The 16-bit alias when this UUID is one, else nil.
    public var uuid16: UInt16? {
        guard low == Self.baseLow, high & 0xFFFF_FFFF == Self.baseHigh, high >> 48 == 0 else { return nil }
        return UInt16(truncatingIfNeeded: high >> 32)
    }

    /// The 32-bit alias when this UUID is one (16-bit ones included), else nil.
    public var uuid32: UInt32? {
        guard low == Self.baseLow, high & 0xFFFF_FFFF == Self.baseHigh else { return nil }
        return UInt32(truncatingIfNeeded: high >> 32)
    }

    /// The 16 bytes most significant first, as written.
    public var bigEndianBytes: [UInt8] {
        (0..<8).reversed().map { UInt8(truncatingIfNeeded: high >> (8 * UInt64($0))) }
            + (0..<8).reversed().map { UInt8(truncatingIfNeeded: low >> (8 * UInt64($0))) }
    }

    /// The shortest over-the-air form (2 bytes for a 16-bit alias, else 16), little-endian as
    /// ATT and advertising data carry it.
    public var littleEndianBytes: [UInt8] {
        if let short = uuid16 { return [UInt8(short & 0xFF), UInt8(short >> 8)] }
        return bigEndianBytes.reversed()
    }

    /// The full 128-bit form, little-endian (16 bytes), whatever the alias.
    public var littleEndianBytes128: [UInt8] { bigEndianBytes.reversed() }

    /// From 2, 4 or 16 little-endian bytes (ATT and advertising order).
    public init(littleEndian bytes: [UInt8]) throws(DecodingError) {
        var reader = ByteReader(bytes)
        switch bytes.count {
        case 2: self.init(try reader.read(UInt16.self, "UUID"))
        case 4: self.init(uuid32: try reader.read(UInt32.self, "UUID"))
        case 16:
            let low: UInt64 = try reader.read(UInt64.self, "UUID")
            let high: UInt64 = try reader.read(UInt64.self, "UUID")
            self.init(high: high, low: low)
        default:
            throw .invalid("UUID", expected: "2, 4 or 16 bytes", found: "\(bytes.count) bytes")
        }
    }

    /// Why a UUID string could not be read.
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public let input: String
        public var description: String {
            "invalid UUID \"\(input)\": expected 4 hex digits (180D), 8 hex digits, or the 128-bit form 6E400001-B5A3-F393-E0A9-E50E24DCCA9E"
        }
    }

    /// Parses `180D`, `0x180D`, `0000180D` (32-bit), or the 128-bit form with or without dashes.
    public init(_ text: String) throws(ParseError) {
        var body = Substring(text.trimmingWhitespace)
        if body.hasPrefix("0x") || body.hasPrefix("0X") { body = body.dropFirst(2) }
        let digits = body.filter { $0 != "-" }
        // ASCII only: `Character.isHexDigit` also accepts full-width digits, which `radix:` parsing rejects.
        guard digits.allSatisfy({ $0.isASCII && $0.isHexDigit }) else { throw ParseError(input: text) }
        switch digits.count {
        case 4 where !body.contains("-"):
            guard let value = UInt16(digits, radix: 16) else { throw ParseError(input: text) }
            self.init(value)
        case 8 where !body.contains("-"):
            guard let value = UInt32(digits, radix: 16) else { throw ParseError(input: text) }
            self.init(uuid32: value)
        case 32:
            if body.contains("-") {
                let groups = body.split(separator: "-", omittingEmptySubsequences: false).map(\.count)
                guard groups == [8, 4, 4, 4, 12] else { throw ParseError(input: text) }
            }
            let chars = Array(digits)
            guard let high = UInt64(String(chars[0..<16]), radix: 16),
                  let low = UInt64(String(chars[16..<32]), radix: 16)
            else { throw ParseError(input: text) }
            self.init(high: high, low: low)
        default:
            throw ParseError(input: text)
        }
    }

    /// Full form, upper case: `0000180D-0000-1000-8000-00805F9B34FB`.
    public var uuidString: String {
        let hex = bigEndianBytes.spacedHex.replacingSpaces()
        let c = Array(hex)
        return [c[0..<8], c[8..<12], c[12..<16], c[16..<20], c[20..<32]].map { String($0) }.joined(separator: "-")
    }

    /// Shortest readable form: `180D` for a 16-bit alias, else the full form.
    public var shortString: String {
        if let short = uuid16 {
            let text = String(short, radix: 16, uppercase: true)
            return String(repeating: "0", count: 4 - text.count) + text
        }
        return uuidString
    }

    /// The short form followed by the assigned name when known: `180D (Heart Rate)`.
    public var description: String {
        if let name { return "\(shortString) (\(name))" }
        return shortString
    }

    /// The assigned or well-known name, when Bluetide knows it.
    public var name: String? { BluetoothUUID.knownNames[self] }

    public static func < (lhs: Self, rhs: Self) -> Bool { (lhs.high, lhs.low) < (rhs.high, rhs.low) }
}

extension BluetoothUUID: Codable {
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do { try self.init(text) } catch {
            throw Swift.DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(shortString)
    }
}

extension String {
    fileprivate var trimmingWhitespace: String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }

    fileprivate func replacingSpaces() -> String { filter { $0 != " " } }
}
