import BluetideBase

/// Which checksum an ANT message used.
public enum ANTChecksumConvention: String, Sendable, Equatable, Encodable {
    /// The ANT standard: XOR of every preceding byte, sync byte included (what Bluetide sends).
    case xor
    /// Sum modulo 256 of every byte after the sync byte, as the Tacx how-to's prose, pycycling
    /// and Zwift's road-feel frames do. Tacx NEOs accept both.
    case sum

    /// The checksum of `bytes` (sync byte first, checksum byte excluded) in this convention.
    public func checksum(of bytes: [UInt8]) -> UInt8 {
        switch self {
        case .xor: return bytes.reduce(0, ^)
        case .sum: return bytes.dropFirst().reduce(0, &+)
        }
    }
}

/// ANT message ID of a data frame.
public struct ANTMessageID: TrainerNamedCode {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// 0x4E: broadcast data, what the trainer sends (and what Zwift was seen writing).
    public static let broadcastData = Self(rawValue: 0x4E)
    /// 0x4F: acknowledged data, what apps usually write for commands.
    public static let acknowledgedData = Self(rawValue: 0x4F)
    public static let names: [UInt8: String] = [0x4E: "broadcast", 0x4F: "acknowledged"]
}

/// One ANT message carrying an FE-C data page, as Tacx "FE-C over BLE" sends it in one BLE
/// value (notify on `6E40FEC2-…`, write to `6E40FEC3-…`).
///
/// `A4 | LEN=09 | MSG-ID 4E/4F | CH | 8-byte page | CHK`, 13 bytes. Decoding accepts either
/// checksum convention and reports which one matched; any other checksum throws, naming both
/// acceptable values and the one found. Bytes after the checksum are ignored.
public struct FECFrame: GATTCodable, Equatable, Sendable, Encodable, CustomStringConvertible {
    /// The ANT sync byte that starts every message.
    public static let sync: UInt8 = 0xA4
    /// LEN of a data-page message: channel + 8 page bytes.
    public static let dataLength: UInt8 = 9
    /// Channel number used by convention (the trainer ignores it on writes).
    public static let defaultChannel: UInt8 = 5

    /// Broadcast (0x4E) or acknowledged (0x4F) data.
    public var messageID: ANTMessageID
    /// ANT channel number, 5 by convention.
    public var channel: UInt8
    /// The data page.
    public var page: FECPage
    /// The checksum convention: reported by decoding (XOR when both conventions give the same
    /// byte); used when encoding (XOR by default).
    public var checksumConvention: ANTChecksumConvention

    public init(
        messageID: ANTMessageID = .broadcastData, channel: UInt8 = FECFrame.defaultChannel, page: FECPage,
        checksumConvention: ANTChecksumConvention = .xor
    ) {
        self.messageID = messageID
        self.channel = channel
        self.page = page
        self.checksumConvention = checksumConvention
    }

    /// A command frame as apps write it: acknowledged data, channel 5, XOR checksum.
    public static func command(_ page: FECPage) -> FECFrame {
        FECFrame(messageID: .acknowledgedData, page: page)
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        let context = "ANT message"
        let start = reader.offset
        let sync = try reader.readUInt8("\(context).sync")
        guard sync == Self.sync else {
            throw .invalid("\(context).sync", expected: "0xA4", found: "0x\([sync].hexString)", at: start)
        }
        let length = try reader.readUInt8("\(context).length")
        guard length == Self.dataLength else {
            throw .invalid(
                "\(context).length", expected: "9 (channel + 8-byte data page)", found: "\(length)", at: start + 1)
        }
        let id = try reader.readUInt8("\(context).message ID")
        guard id == ANTMessageID.broadcastData.rawValue || id == ANTMessageID.acknowledgedData.rawValue else {
            throw .invalid(
                "\(context).message ID", expected: "0x4E (broadcast) or 0x4F (acknowledged)",
                found: "0x\([id].hexString)", at: start + 2)
        }
        let channel = try reader.readUInt8("\(context).channel")
        let pageBytes = try reader.readBytes(8, "\(context).data page")
        let checksumOffset = reader.offset
        let found = try reader.readUInt8("\(context).checksum")
        let covered = [sync, length, id, channel] + pageBytes
        let xor = ANTChecksumConvention.xor.checksum(of: covered)
        let sum = ANTChecksumConvention.sum.checksum(of: covered)
        let convention: ANTChecksumConvention
        if found == xor {
            convention = .xor
        } else if found == sum {
            convention = .sum
        } else {
            throw .invalid(
                "\(context).checksum",
                expected: "0x\([xor].hexString.uppercased()) (XOR incl. sync) or 0x\([sum].hexString.uppercased()) (sum excl. sync)",
                found: "0x\([found].hexString.uppercased())", at: checksumOffset)
        }
        var pageReader = ByteReader(pageBytes)
        do {
            self.page = try FECPage(from: &pageReader)
        } catch {
            throw error.within(context)
        }
        self.messageID = ANTMessageID(rawValue: id)
        self.channel = channel
        self.checksumConvention = convention
    }

    /// Decodes a frame even when its checksum matches neither convention, returning the checksum
    /// error alongside, for callers that log it and keep the page (the Tacx notes advise not to
    /// drop valid-looking pages). Any other problem still throws. A frame kept this way reports
    /// ``ANTChecksumConvention/xor`` and re-encodes with a correct XOR checksum.
    public static func decodeKeepingBadChecksum(
        _ bytes: [UInt8]
    ) throws(DecodingError) -> (frame: FECFrame, checksumError: DecodingError?) {
        do {
            return (try FECFrame(bytes: bytes), nil)
        } catch {
            guard error.field == "ANT message.checksum", case .invalidValue = error.kind, bytes.count >= 13 else {
                throw error
            }
            var repaired = bytes
            repaired[12] = ANTChecksumConvention.xor.checksum(of: Array(bytes[0..<12]))
            return (try FECFrame(bytes: repaired), error)
        }
    }

    public func encode(to writer: inout ByteWriter) {
        let pageBytes = page.bytes
        var covered = [Self.sync, Self.dataLength, messageID.rawValue, channel]
        covered += pageBytes.count >= 8 ? Array(pageBytes.prefix(8)) : pageBytes + Array(repeating: 0xFF, count: 8 - pageBytes.count)
        writer.write(bytes: covered)
        writer.write(checksumConvention.checksum(of: covered))
    }

    public var description: String {
        "\(page) [\(messageID), ch \(channel), \(checksumConvention == .xor ? "XOR" : "sum") checksum]"
    }
}
