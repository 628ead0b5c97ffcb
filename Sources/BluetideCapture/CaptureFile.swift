import BluetideBase
import BluetideHCI
import BluetideTransport
import Foundation

/// One HCI packet taken from a capture file, with where and when it was seen.
public struct CapturedPacket: Sendable, Equatable {
    /// Position of the record in the file (0 is the first record).
    public var index: Int
    /// Host to controller (`sent`) or controller to host (`received`).
    public var direction: SnoopDirection
    /// Unix time of the packet, microseconds.
    public var unixMicroseconds: Int64
    /// The packet.
    public var packet: HCIPacket
    /// Which controller of the capturing machine saw it (btmon's monitor captures hold several;
    /// 0 for single-controller formats).
    public var controller: UInt16

    /// A captured packet; `unixMicroseconds` is the packet's Unix time in microseconds.
    public init(index: Int, direction: SnoopDirection, unixMicroseconds: Int64, packet: HCIPacket, controller: UInt16 = 0) {
        self.index = index
        self.direction = direction
        self.unixMicroseconds = unixMicroseconds
        self.packet = packet
        self.controller = controller
    }
}

/// Why a capture could not be read at all. Damage after a good start is not an error: it ends
/// in a partial ``CaptureFile`` with warnings.
public enum CaptureError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Neither a btsnoop nor a pcap file (the text says what the first bytes were).
    case notACapture(String)
    /// A btsnoop or pcap file of a datalink (or version) this reader does not know.
    case unsupported(String)
    /// The file could not be opened or read.
    case io(String)

    public var description: String {
        switch self {
        case let .notACapture(text), let .unsupported(text), let .io(text): text
        }
    }
}

/// The packets of a capture file, in file order, with what was skipped and why.
///
/// Reads the formats phones and tools write: btsnoop with datalink 1002 (H4: each packet starts
/// with its type byte; Android, Bumble, Bluetide), 1001 (un-encapsulated HCI: the record flags
/// give the packet type) and 2001 (btmon's monitor format: the flags give controller index and
/// opcode), and pcap with link type 201 (`BLUETOOTH_HCI_H4_WITH_PHDR`, Wireshark and tcpdump).
/// A record that is cut short, does not hold one packet, or was not captured whole is skipped
/// with a ``CaptureWarning``; a record cut by the end of the file ends the read with a warning.
public struct CaptureFile: Sendable {
    /// What the file is.
    public enum Format: Sendable, Equatable, CustomStringConvertible {
        /// btsnoop with this datalink (1001, 1002 or 2001).
        case btsnoop(datalink: UInt32)
        /// pcap with this link type (201).
        case pcap(linkType: UInt32)

        public var description: String {
            switch self {
            case let .btsnoop(datalink):
                "btsnoop (datalink \(datalink) \(datalink == 1002 ? "H4" : datalink == 1001 ? "HCI" : "btmon monitor"))"
            case let .pcap(linkType): "pcap (link type \(linkType) Bluetooth HCI H4 with direction)"
            }
        }
    }

    /// The format read.
    public var format: Format
    /// Records in the file (including skipped ones).
    public var recordCount: Int
    /// The packets kept, in file order.
    public var packets: [CapturedPacket]
    /// What was skipped or cut, in file order.
    public var warnings: [CaptureWarning]
    /// ACL records captured cut short (a snap length, Android's filtered snoop log): their
    /// payloads are unreadable.
    public var cutACLRecords = 0

    /// btmon monitor datalink: flags carry the controller index (high 16 bits) and an opcode.
    public static let datalinkMonitor: UInt32 = 2001
    /// pcap link type of H4 packets preceded by a 4-byte direction.
    public static let pcapH4WithDirection: UInt32 = 201

    /// Reads a whole capture from memory.
    /// - Throws: ``CaptureError`` when the file is not a capture or its datalink is unknown.
    public static func read(bytes: [UInt8]) throws(CaptureError) -> CaptureFile {
        if bytes.count >= 8, Array(bytes[0..<8]) == BTSnoop.magic { return try readBTSnoop(bytes) }
        if bytes.count >= 4 {
            let magic = Array(bytes[0..<4])
            if magic == [0xA1, 0xB2, 0xC3, 0xD4] || magic == [0xA1, 0xB2, 0x3C, 0x4D] { return try readPcap(bytes, bigEndian: true, nanoseconds: magic[2] == 0x3C) }
            if magic == [0xD4, 0xC3, 0xB2, 0xA1] || magic == [0x4D, 0x3C, 0xB2, 0xA1] { return try readPcap(bytes, bigEndian: false, nanoseconds: magic[1] == 0x3C) }
            if magic == [0x0A, 0x0D, 0x0D, 0x0A] {
                throw .unsupported("pcapng captures are not read: save the capture as pcap (Wireshark: File > Save As, \"Wireshark/tcpdump - pcap\") or as btsnoop")
            }
        }
        let start = Array(bytes.prefix(8))
        throw .notACapture(
            "not a btsnoop or pcap capture: \(bytes.count) bytes starting \(start.isEmpty ? "(empty file)" : start.spacedHex); "
                + "expected \"btsnoop\\0\" (62 74 73 6E 6F 6F 70 00) or a pcap magic number (e.g. Android's btsnoop_hci.log)")
    }

