import BluetideCore
@testable import BluetideProfiles

/// Test helpers for COLMI vectors written as in the spec: the leading bytes, zero padding, then the
/// checksum the spec gives (so the spec's checksum itself is checked by decoding).
enum COLMIVector {
    /// `prefix` bytes, zero padded to 15, then `checksum`.
    static func v1(_ prefix: String, checksum: UInt8) throws -> [UInt8] {
        var bytes = try Hex.parse(prefix)
        bytes += Array(repeating: 0, count: max(0, 15 - bytes.count))
        return bytes + [checksum]
    }

    /// A full 16-byte hex vector.
    static func full(_ hex: String) throws -> [UInt8] { try Hex.parse(hex) }

    /// A valid packet with this opcode and payload (checksum computed).
    static func packet(_ opcode: UInt8, _ payload: [UInt8]) throws -> COLMIPacket {
        try COLMIPacket(opcode: opcode, payload: payload)
    }
}
