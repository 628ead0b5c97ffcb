import BluetideBase

/// One packet of the heart-rate log reply (opcode 0x15), by byte 1 = sequence number *k*.
///
/// - `k = 0xFF`: no data stored for that day.
/// - `k = 0`: header, `[2]` total packets including the header (usually 24), `[3]` slot width in minutes (5).
/// - `k = 1`: `[2..5]` uint32 LE timestamp (echo of the request), `[6..14]` bpm for slots 0...8.
/// - `k ≥ 2`: `[2..14]` bpm for 13 slots starting at `9 + (k − 2)·13`.
public enum COLMIHeartRateLogPacket: GATTCodable, Hashable, Sendable, Encodable {
    /// Nothing stored for the requested day.
    case noData
    /// Start of a day's log.
    case header(packetCount: UInt8, slotMinutes: UInt8)
    /// Sequence 1: the day's timestamp (ring time base, seconds since 1970) and slots 0...8 (bpm, 0 = none).
    case first(timestamp: UInt32, bpm: [UInt8])
    /// Sequence `index` ≥ 2: 13 slots (bpm, 0 = none).
    case values(index: UInt8, bpm: [UInt8])

    /// Slots carried by the `k = 1` packet.
    public static let firstSlotCount = 9
    /// Slots carried by each `k ≥ 2` packet.
    public static let slotsPerPacket = 13

    /// The sequence number byte (0xFF for no data).
    public var sequence: UInt8 {
        switch self {
        case .noData: return 0xFF
        case .header: return 0
        case .first: return 1
        case let .values(index, _): return index
        }
    }

    /// Reads bytes 1...14 of the packet.
    public init(from reader: inout ByteReader) throws(DecodingError) {
        let k = try reader.readUInt8("COLMI HR log.sequence")
        switch k {
        case 0xFF:
            self = .noData
        case 0:
            self = .header(
                packetCount: try reader.readUInt8("COLMI HR log.packet count"),
                slotMinutes: try reader.readUInt8("COLMI HR log.slot minutes"))
        case 1:
            self = .first(
                timestamp: try reader.read(UInt32.self, "COLMI HR log.timestamp"),
                bpm: try reader.readBytes(Self.firstSlotCount, "COLMI HR log.slots 0-8"))
        default:
            self = .values(index: k, bpm: try reader.readBytes(Self.slotsPerPacket, "COLMI HR log.slots"))
        }
    }

    /// Writes bytes 1...14; value arrays are cut or zero padded to 9 or 13 slots.
    public func encode(to writer: inout ByteWriter) {
        func fixed(_ values: [UInt8], _ n: Int) -> [UInt8] {
            Array(values.prefix(n)) + Array(repeating: 0, count: max(0, n - values.count))
        }
        writer.write(sequence)
        switch self {
        case .noData: break
        case let .header(count, minutes): writer.write(count); writer.write(minutes)
        case let .first(timestamp, bpm): writer.write(timestamp); writer.write(bytes: fixed(bpm, Self.firstSlotCount))
        case let .values(_, bpm): writer.write(bytes: fixed(bpm, Self.slotsPerPacket))
        }
    }

    /// The 16-byte packet the ring sends.
    public var packet: COLMIPacket { COLMIPacket(opcode: COLMIOpcode.heartRateLog, truncating: bytes) }

    public func encode(to encoder: any Encoder) throws {
        struct Header: Encodable { let packetCount: UInt8; let slotMinutes: UInt8 }
        struct First: Encodable { let timestamp: UInt32; let bpm: [UInt8] }
        struct Values: Encodable { let sequence: UInt8; let firstSlot: Int; let bpm: [UInt8] }
        switch self {
        case .noData: try COLMITaggedEncoding.encode(encoder, kind: "noData", value: nil)
        case let .header(c, m): try COLMITaggedEncoding.encode(encoder, kind: "header", value: Header(packetCount: c, slotMinutes: m))
        case let .first(t, b): try COLMITaggedEncoding.encode(encoder, kind: "first", value: First(timestamp: t, bpm: b))
        case let .values(k, b):
            let firstSlot = Self.firstSlotCount + (Int(k) - 2) * Self.slotsPerPacket
            try COLMITaggedEncoding.encode(encoder, kind: "values", value: Values(sequence: k, firstSlot: firstSlot, bpm: b))
        }
    }
}

