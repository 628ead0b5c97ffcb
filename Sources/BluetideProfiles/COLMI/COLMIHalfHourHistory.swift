import BluetideBase

/// One packet of a stress (0x37) or HRV (0x39) history reply, by byte 1 = *k*. Layout as
/// Gadgetbridge reads it (colmi-docs disagrees for k > 1):
/// - `k = 0xFF`: no data; `k = 0`: header, `[2]` total packets, `[3]` range;
/// - `k = 1`: `[2]` unknown, `[3..14]` 12 values (slots 0...11);
/// - `k ≥ 2`: `[2..14]` 13 values, slot `12 + (k − 2)·13 + i`.
/// Slots are 30 minutes from the ring's midnight; 0 means no measurement.
public enum COLMIHalfHourHistoryPacket: GATTCodable, Hashable, Sendable, Encodable {
    /// Nothing stored.
    case noData
    /// Header: total packets including the header, and the "range" byte.
    case header(packetCount: UInt8, range: UInt8)
    /// Packet 1: an unknown byte, then slots 0...11.
    case first(unknown: UInt8, values: [UInt8])
    /// Packet `index` ≥ 2: 13 slots.
    case values(index: UInt8, values: [UInt8])

    /// The sequence byte.
    public var sequence: UInt8 {
        switch self {
        case .noData: return 0xFF
        case .header: return 0
        case .first: return 1
        case let .values(k, _): return k
        }
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        let k = try reader.readUInt8("COLMI history.sequence")
        switch k {
        case 0xFF: self = .noData
        case 0:
            self = .header(
                packetCount: try reader.readUInt8("COLMI history.packet count"), range: try reader.readUInt8("COLMI history.range"))
        case 1:
            self = .first(unknown: try reader.readUInt8("COLMI history.unknown"), values: try reader.readBytes(12, "COLMI history.slots 0-11"))
        default:
            self = .values(index: k, values: try reader.readBytes(13, "COLMI history.slots"))
        }
    }

    public func encode(to writer: inout ByteWriter) {
        func fixed(_ v: [UInt8], _ n: Int) -> [UInt8] { Array(v.prefix(n)) + Array(repeating: 0, count: max(0, n - v.count)) }
        writer.write(sequence)
        switch self {
        case .noData: break
        case let .header(c, r): writer.write(c); writer.write(r)
        case let .first(u, v): writer.write(u); writer.write(bytes: fixed(v, 12))
        case let .values(_, v): writer.write(bytes: fixed(v, 13))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        struct Header: Encodable { let packetCount: UInt8; let range: UInt8 }
        struct Values: Encodable { let sequence: UInt8; let firstSlot: Int; let values: [UInt8] }
        switch self {
        case .noData: try COLMITaggedEncoding.encode(encoder, kind: "noData", value: nil)
        case let .header(c, r): try COLMITaggedEncoding.encode(encoder, kind: "header", value: Header(packetCount: c, range: r))
        case let .first(_, v): try COLMITaggedEncoding.encode(encoder, kind: "values", value: Values(sequence: 1, firstSlot: 0, values: v))
        case let .values(k, v):
            try COLMITaggedEncoding.encode(encoder, kind: "values", value: Values(sequence: k, firstSlot: 12 + (Int(k) - 2) * 13, values: v))
        }
    }
}

/// A day of stress or HRV history in 30-minute slots.
public struct COLMIHalfHourHistory: Hashable, Sendable, Encodable {
    /// Which history: `stress` (index, 0 = none) or `hrv` (ms, 0 = none).
    public var kind: String
    /// Value per 30-minute slot from the ring's midnight (48 slots; 0 = none).
    public var valuesBySlot: [UInt8]

    public init(kind: String, valuesBySlot: [UInt8]) {
        self.kind = kind
        self.valuesBySlot = valuesBySlot
    }

    /// The packets the ring sends for this history (header with 5 packets, as Gadgetbridge expects).
    public func packets(opcode: UInt8) -> [COLMIPacket] {
        var out: [COLMIHalfHourHistoryPacket] = [.header(packetCount: 5, range: 30), .first(unknown: 0, values: Array(valuesBySlot.prefix(12)))]
        for k in 2...4 {
            let start = 12 + (k - 2) * 13
            out.append(.values(index: UInt8(k), values: start < valuesBySlot.count ? Array(valuesBySlot[start..<min(start + 13, valuesBySlot.count)]) : []))
        }
        return out.map { COLMIPacket(opcode: opcode, truncating: $0.bytes) }
    }
}

/// Reassembles a stress (0x37) or HRV (0x39) history; packets with other opcodes are ignored.
/// Complete at packet `total − 1` (from the header); a header count of 0 is read as 5 (Gadgetbridge
/// treats k = 4 as the last packet).
public struct COLMIHalfHourHistoryAssembler: Hashable, Sendable {
    /// The opcode this assembler collects (0x37 or 0x39).
    public let opcode: UInt8
    private var total = 0
    private var values: [Int: [UInt8]] = [:]

    public init(opcode: UInt8) { self.opcode = opcode }

    public mutating func reset() { self = Self(opcode: opcode) }

    /// Feeds one V1 packet.
    public mutating func feed(_ packet: COLMIPacket) throws(DecodingError) -> COLMIAssemblyProgress<COLMIHalfHourHistory> {
        guard packet.opcode == opcode else { return .ignored }
        let part: COLMIHalfHourHistoryPacket
        do { part = try COLMIHalfHourHistoryPacket(bytes: packet.payload) } catch {
            reset()
            throw error
        }
        let k: Int
        switch part {
        case .noData:
            reset()
            return .noData
        case let .header(count, _):
            reset()
            total = count == 0 ? 5 : Int(count)
            return .inProgress(received: 1, total: total)
        case let .first(_, v): k = 1; values[1] = v
        case let .values(i, v): k = Int(i); values[k] = v
        }
        guard total > 0 else {
            values = [:]
            throw .invalid("COLMI history.sequence", expected: "header (0) first", found: "\(k)", at: 1)
        }
        guard k >= total - 1 else { return .inProgress(received: values.count + 1, total: total) }
        var all: [UInt8] = []
        for i in 1..<max(total, 2) { all += values[i] ?? Array(repeating: 0, count: i == 1 ? 12 : 13) }
        let history = COLMIHalfHourHistory(kind: opcode == COLMIOpcode.hrvHistory ? "hrv" : "stress", valuesBySlot: Array(all.prefix(48)))
        reset()
        return .complete(history)
    }
}
