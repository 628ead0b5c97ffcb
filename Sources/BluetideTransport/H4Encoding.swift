import BluetideHCI
import NIOCore

/// A packet's H4 framing written straight into a transport's output buffer, with no intermediate
/// array per packet: the type byte and header (at most 5 bytes) and the payload, truncated to what
/// the header's length field can say, exactly as `HCIPacket.h4Bytes` lays them out.
extension HCIPacket {
    /// The H4 type byte and header in the low `count` bytes of `header` (first byte lowest), and the payload.
    var h4Parts: (header: UInt64, count: Int, payload: ArraySlice<UInt8>) {
        switch self {
        case let .command(opcode, parameters):
            let payload = parameters.prefix(255)
            return (0x01 | UInt64(opcode.rawValue) << 8 | UInt64(payload.count) << 24, 4, payload)
        case let .acl(handle, boundary, broadcast, data):
            let payload = data.prefix(0xFFFF)
            let word = handle & 0x0FFF | UInt16(boundary.rawValue) << 12 | UInt16(broadcast & 0x3) << 14
            return (0x02 | UInt64(word) << 8 | UInt64(payload.count) << 24, 5, payload)
        case let .event(code, parameters):
            let payload = parameters.prefix(255)
            return (0x04 | UInt64(code) << 8 | UInt64(payload.count) << 16, 3, payload)
        case let .sco(handle, data):
            let payload = data.prefix(255)
            return (0x03 | UInt64(handle) << 8 | UInt64(payload.count) << 24, 4, payload)
        case let .iso(header, data):
            let payload = data.prefix(0x3FFF)
            return (0x05 | UInt64(header) << 8 | UInt64(payload.count) << 24, 5, payload)
        }
    }

    /// Bytes of the packet in H4 framing (type byte, header, payload).
    var h4Count: Int {
        let parts = h4Parts
        return parts.count + parts.payload.count
    }
}

extension ByteBuffer {
    /// Appends `packet` in H4 framing.
    mutating func writeH4(_ packet: HCIPacket) {
        let parts = packet.h4Parts
        var header = parts.header.littleEndian
        Swift.withUnsafeBytes(of: &header) { writeBytes(UnsafeRawBufferPointer(rebasing: $0[..<parts.count])) }
        writeBytes(parts.payload)
    }
}

extension Array where Element == UInt8 {
    /// Appends `packet` in H4 framing.
    mutating func appendH4(_ packet: HCIPacket) {
        let parts = packet.h4Parts
        var header = parts.header.littleEndian
        Swift.withUnsafeBytes(of: &header) { append(contentsOf: $0[..<parts.count]) }
        append(contentsOf: parts.payload)
    }
}