/// One slot of a day's heart-rate log.
public struct COLMIHeartRateSlot: Hashable, Sendable, Encodable {
    /// Slot number from the ring's midnight (0...287 for 5-minute slots).
    public var index: Int
    /// Minutes after the ring's midnight.
    public var minuteOfDay: Int
    /// Start of the slot, seconds since 1970 in the ring's time base (UTC under Bluetide's convention).
    public var timestamp: Int64
    /// Heart rate in bpm; 0 means not measured.
    public var bpm: UInt8
}

/// A whole day's heart-rate log, reassembled from its packets.
///
/// Slots start at the ring's own midnight: the day is the one containing ``requestTimestamp``
/// (the echoed request), and slot *s* starts `s × slotMinutes` minutes after its 00:00.
public struct COLMIHeartRateLog: Hashable, Sendable, Encodable {
    /// The timestamp echoed in packet 1 (seconds since 1970, ring time base).
    public var requestTimestamp: UInt32
    /// Packets in the reply, including the header (usually 24).
    public var packetCount: Int
    /// Slot width in minutes (5).
    public var slotMinutes: Int
    /// Values received before trimming to one day (295 for 24 packets).
    public var receivedValueCount: Int
    /// Heart rate per slot in bpm (0 = not measured), trimmed to one day (288 for 5-minute slots).
    public var bpmBySlot: [UInt8]

    public init(requestTimestamp: UInt32, slotMinutes: Int = 5, bpmBySlot: [UInt8], packetCount: Int? = nil, receivedValueCount: Int? = nil) {
        self.requestTimestamp = requestTimestamp
        self.slotMinutes = slotMinutes
        self.bpmBySlot = bpmBySlot
        let first = COLMIHeartRateLogPacket.firstSlotCount, per = COLMIHeartRateLogPacket.slotsPerPacket
        let packets = packetCount ?? 2 + max(0, (bpmBySlot.count - first + per - 1) / per)
        self.packetCount = packets
        self.receivedValueCount = receivedValueCount ?? first + max(0, packets - 2) * per
    }

    /// The ring's midnight of the requested day, seconds since 1970 in the ring's time base.
    public var dayStartTimestamp: Int64 {
        let t = Int64(requestTimestamp)
        return t - t % 86_400
    }

    /// Every slot with its time.
    public var slots: [COLMIHeartRateSlot] {
        bpmBySlot.enumerated().map { i, bpm in
            COLMIHeartRateSlot(
                index: i, minuteOfDay: i &* slotMinutes, timestamp: dayStartTimestamp &+ Int64(i &* slotMinutes &* 60), bpm: bpm)
        }
    }

    /// Only the slots with a measurement.
    public var measurements: [COLMIHeartRateSlot] { slots.filter { $0.bpm != 0 } }

    /// The log with every slot starting after `timestamp` (ring time base) set to 0, as clients do
    /// for today's log (the ring may repeat stale values in slots that have not happened yet).
    public func clearingSlots(after timestamp: Int64) -> COLMIHeartRateLog {
        var copy = self
        for slot in slots where slot.timestamp > timestamp { copy.bpmBySlot[slot.index] = 0 }
        return copy
    }

    /// The packets the ring sends for this log (header, packet 1, then 13 slots per packet).
    public var packets: [COLMIPacket] {
        let first = COLMIHeartRateLogPacket.firstSlotCount, per = COLMIHeartRateLogPacket.slotsPerPacket
        var out = [COLMIHeartRateLogPacket.header(packetCount: UInt8(clamping: packetCount), slotMinutes: UInt8(clamping: slotMinutes)).packet]
        out.append(COLMIHeartRateLogPacket.first(timestamp: requestTimestamp, bpm: Array(bpmBySlot.prefix(first))).packet)
        var k = 2
        while k < min(packetCount, 255) {
            let start = first + (k - 2) * per
            let chunk = start < bpmBySlot.count ? Array(bpmBySlot[start..<min(start + per, bpmBySlot.count)]) : []
            out.append(COLMIHeartRateLogPacket.values(index: UInt8(k), bpm: chunk).packet)
            k += 1
        }
        return out
    }

    private enum CodingKeys: String, CodingKey {
        case requestTimestamp, dayStartTimestamp, dayStart, packetCount, slotMinutes, receivedValueCount, bpmBySlot, measurements
    }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(requestTimestamp, forKey: .requestTimestamp)
        try c.encode(dayStartTimestamp, forKey: .dayStartTimestamp)
        try c.encode(COLMIDateTime(secondsSince1970: dayStartTimestamp).description, forKey: .dayStart)
        try c.encode(packetCount, forKey: .packetCount)
        try c.encode(slotMinutes, forKey: .slotMinutes)
        try c.encode(receivedValueCount, forKey: .receivedValueCount)
        try c.encode(bpmBySlot, forKey: .bpmBySlot)
        try c.encode(measurements, forKey: .measurements)
    }
}

