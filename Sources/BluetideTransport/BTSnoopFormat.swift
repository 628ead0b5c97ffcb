import BluetideBase
import Foundation
import BluetideHCI

/// Which way a captured packet went.
public enum SnoopDirection: Sendable, Equatable {
    /// Host to controller (commands, outgoing ACL).
    case sent
    /// Controller to host (events, incoming ACL).
    case received
}

/// The btsnoop capture format (as written by Android, Bumble and BlueZ's btmon, read by Wireshark):
/// a 16-byte file header, then one record per packet, every integer big-endian.
///
/// ```
/// header: "btsnoop\0" | version u32 = 1 | datalink u32 = 1002 (H4: packets start with their type byte)
/// record: original_len u32 | included_len u32 | flags u32 | cumulative_drops u32 | timestamp i64 | bytes
/// flags:  bit 0 = direction (0 sent, 1 received); bit 1 = command/event (1) or data (0)
/// timestamp: microseconds since 0000-01-01 = Unix microseconds + 0x00DCDDB30F2F8000
/// ```
public enum BTSnoop {
    /// The 8 identification bytes at the start of every file.
    public static let magic: [UInt8] = Array("btsnoop".utf8) + [0]
    /// The only format version.
    public static let version: UInt32 = 1
    /// Datalink 1002: HCI UART (H4), each record starts with the H4 packet type byte.
    public static let datalinkH4: UInt32 = 1002
    /// Datalink 1001: un-encapsulated HCI, the packet type is given by the flags (read only).
    public static let datalinkUnencapsulated: UInt32 = 1001
    /// Microseconds from 0000-01-01 to the Unix epoch 1970-01-01, as the format defines it.
    public static let unixEpochOffsetMicroseconds: Int64 = 0x00DC_DDB3_0F2F_8000
    /// Bytes before the first record.
    public static let fileHeaderLength = 16
    /// Bytes of a record before its packet bytes.
    public static let recordHeaderLength = 24

    /// The file header for an H4 capture: `62 74 73 6E 6F 6F 70 00 00 00 00 01 00 00 03 EA`.
    public static var fileHeader: [UInt8] {
        var w = ByteWriter()
        w.write(bytes: magic)
        w.write(version, .big)
        w.write(datalinkH4, .big)
        return w.bytes
    }

    /// The record flags for a packet going `direction`.
    public static func flags(for packet: HCIPacket, direction: SnoopDirection) -> UInt32 {
        let received: UInt32 = direction == .received ? 1 : 0
        switch packet {
        case .command, .event: return 2 | received
        case .acl, .sco, .iso: return received
        }
    }

    /// Converts Unix time in microseconds to a btsnoop timestamp.
    public static func timestamp(unixMicroseconds: Int64) -> Int64 {
        unixMicroseconds &+ unixEpochOffsetMicroseconds
    }

    /// One record (header and H4 bytes) for `packet`, with `timestamp` in btsnoop microseconds.
    public static func record(_ packet: HCIPacket, direction: SnoopDirection, timestamp: Int64) -> [UInt8] {
        var bytes: [UInt8] = []
        appendRecord(packet, direction: direction, timestamp: timestamp, to: &bytes)
        return bytes
    }

    /// Appends the record for `packet` to `bytes` (no intermediate copy of the packet).
    static func appendRecord(_ packet: HCIPacket, direction: SnoopDirection, timestamp: Int64, to bytes: inout [UInt8]) {
        let length = UInt32(truncatingIfNeeded: packet.h4Count)
        var w = ByteWriter()
        w.write(length, .big)  // original length
        w.write(length, .big)  // included length
        w.write(flags(for: packet, direction: direction), .big)
        w.write(UInt32(0), .big)  // cumulative drops
        w.write(timestamp, .big)
        bytes.append(contentsOf: w.bytes)
        bytes.appendH4(packet)
    }
}

/// One packet read back from a btsnoop file.
public struct BTSnoopRecord: Sendable, Equatable {
    /// Which way it went.
    public var direction: SnoopDirection
    /// Microseconds since 0000-01-01 (see ``BTSnoop/unixEpochOffsetMicroseconds``).
    public var timestamp: Int64
    /// The packet.
    public var packet: HCIPacket
    /// Packets the capturing side lost before this one, as recorded.
    public var cumulativeDrops: UInt32

    /// A record; `timestamp` in microseconds since 0000-01-01.
    public init(direction: SnoopDirection, timestamp: Int64, packet: HCIPacket, cumulativeDrops: UInt32 = 0) {
        self.direction = direction
        self.timestamp = timestamp
        self.packet = packet
        self.cumulativeDrops = cumulativeDrops
    }

    /// The timestamp as Unix time in microseconds.
    public var unixMicroseconds: Int64 { timestamp &- BTSnoop.unixEpochOffsetMicroseconds }
}

