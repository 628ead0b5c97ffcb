import BluetideBase

/// The packets of Bumble's `bench` app (`bumble.apps.bench`), so Bluetide can be its peer.
///
/// All little-endian. `00` RESET (the receiver clears its statistics); `01 flags seq:u32
/// timestamp:u32 payload` SEQUENCE (10-byte header, zero payload, flag bit 0 = last packet,
/// timestamp = µs since the run started); `02 flags seq:u32` ACK (echoes the flags and sequence).
enum BumbleBenchPacket: GATTCodable, Hashable, Sendable {
    /// `00`: the receiver resets its statistics.
    case reset
    /// `01`: a numbered data packet; `payloadLength` zero octets follow the 10-byte header.
    case sequence(number: UInt32, isLast: Bool, timestampMicroseconds: UInt32, payloadLength: Int)
    /// `02`: acknowledges a SEQUENCE (the last one in `send`/`receive`, each one in `ping`/`pong`).
    case ack(number: UInt32, isLast: Bool)

    /// Bumble's header length of a SEQUENCE packet, octets.
    static let sequenceHeaderLength = 10
    /// Flag bit 0: the final SEQUENCE packet of a run.
    static let lastFlag: UInt8 = 0x01

    /// A SEQUENCE packet `packetSize` octets long in total (header included; at least 10).
    static func sequence(number: UInt32, isLast: Bool, timestampMicroseconds: UInt32, packetSize: Int) -> Self {
        .sequence(number: number, isLast: isLast, timestampMicroseconds: timestampMicroseconds,
                  payloadLength: max(0, packetSize - sequenceHeaderLength))
    }

    init(from reader: inout ByteReader) throws(DecodingError) {
        let type = try reader.readUInt8("bench packet.type")
        switch type {
        case 0x00:
            self = .reset
        case 0x01:
            let flags = try reader.readUInt8("bench SEQUENCE.flags")
            let number = try reader.read(UInt32.self, "bench SEQUENCE.sequence")
            let timestamp = try reader.read(UInt32.self, "bench SEQUENCE.timestamp")
            let payload = reader.readRemaining()
            self = .sequence(number: number, isLast: flags & Self.lastFlag != 0, timestampMicroseconds: timestamp,
                             payloadLength: payload.count)
        case 0x02:
            let flags = try reader.readUInt8("bench ACK.flags")
            let number = try reader.read(UInt32.self, "bench ACK.sequence")
            self = .ack(number: number, isLast: flags & Self.lastFlag != 0)
        default:
            throw DecodingError.invalid("bench packet.type", expected: "00 (reset), 01 (sequence) or 02 (ack)",
                                        found: "0x" + [type].hexString, at: 0)
        }
    }

    func encode(to writer: inout ByteWriter) {
        switch self {
        case .reset:
            writer.write(UInt8(0x00))
        case let .sequence(number, isLast, timestamp, payloadLength):
            writer.write(UInt8(0x01))
            writer.write(isLast ? Self.lastFlag : 0)
            writer.write(number)
            writer.write(timestamp)
            writer.write(bytes: [UInt8](repeating: 0, count: max(0, payloadLength)))
        case let .ack(number, isLast):
            writer.write(UInt8(0x02))
            writer.write(isLast ? Self.lastFlag : 0)
            writer.write(number)
        }
    }
}