/// Packets received of the total, for JSON.
struct COLMIAssemblyCounts: Encodable {
    let received: Int
    let total: Int
}

/// Where a multi-packet reply stands after one more packet.
public enum COLMIAssemblyProgress<Result: Sendable & Hashable & Encodable>: Hashable, Sendable, Encodable {
    /// The packet belongs to another command (unsolicited `73`, `2F`, …); nothing changed.
    case ignored
    /// The ring has nothing stored (`k = 0xFF`).
    case noData
    /// `received` of `total` packets so far (total is 0 until the header arrives).
    case inProgress(received: Int, total: Int)
    /// The whole reply.
    case complete(Result)

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .ignored: try COLMITaggedEncoding.encode(encoder, kind: "ignored", value: nil)
        case .noData: try COLMITaggedEncoding.encode(encoder, kind: "noData", value: nil)
        case let .inProgress(r, t): try COLMITaggedEncoding.encode(encoder, kind: "inProgress", value: COLMIAssemblyCounts(received: r, total: t))
        case let .complete(result): try COLMITaggedEncoding.encode(encoder, kind: "complete", value: result)
        }
    }
}

/// Reassembles a day's heart-rate log (opcode 0x15) from packets fed one by one.
///
/// Packets with other opcodes are ignored (the ring sends `73` and `2F` at any time). A new header
/// restarts the day. Packet numbers at or past the header's count, a values packet before any header,
/// or a last packet arriving with earlier ones missing throw, naming the sequence number; the
/// assembler then starts over.
public struct COLMIHeartRateLogAssembler: Hashable, Sendable {
    private var total = 0
    private var slotMinutes = 0
    private var timestamp: UInt32?
    private var chunks: [Int: [UInt8]] = [:]

    public init() {}

    /// Forgets any partial log.
    public mutating func reset() { self = Self() }

    /// Feeds one V1 packet.
    public mutating func feed(_ packet: COLMIPacket) throws(DecodingError) -> COLMIAssemblyProgress<COLMIHeartRateLog> {
        guard packet.opcode == COLMIOpcode.heartRateLog else { return .ignored }
        let part: COLMIHeartRateLogPacket
        do { part = try COLMIHeartRateLogPacket(bytes: packet.payload) } catch {
            reset()
            throw error
        }
        switch part {
        case .noData:
            reset()
            return .noData
        case let .header(count, minutes):
            reset()
            guard count >= 2 else {
                throw .invalid("COLMI HR log.packet count", expected: "at least 2", found: "\(count)", at: 2)
            }
            guard minutes > 0, 1440 % Int(minutes) == 0 else {
                throw .invalid("COLMI HR log.slot minutes", expected: "a divisor of 1440", found: "\(minutes)", at: 3)
            }
            total = Int(count)
            slotMinutes = Int(minutes)
            return .inProgress(received: 1, total: total)
        case let .first(stamp, bpm):
            try accept(1)
            timestamp = stamp
            chunks[1] = bpm
        case let .values(k, bpm):
            try accept(Int(k))
            chunks[Int(k)] = bpm
        }
        let k = Int(part.sequence)
        guard k == total - 1 else { return .inProgress(received: chunks.count + 1, total: total) }
        let missing = (1..<total).filter { chunks[$0] == nil }
        guard missing.isEmpty, let stamp = timestamp else {
            reset()
            throw .invalid(
                "COLMI HR log.sequence", expected: "packets 1...\(k - 1) before packet \(k)",
                found: "missing \(missing.map(String.init).joined(separator: ", "))")
        }
        var values: [UInt8] = []
        for i in 1..<total { values += chunks[i] ?? [] }
        let perDay = 1440 / slotMinutes
        let log = COLMIHeartRateLog(
            requestTimestamp: stamp, slotMinutes: slotMinutes, bpmBySlot: Array(values.prefix(perDay)),
            packetCount: total, receivedValueCount: values.count)
        reset()
        return .complete(log)
    }

    private mutating func accept(_ k: Int) throws(DecodingError) {
        guard total > 0 else {
            throw .invalid("COLMI HR log.sequence", expected: "header (0) first", found: "\(k)", at: 1)
        }
        guard k < total else {
            reset()
            throw .invalid("COLMI HR log.sequence", expected: "below the packet count", found: "\(k)", at: 1)
        }
    }
}