    /// Reads the capture at `path`.
    public static func read(path: String) throws(CaptureError) -> CaptureFile {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .io("cannot read capture \(path): missing or unreadable (check the path and permissions)")
        }
        return try read(bytes: [UInt8](data))
    }

    // MARK: btsnoop

    private static func readBTSnoop(_ bytes: [UInt8]) throws(CaptureError) -> CaptureFile {
        guard bytes.count >= BTSnoop.fileHeaderLength else {
            throw .notACapture("btsnoop file of \(bytes.count) bytes is shorter than its 16-byte header")
        }
        let version = UInt32(bigEndian: bytes, at: 8)
        let datalink = UInt32(bigEndian: bytes, at: 12)
        guard version == BTSnoop.version else {
            throw .unsupported("btsnoop version \(version) is not supported (expected 1)")
        }
        guard [BTSnoop.datalinkH4, BTSnoop.datalinkUnencapsulated, datalinkMonitor].contains(datalink) else {
            throw .unsupported(
                "btsnoop datalink \(datalink) is not supported: expected 1002 (H4), 1001 (HCI) or 2001 (btmon); "
                    + "\(datalink == 1003 ? "1003 is BCSP and 1004 is three-wire UART, which carry no HCI framing this reader knows" : "capture the HCI traffic with Android's snoop log, btmon -w or a +snoop transport")")
        }
        var file = CaptureFile(format: .btsnoop(datalink: datalink), recordCount: 0, packets: [], warnings: [])
        var offset = BTSnoop.fileHeaderLength
        var index = 0
        while offset < bytes.count {
            let present = bytes.count - offset
            guard present >= BTSnoop.recordHeaderLength else {
                file.warnings.append(CaptureWarning(record: index, "record \(index) at byte \(offset) is cut off: its 24-byte header has \(present) bytes (the capture was probably interrupted); the records before it are kept"))
                break
            }
            let originalLength = Int(UInt32(bigEndian: bytes, at: offset))
            let includedLength = Int(UInt32(bigEndian: bytes, at: offset + 4))
            let flags = UInt32(bigEndian: bytes, at: offset + 8)
            let timestamp = Int64(bitPattern: UInt64(UInt32(bigEndian: bytes, at: offset + 16)) << 32 | UInt64(UInt32(bigEndian: bytes, at: offset + 20)))
            let needed = BTSnoop.recordHeaderLength + includedLength
            guard present >= needed else {
                file.warnings.append(CaptureWarning(record: index, "record \(index) at byte \(offset) is cut off: needs \(needed) bytes, \(present) present (the capture was probably interrupted); the records before it are kept"))
                break
            }
            let body = Array(bytes[(offset + BTSnoop.recordHeaderLength)..<(offset + needed)])
            let unix = timestamp &- BTSnoop.unixEpochOffsetMicroseconds
            defer {
                offset += needed
                index += 1
            }
            if originalLength != includedLength {
                let isACL = datalink == BTSnoop.datalinkH4 ? body.first == 0x02
                    : datalink == BTSnoop.datalinkUnencapsulated ? flags & 2 == 0 : [4, 5].contains(flags & 0xFFFF)
                if isACL { file.cutACLRecords += 1 }
                file.warnings.append(CaptureWarning(record: index, "record \(index) at byte \(offset): only \(includedLength) of \(originalLength) bytes were captured (snap length); skipped"))
                continue
            }
            var direction: SnoopDirection = flags & 1 == 0 ? .sent : .received
            var controller: UInt16 = 0
            let framed: [UInt8]
            switch datalink {
            case BTSnoop.datalinkH4:
                framed = body
            case BTSnoop.datalinkUnencapsulated:
                let type: UInt8 = flags & 2 == 0 ? 0x02 : (direction == .sent ? 0x01 : 0x04)
                framed = [type] + body
            default:
                // btmon: opcode in the low 16 bits, controller index in the high 16 bits.
                controller = UInt16(truncatingIfNeeded: flags >> 16)
                var type: UInt8 = 0
                switch flags & 0xFFFF {
                case 2: type = 0x01; direction = .sent
                case 3: type = 0x04; direction = .received
                case 4: type = 0x02; direction = .sent
                case 5: type = 0x02; direction = .received
                case 18: type = 0x05; direction = .sent
                case 19: type = 0x05; direction = .received
                default: continue  // index added/removed, notes, logging, SCO: not HCI traffic we follow
                }
                framed = [type] + body
            }
            switch frame(framed) {
            case let .success(packet):
                file.packets.append(CapturedPacket(index: index, direction: direction, unixMicroseconds: unix, packet: packet, controller: controller))
            case let .failure(reason):
                file.warnings.append(CaptureWarning(record: index, "record \(index) at byte \(offset) is not one HCI packet (\(reason)); skipped"))
            }
        }
        file.recordCount = index
        return file
    }

    // MARK: pcap

    private static func readPcap(_ bytes: [UInt8], bigEndian: Bool, nanoseconds: Bool) throws(CaptureError) -> CaptureFile {
        func u32(_ at: Int) -> UInt32 {
            let value = UInt32(bigEndian: bytes, at: at)
            return bigEndian ? value : value.byteSwapped
        }
        guard bytes.count >= 24 else { throw .notACapture("pcap file of \(bytes.count) bytes is shorter than its 24-byte header") }
        let linkType = u32(20) & 0x0FFF_FFFF
        guard linkType == pcapH4WithDirection else {
            throw .unsupported(
                "pcap link type \(linkType) is not supported: expected 201 (Bluetooth HCI H4 with direction)"
                    + (linkType == 187 ? "; 187 has no packet directions, capture with 201 or as btsnoop" : ""))
        }
        var file = CaptureFile(format: .pcap(linkType: linkType), recordCount: 0, packets: [], warnings: [])
        var offset = 24
        var index = 0
        while offset < bytes.count {
            let present = bytes.count - offset
            guard present >= 16 else {
                file.warnings.append(CaptureWarning(record: index, "pcap record \(index) at byte \(offset) is cut off: its 16-byte header has \(present) bytes; the records before it are kept"))
                break
            }
            let seconds = Int64(u32(offset))
            let fraction = Int64(u32(offset + 4))
            let included = Int(u32(offset + 8))
            let original = Int(u32(offset + 12))
            guard present >= 16 + included else {
                file.warnings.append(CaptureWarning(record: index, "pcap record \(index) at byte \(offset) is cut off: needs \(16 + included) bytes, \(present) present; the records before it are kept"))
                break
            }
            let body = Array(bytes[(offset + 16)..<(offset + 16 + included)])
            defer {
                offset += 16 + included
                index += 1
            }
            guard included == original else {
                if body.count > 4, body[4] == 0x02 { file.cutACLRecords += 1 }
                file.warnings.append(CaptureWarning(record: index, "pcap record \(index): only \(included) of \(original) bytes were captured (snap length); skipped"))
                continue
            }
            guard body.count >= 5 else {
                file.warnings.append(CaptureWarning(record: index, "pcap record \(index) holds \(body.count) bytes, too few for a direction and a packet; skipped"))
                continue
            }
            let direction: SnoopDirection = UInt32(bigEndian: body, at: 0) & 1 == 0 ? .sent : .received
            let micros = seconds &* 1_000_000 &+ (nanoseconds ? fraction / 1000 : fraction)
            switch frame(Array(body[4...])) {
            case let .success(packet):
                file.packets.append(CapturedPacket(index: index, direction: direction, unixMicroseconds: micros, packet: packet))
            case let .failure(reason):
                file.warnings.append(CaptureWarning(record: index, "pcap record \(index) is not one HCI packet (\(reason)); skipped"))
            }
        }
        file.recordCount = index
        return file
    }

    /// Why a record's bytes are not one H4 packet.
    struct FramingProblem: Error, CustomStringConvertible {
        let text: String
        var description: String { text }
    }

    /// Exactly one H4 packet from `bytes`, or why not.
    private static func frame(_ bytes: [UInt8]) -> Result<HCIPacket, FramingProblem> {
        var framer = H4Framer()
        let packets: [HCIPacket]
        do { packets = try framer.append(bytes) } catch { return .failure(FramingProblem(text: error.description)) }
        if packets.isEmpty { return .failure(FramingProblem(text: "\(bytes.count) bytes are shorter than the packet's header says")) }
        guard packets.count == 1, framer.pendingByteCount == 0, let packet = packets.first else {
            return .failure(FramingProblem(text: "\(bytes.count) bytes hold \(packets.count) packets and \(framer.pendingByteCount) extra bytes"))
        }
        return .success(packet)
    }
}

/// Something the reader or the analysis skipped or could not make sense of; the rest goes on.
public struct CaptureWarning: Sendable, Hashable, CustomStringConvertible, Codable {
    /// The capture record it is about, when it is about one.
    public var record: Int?
    /// What happened and what it means, in one line.
    public var message: String

    /// A warning about `record` (nil: the capture as a whole).
    public init(record: Int?, _ message: String) {
        self.record = record
        self.message = message
    }

    public var description: String { message }
}

extension UInt32 {
    /// The big-endian value at `offset` (callers check the bounds).
    init(bigEndian bytes: [UInt8], at offset: Int) {
        self = UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }
}
