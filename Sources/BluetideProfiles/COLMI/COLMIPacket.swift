import BluetideBase

/// Why a COLMI value could not be turned into bytes (a payload too long for its packet, a field
/// out of range). Thrown by encoders instead of trapping or silently truncating.
public struct COLMIEncodingError: Error, Hashable, Sendable, Encodable, CustomStringConvertible {
    /// The field that could not be encoded, e.g. `COLMI packet.payload`.
    public var field: String
    /// What the encoder accepts.
    public var expected: String
    /// What it was given.
    public var found: String

    public init(field: String, expected: String, found: String) {
        self.field = field
        self.expected = expected
        self.found = found
    }

    public var description: String { "\(field): expected \(expected), found \(found)" }
}

/// One COLMI "V1" packet: 16 bytes in both directions.
///
/// ```
/// byte 0      opcode (command id; a reply echoes its request's opcode)
/// bytes 1..14 payload, zero padded
/// byte 15     checksum = sum of bytes 0..14 mod 256
/// ```
/// Decoding rejects a wrong checksum, naming the expected and found values; a checksum computed
/// mod 255 (a known client bug) is called out as such. The payload is always stored as exactly
/// 14 bytes (zero padded), so two packets with the same bytes are equal.
public struct COLMIPacket: GATTCodable, Hashable, Sendable, Encodable, CustomStringConvertible {
    /// Bytes in every packet.
    public static let size = 16
    /// Payload bytes in every packet (bytes 1 through 14).
    public static let payloadCapacity = 14

    /// The command id (byte 0).
    public let opcode: UInt8
    /// Bytes 1...14, always exactly 14 (zero padded).
    public let payload: [UInt8]

    /// A packet with `payload` zero padded to 14 bytes. Throws when the payload is longer than 14 bytes.
    public init(opcode: UInt8, payload: [UInt8] = []) throws(COLMIEncodingError) {
        guard payload.count <= Self.payloadCapacity else {
            throw COLMIEncodingError(
                field: "COLMI packet.payload", expected: "at most \(Self.payloadCapacity) bytes",
                found: "\(payload.count) bytes")
        }
        self.init(opcode: opcode, truncating: payload)
    }

    /// A packet from a payload already known to fit (longer input is cut to 14 bytes, never trapping).
    init(opcode: UInt8, truncating payload: [UInt8]) {
        self.opcode = opcode
        var padded = Array(payload.prefix(Self.payloadCapacity))
        padded.append(contentsOf: repeatElement(0, count: Self.payloadCapacity - padded.count))
        self.payload = padded
    }

    /// Payload byte at packet index `index` (1...14, as the spec numbers them); 0 outside that range.
    public subscript(index: Int) -> UInt8 {
        index >= 1 && index <= Self.payloadCapacity ? payload[index - 1] : 0
    }

    /// The checksum byte this packet carries on the wire (sum of bytes 0...14 mod 256).
    public var checksum: UInt8 { Self.checksum(of: [opcode] + payload) }

    /// Sum of `bytes` mod 256, the V1 checksum.
    public static func checksum<S: Sequence>(of bytes: S) -> UInt8 where S.Element == UInt8 {
        bytes.reduce(UInt8(0)) { $0 &+ $1 }
    }

    /// Sum of `bytes` mod 255: the wrong checksum some clients compute (Halo-iOS); used only to
    /// explain a rejected packet.
    public static func buggyMod255Checksum<S: Sequence>(of bytes: S) -> UInt8 where S.Element == UInt8 {
        UInt8(bytes.reduce(0) { ($0 + Int($1)) % 255 })
    }

    /// Reads exactly 16 bytes and checks the checksum.
    public init(from reader: inout ByteReader) throws(DecodingError) {
        let start = reader.offset
        try reader.require(Self.size, "COLMI packet")
        let body = try reader.readBytes(15, "COLMI packet")
        let found = try reader.readUInt8("COLMI packet.checksum")
        let expected = Self.checksum(of: body)
        guard found == expected else {
            let note = found == Self.buggyMod255Checksum(of: body) ? " (the sum mod 255, a known client bug)" : ""
            throw .invalid(
                "COLMI packet.checksum", expected: "0x\([expected].hexString)",
                found: "0x\([found].hexString)\(note)", at: start + 15)
        }
        opcode = body[0]
        payload = Array(body[1...])
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(opcode)
        writer.write(bytes: payload)
        writer.write(checksum)
    }

    public var description: String { bytes.spacedHex }

    private enum CodingKeys: String, CodingKey { case opcode, payloadHex }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(opcode, forKey: .opcode)
        try c.encode(payload.hexString, forKey: .payloadHex)
    }
}