/// Why a btsnoop file could not be read. The text names the record, its byte offset and the fix.
public enum BTSnoopError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Shorter than the 16-byte file header, or not starting with "btsnoop\0".
    case badHeader(String)
    /// A version other than 1 or a datalink other than 1001/1002.
    case unsupported(String)
    /// A record cut short (the capture was interrupted while writing).
    case truncatedRecord(index: Int, offset: Int, needed: Int, present: Int)
    /// A record whose bytes are not exactly one HCI packet.
    case badPacket(index: Int, offset: Int, reason: String)
    /// The file could not be opened or read.
    case io(String)

    public var description: String {
        switch self {
        case let .badHeader(text), let .unsupported(text), let .io(text): text
        case let .truncatedRecord(index, offset, needed, present):
            "btsnoop record \(index) at byte \(offset) is truncated: needs \(needed) bytes, \(present) present "
                + "(the capture was probably cut off while writing; the records before it are intact)"
        case let .badPacket(index, offset, reason):
            "btsnoop record \(index) at byte \(offset) is not one HCI packet: \(reason)"
        }
    }
}

/// Reads a btsnoop capture (datalink 1002 H4, or 1001) into records, front to back.
public struct BTSnoopReader: Sendable {
    private let bytes: [UInt8]
    private var offset: Int
    private var index = 0
    /// The datalink type from the header.
    public let datalink: UInt32

    /// Checks the file header. Throws ``BTSnoopError`` for a short or foreign header.
    public init(bytes: [UInt8]) throws(BTSnoopError) {
        guard bytes.count >= BTSnoop.fileHeaderLength else {
            throw .badHeader("not a btsnoop file: \(bytes.count) bytes, shorter than the 16-byte header")
        }
        guard Array(bytes[0..<8]) == BTSnoop.magic else {
            throw .badHeader("not a btsnoop file: starts with \(Array(bytes[0..<8]).spacedHex), expected 62 74 73 6E 6F 6F 70 00 (\"btsnoop\\0\")")
        }
        var r = ByteReader(bytes[8..<16])
        let version = (try? r.read(UInt32.self, "version", .big)) ?? 0
        let datalink = (try? r.read(UInt32.self, "datalink", .big)) ?? 0
        guard version == BTSnoop.version else {
            throw .unsupported("btsnoop version \(version) is not supported (expected 1)")
        }
        guard datalink == BTSnoop.datalinkH4 || datalink == BTSnoop.datalinkUnencapsulated else {
            throw .unsupported("btsnoop datalink \(datalink) is not supported (expected 1002 H4 or 1001 HCI)")
        }
        self.bytes = bytes
        self.datalink = datalink
        self.offset = BTSnoop.fileHeaderLength
    }

    /// The next record, or nil at the end of the file.
    public mutating func next() throws(BTSnoopError) -> BTSnoopRecord? {
        guard offset < bytes.count else { return nil }
        let start = offset
        let present = bytes.count - start
        guard present >= BTSnoop.recordHeaderLength else {
            throw .truncatedRecord(index: index, offset: start, needed: BTSnoop.recordHeaderLength, present: present)
        }
        var r = ByteReader(bytes[start..<(start + BTSnoop.recordHeaderLength)])
        // The slice holds exactly the 24 header bytes, so these reads cannot fail.
        let originalLength = (try? r.read(UInt32.self, "original length", .big)) ?? 0
        let includedLength = Int((try? r.read(UInt32.self, "included length", .big)) ?? 0)
        let flags = (try? r.read(UInt32.self, "flags", .big)) ?? 0
        let drops = (try? r.read(UInt32.self, "cumulative drops", .big)) ?? 0
        let timestamp = (try? r.read(Int64.self, "timestamp", .big)) ?? 0
        let needed = BTSnoop.recordHeaderLength + includedLength
        guard present >= needed else {
            throw .truncatedRecord(index: index, offset: start, needed: needed, present: present)
        }
        guard Int(originalLength) == includedLength else {
            throw .badPacket(index: index, offset: start, reason: "only \(includedLength) of \(originalLength) bytes were captured")
        }
        var data = Array(bytes[(start + BTSnoop.recordHeaderLength)..<(start + needed)])
        let direction: SnoopDirection = flags & 1 == 0 ? .sent : .received
        if datalink == BTSnoop.datalinkUnencapsulated {
            let type: UInt8 = flags & 2 == 0 ? 0x02 : (direction == .sent ? 0x01 : 0x04)
            data.insert(type, at: 0)
        }
        var framer = H4Framer()
        let packets: [HCIPacket]
        do {
            packets = try framer.append(data)
            _ = try framer.append([])
        } catch {
            throw .badPacket(index: index, offset: start, reason: error.description)
        }
        guard packets.count == 1, framer.pendingByteCount == 0, let packet = packets.first else {
            throw .badPacket(
                index: index, offset: start,
                reason: packets.isEmpty ? "\(data.count) bytes are shorter than the packet's header says"
                    : "\(data.count) bytes hold \(packets.count) packets and \(framer.pendingByteCount) extra bytes")
        }
        offset = start + needed
        index += 1
        return BTSnoopRecord(direction: direction, timestamp: timestamp, packet: packet, cumulativeDrops: drops)
    }

    /// Every record of `bytes`.
    public static func records(in bytes: [UInt8]) throws(BTSnoopError) -> [BTSnoopRecord] {
        var reader = try BTSnoopReader(bytes: bytes)
        var records: [BTSnoopRecord] = []
        while let record = try reader.next() { records.append(record) }
        return records
    }
}

extension BTSnoopReader {
    /// Every record of the file at `path`.
    public static func records(atPath path: String) throws(BTSnoopError) -> [BTSnoopRecord] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .io("cannot read btsnoop file \(path) (missing or unreadable)")
        }
        return try records(in: [UInt8](data))
    }
}
