import BluetideBase

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
/// Whole packets are decoded straight from the chunk (only their payloads are copied, into the
/// packets); only the bytes of a packet cut by the end of a chunk are kept, until the next one.
///
/// An unknown packet type is unrecoverable (H4 has no resync marker): packets completed before
/// it are still returned, then every later call throws and the transport must end.
public struct H4Framer: Sendable {
    /// The start of one packet that the last chunk cut off (type byte first); empty between packets.
    private var partial: [UInt8] = []
    /// Stream bytes in the packets completed so far: where the next packet starts.
    private var consumed = 0
    private var failed: H4FramingError?

    public init() {}

    /// Bytes held for an incomplete packet.
    public var pendingByteCount: Int { partial.count }

    /// Appends `chunk` and returns every packet it completes, in order. When the chunk holds
    /// garbage after whole packets, those packets are returned and the next call throws.
    public mutating func append<C: Collection>(_ chunk: C) throws(H4FramingError) -> [HCIPacket] where C.Element == UInt8 {
        var packets: [HCIPacket] = []
        do {
            try append(chunk, into: &packets)
        } catch {
            // Packets completed before the garbage are delivered; the next call throws.
            if packets.isEmpty { throw error }
        }
        return packets
    }

    /// Appends `chunk` and adds every packet it completes to `packets`, in order. On garbage, the
    /// packets completed before it are in `packets` when this throws.
    public mutating func append<C: Collection>(_ chunk: C, into packets: inout [HCIPacket]) throws(H4FramingError) where C.Element == UInt8 {
        let result: Result<Void, H4FramingError>? = chunk.withContiguousStorageIfAvailable { elements in
            Result { () throws(H4FramingError) in try append(bytes: UnsafeRawBufferPointer(elements), into: &packets) }
        }
        if let result { return try result.get() }
        let copy = Array(chunk)
        try copy.withUnsafeBytes { bytes in
            Result { () throws(H4FramingError) in try append(bytes: bytes, into: &packets) }
        }.get()
    }

    /// Frames `bytes` (one read, borrowed for the call) and adds every packet it completes to
    /// `packets`. On garbage, the packets completed before it are in `packets` when this throws.
    public mutating func append(bytes: UnsafeRawBufferPointer, into packets: inout [HCIPacket]) throws(H4FramingError) {
        if let failed { throw failed }
        var index = 0
        // First finish the packet the previous chunk cut off, taking only the bytes it lacks.
        while !partial.isEmpty {
            let needed = partial.withUnsafeBytes { Self.lengthNeeded($0) }
            if partial.count < needed {
                guard index < bytes.count else { return }
                let take = min(needed - partial.count, bytes.count - index)
                partial.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[index..<(index + take)]))
                index += take
                continue  // the header may just have completed: the length is known only now
            }
            packets.append(partial.withUnsafeBytes { Self.decode($0) })
            consumed += partial.count
            partial.removeAll(keepingCapacity: true)
        }
        // Then every whole packet straight from the chunk.
        while index < bytes.count {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[index...])
            guard Self.headerLength(type: rest[0]) != nil else {
                let error = H4FramingError(packetType: rest[0], streamOffset: consumed)
                failed = error
                partial = []
                throw error
            }
            let total = Self.lengthNeeded(rest)
            guard rest.count >= total else { break }
            packets.append(Self.decode(UnsafeRawBufferPointer(rebasing: rest[..<total])))
            consumed += total
            index += total
        }
        if index < bytes.count {
            partial.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[index...]))
        }
    }

    /// Header bytes after the type byte, or nil for an unknown packet type.
    private static func headerLength(type: UInt8) -> Int? {
        switch type {
        case 0x01, 0x03: 3
        case 0x02, 0x05: 4
        case 0x04: 2
        default: nil
        }
    }

    /// The bytes of the packet that starts `bytes` (a known type byte first): the whole packet
    /// when its header is there, else the type byte and header (so that much must come first).
    private static func lengthNeeded(_ bytes: UnsafeRawBufferPointer) -> Int {
        let header = headerLength(type: bytes[0])!
        guard bytes.count >= 1 + header else { return 1 + header }
        let payload = switch bytes[0] {
        case 0x01, 0x03: Int(bytes[3])
        case 0x02: Int(bytes[3]) | Int(bytes[4]) << 8
        case 0x04: Int(bytes[2])
        default: (Int(bytes[3]) | Int(bytes[4]) << 8) & 0x3FFF
        }
        return 1 + header + payload
    }

    /// Decodes exactly one whole packet (type byte, header, payload).
    private static func decode(_ bytes: UnsafeRawBufferPointer) -> HCIPacket {
        let type = bytes[0]
        let payload = Array(bytes[(1 + headerLength(type: type)!)...])
        let word = UInt16(bytes[1]) | UInt16(bytes[2]) << 8
        switch type {
        case 0x01:
            return .command(opcode: HCIOpcode(rawValue: word), parameters: payload)
        case 0x02:
            return .acl(
                handle: word & 0x0FFF, boundary: ACLBoundary(rawValue: UInt8(word >> 12 & 0x3))!,
                broadcast: UInt8(word >> 14), data: payload)
        case 0x03:
            return .sco(handle: word, data: payload)
        case 0x04:
            return .event(code: bytes[1], parameters: payload)
        default:
            return .iso(header: word, data: payload)
        }
    }
}
