import BluetideBase

/// A date as the ring writes it in sport-detail replies: BCD year − 2000, month, day.
public struct COLMIDate: GATTCodable, Hashable, Sendable, Encodable, CustomStringConvertible {
    /// Full year (2000...2099).
    public var year: Int
    /// Month 1...12.
    public var month: Int
    /// Day of month 1...31.
    public var day: Int

    public init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        year = 2000 + (try COLMIBCD.read(&reader, "COLMI date.year"))
        month = try COLMIBCD.read(&reader, "COLMI date.month")
        day = try COLMIBCD.read(&reader, "COLMI date.day")
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(COLMIBCD.encode(year - 2000)); writer.write(COLMIBCD.encode(month)); writer.write(COLMIBCD.encode(day))
    }

    /// `2023-08-13`.
    public var description: String {
        let t = COLMIDateTime(year: year, month: month, day: day).description
        return String(t.prefix(10))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}

/// One 15-minute record of a day's sport detail (opcode 0x43).
///
/// Layout: `[1..3]` date (BCD), `[4]` quarter-hour index 0...95, `[5]` index of this packet,
/// `[6]` packets in the sequence (last has `[5] == [6] − 1`), `[7..8]` calories, `[9..10]` steps,
/// `[11..12]` distance in metres (u16 LE each).
public struct COLMISportDetailRecord: GATTCodable, Hashable, Sendable, Encodable {
    /// The day, in the ring's time base.
    public var date: COLMIDate
    /// Quarter hour of the day, 0...95 (time = index × 15 minutes).
    public var quarterHourIndex: UInt8
    /// Index of this packet within the sequence.
    public var packetIndex: UInt8
    /// Packets in the sequence.
    public var packetCount: UInt8
    /// Calories as sent; multiply by 10 under the new calorie protocol (see ``COLMISportDetail``).
    public var caloriesRaw: UInt16
    /// Steps in this quarter hour.
    public var steps: UInt16
    /// Distance in metres in this quarter hour.
    public var distanceMeters: UInt16

    public init(date: COLMIDate, quarterHourIndex: UInt8, packetIndex: UInt8, packetCount: UInt8, caloriesRaw: UInt16, steps: UInt16, distanceMeters: UInt16) {
        self.date = date
        self.quarterHourIndex = quarterHourIndex
        self.packetIndex = packetIndex
        self.packetCount = packetCount
        self.caloriesRaw = caloriesRaw
        self.steps = steps
        self.distanceMeters = distanceMeters
    }

    /// Minutes after the ring's midnight at which the quarter hour starts.
    public var minuteOfDay: Int { Int(quarterHourIndex) * 15 }
    /// True for the last packet of the sequence.
    public var isLast: Bool { Int(packetIndex) == Int(packetCount) - 1 }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        date = try COLMIDate(from: &reader)
        quarterHourIndex = try reader.readUInt8("COLMI sport detail.quarter hour")
        packetIndex = try reader.readUInt8("COLMI sport detail.packet index")
        packetCount = try reader.readUInt8("COLMI sport detail.packet count")
        caloriesRaw = try reader.read(UInt16.self, "COLMI sport detail.calories")
        steps = try reader.read(UInt16.self, "COLMI sport detail.steps")
        distanceMeters = try reader.read(UInt16.self, "COLMI sport detail.distance")
    }

    public func encode(to writer: inout ByteWriter) {
        date.encode(to: &writer)
        writer.write(quarterHourIndex); writer.write(packetIndex); writer.write(packetCount)
        writer.write(caloriesRaw); writer.write(steps); writer.write(distanceMeters)
    }
}

/// One packet of the sport-detail reply (opcode 0x43), by byte 1: `FF` no data, `F0` header, else a record.
public enum COLMISportDetailPacket: GATTCodable, Hashable, Sendable, Encodable {
    /// Nothing stored for that day.
    case noData
    /// `43 F0 <records> <flag>`: how many record packets follow; flag 1 = new calorie protocol (×10).
    case header(recordCount: UInt8, newCalorieProtocol: Bool)
    /// One 15-minute record.
    case record(COLMISportDetailRecord)

    public init(from reader: inout ByteReader) throws(DecodingError) {
        switch reader.peek() {
        case 0xFF:
            self = .noData
        case 0xF0:
            try reader.skip(1, "COLMI sport detail.marker")
            self = .header(
                recordCount: try reader.readUInt8("COLMI sport detail.record count"),
                newCalorieProtocol: try reader.readUInt8("COLMI sport detail.calorie protocol") == 1)
        default:
            self = .record(try COLMISportDetailRecord(from: &reader))
        }
    }

