import BluetideCore

/// An HCI command opcode: OGF (6 bits) and OCF (10 bits), sent as one little-endian UInt16.
public struct HCIOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(ogf: UInt8, ocf: UInt16) { rawValue = UInt16(ogf & 0x3F) << 10 | (ocf & 0x3FF) }
    public var ogf: UInt8 { UInt8(rawValue >> 10) }
    public var ocf: UInt16 { rawValue & 0x3FF }
    public var description: String {
        let hex = String(rawValue, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: 4 - hex.count) + hex
    }
}

/// Packet boundary flag of an ACL data packet (bits 12-13 of the handle field).
public enum ACLBoundary: UInt8, Sendable {
    /// First fragment of a non-flushable L2CAP PDU (host to controller).
    case firstNonFlushable = 0b00
    /// Continuing fragment.
    case continuing = 0b01
    /// First fragment of an automatically flushable L2CAP PDU (the usual start).
    case firstFlushable = 0b10
    /// A complete L2CAP PDU (not used on LE; accepted as a start).
    case complete = 0b11

    /// Whether this fragment starts an L2CAP PDU.
    public var startsPDU: Bool { self != .continuing }
}

/// One HCI packet as carried by an H4 transport (UART, TCP, the Linux user channel).
public enum HCIPacket: Sendable, Equatable {
    /// Host to controller: opcode and parameters (at most 255 bytes).
    case command(opcode: HCIOpcode, parameters: [UInt8])
    /// Either direction: connection handle (12 bits), boundary flag, broadcast flag, payload.
    case acl(handle: UInt16, boundary: ACLBoundary, broadcast: UInt8, data: [UInt8])
    /// Controller to host: event code and parameters (at most 255 bytes).
    case event(code: UInt8, parameters: [UInt8])
    /// Synchronous (SCO) and isochronous data: carried through untouched, ignored by an LE host.
    case sco(handle: UInt16, data: [UInt8])
    case iso(header: UInt16, data: [UInt8])

    /// H4 packet type indicator (the first byte on the wire).
    public var h4Type: UInt8 {
        switch self {
        case .command: 0x01
        case .acl: 0x02
        case .sco: 0x03
        case .event: 0x04
        case .iso: 0x05
        }
    }

    /// The packet in H4 framing: type byte, header, payload.
    public var h4Bytes: [UInt8] {
        var w = ByteWriter()
        w.write(h4Type)
        switch self {
        case let .command(opcode, parameters):
            w.write(opcode.rawValue)
            w.write(UInt8(truncatingIfNeeded: parameters.count))
            w.write(bytes: parameters.prefix(255))
        case let .acl(handle, boundary, broadcast, data):
            w.write(handle & 0x0FFF | UInt16(boundary.rawValue) << 12 | UInt16(broadcast & 0x3) << 14)
            w.write(UInt16(truncatingIfNeeded: data.count))
            w.write(bytes: data.prefix(0xFFFF))
        case let .event(code, parameters):
            w.write(code)
            w.write(UInt8(truncatingIfNeeded: parameters.count))
            w.write(bytes: parameters.prefix(255))
        case let .sco(handle, data):
            w.write(handle)
            w.write(UInt8(truncatingIfNeeded: data.count))
            w.write(bytes: data.prefix(255))
        case let .iso(header, data):
            w.write(header)
            w.write(UInt16(truncatingIfNeeded: data.count) & 0x3FFF)
            w.write(bytes: data.prefix(0x3FFF))
        }
        return w.bytes
    }
}

/// Why an H4 byte stream could not be framed. The transport ends with this error.
public struct H4FramingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The unknown packet type byte.
    public let packetType: UInt8
    /// Byte offset in the stream where it was found.
    public let streamOffset: Int
    public var description: String {
        let hex = String(packetType, radix: 16, uppercase: true)
        return "H4 framing lost at stream byte \(streamOffset): unknown packet type 0x\(packetType < 0x10 ? "0" : "")\(hex) (expected 01 command, 02 ACL, 03 SCO, 04 event or 05 ISO)"
    }
}

/// Splits an H4 byte stream into packets, whatever the read boundaries: feed it each chunk as it
/// arrives; it returns the packets completed so far and keeps partial ones for the next chunk.
///
/// An unknown packet type is unrecoverable (H4 has no resync marker): packets completed before
/// it are still returned, then every later call throws and the transport must end.
public struct H4Framer: Sendable {
    private var buffer: [UInt8] = []
    private var consumed = 0
    private var failed: H4FramingError?

    public init() {}

    /// Bytes held for an incomplete packet.
    public var pendingByteCount: Int { buffer.count }

    /// Appends `chunk` and returns every packet it completes, in order.
    public mutating func append<C: Collection>(_ chunk: C) throws(H4FramingError) -> [HCIPacket] where C.Element == UInt8 {
        if let failed { throw failed }
        buffer.append(contentsOf: chunk)
        var packets: [HCIPacket] = []
        var start = 0
        while start < buffer.count {
            let type = buffer[start]
            let headerLength: Int
            switch type {
            case 0x01: headerLength = 3
            case 0x02: headerLength = 4
            case 0x03: headerLength = 3
            case 0x04: headerLength = 2
            case 0x05: headerLength = 4
            default:
                let error = H4FramingError(packetType: type, streamOffset: consumed + start)
                failed = error
                buffer.removeAll()
                // Packets completed before the garbage are delivered; the next call throws.
                if packets.isEmpty { throw error }
                return packets
            }
            guard buffer.count - start >= 1 + headerLength else { break }
            let h = start + 1
            let payloadLength: Int
            switch type {
            case 0x01: payloadLength = Int(buffer[h + 2])
            case 0x02: payloadLength = Int(buffer[h + 2]) | Int(buffer[h + 3]) << 8
            case 0x03: payloadLength = Int(buffer[h + 2])
            case 0x04: payloadLength = Int(buffer[h + 1])
            default: payloadLength = (Int(buffer[h + 2]) | Int(buffer[h + 3]) << 8) & 0x3FFF
            }
            let total = 1 + headerLength + payloadLength
            guard buffer.count - start >= total else { break }
            let payload = Array(buffer[(h + headerLength)..<(start + total)])
            let word = UInt16(buffer[h]) | UInt16(buffer[h + 1]) << 8
            switch type {
            case 0x01:
                packets.append(.command(opcode: HCIOpcode(rawValue: word), parameters: payload))
            case 0x02:
                packets.append(.acl(
                    handle: word & 0x0FFF, boundary: ACLBoundary(rawValue: UInt8(word >> 12 & 0x3))!,
                    broadcast: UInt8(word >> 14), data: payload))
            case 0x03:
                packets.append(.sco(handle: word, data: payload))
            case 0x04:
                packets.append(.event(code: buffer[h], parameters: payload))
            default:
                packets.append(.iso(header: word, data: payload))
            }
            start += total
        }
        if start > 0 {
            buffer.removeFirst(start)
            consumed += start
        }
        return packets
    }
}