    public func encode(to writer: inout ByteWriter) {
        switch self {
        case .noData: writer.write(UInt8(0xFF))
        case let .header(n, flag): writer.write(UInt8(0xF0)); writer.write(n); writer.write(UInt8(flag ? 1 : 0))
        case let .record(r): r.encode(to: &writer)
        }
    }

    /// The 16-byte packet the ring sends.
    public var packet: COLMIPacket { COLMIPacket(opcode: COLMIOpcode.sportDetail, truncating: bytes) }

    public func encode(to encoder: any Encoder) throws {
        struct Header: Encodable { let recordCount: UInt8; let newCalorieProtocol: Bool }
        switch self {
        case .noData: try COLMITaggedEncoding.encode(encoder, kind: "noData", value: nil)
        case let .header(n, f): try COLMITaggedEncoding.encode(encoder, kind: "header", value: Header(recordCount: n, newCalorieProtocol: f))
        case let .record(r): try COLMITaggedEncoding.encode(encoder, kind: "record", value: r)
        }
    }
}

/// A day's sport detail, reassembled.
public struct COLMISportDetail: Hashable, Sendable, Encodable {
    /// Header flag: calories are raw × 10 (tahnok's reading; Gadgetbridge uses them raw).
    public var newCalorieProtocol: Bool
    /// Records in arrival order.
    public var records: [COLMISportDetailRecord]

    public init(newCalorieProtocol: Bool, records: [COLMISportDetailRecord]) {
        self.newCalorieProtocol = newCalorieProtocol
        self.records = records
    }

    /// Calories of a record: raw × 10 under the new protocol (unit probably small calories), else raw.
    public func calories(of record: COLMISportDetailRecord) -> Int {
        Int(record.caloriesRaw) * (newCalorieProtocol ? 10 : 1)
    }

    /// Steps over all records.
    public var totalSteps: Int { records.reduce(0) { $0 + Int($1.steps) } }
    /// Distance over all records, metres.
    public var totalDistanceMeters: Int { records.reduce(0) { $0 + Int($1.distanceMeters) } }
    /// Calories over all records (see ``calories(of:)``).
    public var totalCalories: Int { records.reduce(0) { $0 + calories(of: $1) } }

    /// The packets the ring sends: header then records.
    public var packets: [COLMIPacket] {
        [COLMISportDetailPacket.header(recordCount: UInt8(clamping: records.count), newCalorieProtocol: newCalorieProtocol).packet]
            + records.map { COLMISportDetailPacket.record($0).packet }
    }

    private enum CodingKeys: String, CodingKey { case newCalorieProtocol, records, totalSteps, totalDistanceMeters, totalCalories }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(newCalorieProtocol, forKey: .newCalorieProtocol)
        try c.encode(records, forKey: .records)
        try c.encode(totalSteps, forKey: .totalSteps)
        try c.encode(totalDistanceMeters, forKey: .totalDistanceMeters)
        try c.encode(totalCalories, forKey: .totalCalories)
    }
}

/// Reassembles a day's sport detail (opcode 0x43) from packets fed one by one; other opcodes are
/// ignored. Complete at the record whose index is its count − 1. A record before any header throws.
public struct COLMISportDetailAssembler: Hashable, Sendable {
    private struct Header: Hashable, Sendable {
        var count: Int
        var newProtocol: Bool
    }
    private var header: Header?
    private var records: [COLMISportDetailRecord] = []

    public init() {}

    /// Forgets any partial day.
    public mutating func reset() { self = Self() }

    /// Feeds one V1 packet.
    public mutating func feed(_ packet: COLMIPacket) throws(DecodingError) -> COLMIAssemblyProgress<COLMISportDetail> {
        guard packet.opcode == COLMIOpcode.sportDetail else { return .ignored }
        let part: COLMISportDetailPacket
        do { part = try COLMISportDetailPacket(bytes: packet.payload) } catch {
            reset()
            throw error
        }
        switch part {
        case .noData:
            reset()
            return .noData
        case let .header(n, flag):
            reset()
            header = Header(count: Int(n), newProtocol: flag)
            return .inProgress(received: 0, total: Int(n))
        case let .record(r):
            guard let header else {
                throw .invalid("COLMI sport detail.sequence", expected: "header (F0) first", found: "record \(r.packetIndex)", at: 5)
            }
            records.append(r)
            guard r.isLast || records.count >= 255 else {
                return .inProgress(received: records.count, total: max(header.count, Int(r.packetCount)))
            }
            let day = COLMISportDetail(newCalorieProtocol: header.newProtocol, records: records)
            reset()
            return .complete(day)
        }
    }
}
