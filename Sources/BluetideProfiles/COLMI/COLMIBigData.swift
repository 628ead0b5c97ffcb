import BluetideBase

/// CRC-16/MODBUS (init 0xFFFF, reflected polynomial 0xA001, no final XOR), the V2 frame check.
/// An empty input gives 0xFFFF; `[0x00]` gives 0x40BF.
public enum COLMICRC16 {
    /// CRC-16/MODBUS of `bytes`.
    public static func modbus<S: Sequence>(_ bytes: S) -> UInt16 where S.Element == UInt8 {
        var crc: UInt16 = 0xFFFF
        for byte in bytes {
            crc ^= UInt16(byte)
            for _ in 0..<8 {
                crc = crc & 1 != 0 ? (crc >> 1) ^ 0xA001 : crc >> 1
            }
        }
        return crc
    }
}

/// Data ids of V2 "big data" frames (byte 1).
public enum COLMIBigDataID {
    /// 0x27 sleep history.
    public static let sleep: UInt8 = 0x27
    /// 0x2A SpO2 history.
    public static let spo2: UInt8 = 0x2A
    /// 0x25 temperature history.
    public static let temperature: UInt8 = 0x25
    /// 0x3E (62) nap history (QRing; layout undocumented).
    public static let nap: UInt8 = 0x3E

    /// A short name, e.g. `sleep`, or `OTA 3`, or `0x44`.
    public static func name(_ id: UInt8) -> String {
        switch id {
        case sleep: return "sleep"
        case spo2: return "SpO2"
        case temperature: return "temperature"
        case nap: return "nap"
        case 0x01...0x05: return "OTA \(id)"
        default: return "0x\([id].hexString)"
        }
    }
}

/// One V2 "big data" frame, in either direction (requests carry no V1 checksum and no padding):
///
/// ```
/// byte 0     0xBC magic
/// byte 1     data id (0x27 sleep, 0x2A SpO2, 0x25 temperature, 0x01...0x05 OTA, …)
/// bytes 2-3  payload length N, uint16 LE
/// bytes 4-5  CRC-16/MODBUS of the payload, LE
/// bytes 6..  payload (N bytes)
/// ```
/// Decoding checks the magic and the CRC; a frame longer than 65 535 payload bytes cannot be built.
public struct COLMIBigDataFrame: GATTCodable, Hashable, Sendable, Encodable {
    /// Byte 0 of every frame.
    public static let magic: UInt8 = 0xBC
    /// Header bytes before the payload.
    public static let headerSize = 6

    /// What the frame carries (byte 1).
    public let dataID: UInt8
    /// The payload (at most 65 535 bytes).
    public let payload: [UInt8]

    /// Throws when the payload is longer than 65 535 bytes.
    public init(dataID: UInt8, payload: [UInt8]) throws(COLMIEncodingError) {
        guard payload.count <= Int(UInt16.max) else {
            throw COLMIEncodingError(field: "COLMI big data.payload", expected: "at most 65535 bytes", found: "\(payload.count) bytes")
        }
        self.dataID = dataID
        self.payload = payload
    }

    /// A frame whose payload is known to fit (cut to 65 535 bytes otherwise, never trapping).
    init(dataID: UInt8, truncating payload: [UInt8]) {
        self.dataID = dataID
        self.payload = Array(payload.prefix(Int(UInt16.max)))
    }

    /// CRC-16/MODBUS of the payload, as carried in bytes 4-5.
    public var crc: UInt16 { COLMICRC16.modbus(payload) }

    /// Request for sleep history. `variant` picks the payload: `ff` (Gadgetbridge, works on R02),
    /// `ff 01` (QRing, needed on R10), or empty (colmi-docs).
    public static func sleepRequest(_ variant: RequestVariant = .all) -> COLMIBigDataFrame {
        COLMIBigDataFrame(dataID: COLMIBigDataID.sleep, truncating: variant.payload)
    }
    /// Request for SpO2 history (`bc 2a 01 00 ff 00 ff`).
    public static var spo2Request: COLMIBigDataFrame { COLMIBigDataFrame(dataID: COLMIBigDataID.spo2, truncating: [0xFF]) }
    /// Request for temperature history (`bc 25 01 00 3e 81 02`).
    public static var temperatureRequest: COLMIBigDataFrame {
        COLMIBigDataFrame(dataID: COLMIBigDataID.temperature, truncating: [0x02])
    }

    /// Payload choices for history requests.
    public enum RequestVariant: Hashable, Sendable, Encodable {
        /// `ff`: all stored history.
        case all
        /// `ff 01`: all history, "protocol v1" (QRing).
        case allProtocolV1
        /// No payload.
        case empty

        var payload: [UInt8] {
            switch self {
            case .all: return [0xFF]
            case .allProtocolV1: return [0xFF, 0x01]
            case .empty: return []
            }
        }
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        let start = reader.offset
        let magic = try reader.readUInt8("COLMI big data.magic")
        guard magic == Self.magic else {
            throw .invalid("COLMI big data.magic", expected: "0xbc", found: "0x\([magic].hexString)", at: start)
        }
        dataID = try reader.readUInt8("COLMI big data.data id")
        let length = try reader.read(UInt16.self, "COLMI big data.length")
        let found = try reader.read(UInt16.self, "COLMI big data.crc")
        payload = try reader.readBytes(Int(length), "COLMI big data.payload")
        let expected = COLMICRC16.modbus(payload)
        guard found == expected else {
            throw .invalid(
                "COLMI big data.crc", expected: "0x\(String(expected, radix: 16))", found: "0x\(String(found, radix: 16))",
                at: start + 4)
        }
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(Self.magic)
        writer.write(dataID)
        writer.write(UInt16(truncatingIfNeeded: payload.count))
        writer.write(crc)
        writer.write(bytes: payload)
    }

    private enum CodingKeys: String, CodingKey { case dataID, dataName, payloadLength, crc, payloadHex }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(dataID, forKey: .dataID)
        try c.encode(COLMIBigDataID.name(dataID), forKey: .dataName)
        try c.encode(payload.count, forKey: .payloadLength)
        try c.encode(crc, forKey: .crc)
        try c.encode(payload.hexString, forKey: .payloadHex)
    }
}

/// Reassembles V2 frames that span several notifications: the first chunk gives N, chunks are
/// concatenated until `6 + N` bytes have arrived, then the CRC is checked.
///
/// Bytes after a complete frame in the same chunk are kept as the start of the next frame when they
/// begin with 0xBC, and dropped otherwise.
/// A chunk that should start a frame but does not begin with 0xBC throws (and is dropped); a CRC
/// mismatch throws (and the frame is dropped). The buffer never exceeds one frame (≤ 65 541 bytes).
public struct COLMIBigDataReassembler: Hashable, Sendable {
    private var buffer: [UInt8] = []

    public init() {}

    /// Bytes of a partial frame held so far.
    public var bufferedByteCount: Int { buffer.count }
    /// True while a frame is partly received.
    public var isInProgress: Bool { !buffer.isEmpty }

    /// Forgets a partial frame.
    public mutating func reset() { buffer = [] }

    /// Total bytes the frame in the buffer needs, when its header has arrived.
    public var expectedFrameSize: Int? {
        guard buffer.count >= 4 else { return nil }
        return COLMIBigDataFrame.headerSize + Int(UInt16(buffer[2]) | UInt16(buffer[3]) << 8)
    }

    /// Adds one notification; returns every frame it completes (usually zero or one).
    public mutating func feed(_ chunk: [UInt8]) throws(DecodingError) -> [COLMIBigDataFrame] {
        if buffer.isEmpty, let first = chunk.first, first != COLMIBigDataFrame.magic {
            throw .invalid("COLMI big data.magic", expected: "0xbc at the start of a frame", found: "0x\([first].hexString)", at: 0)
        }
        buffer += chunk
        var frames: [COLMIBigDataFrame] = []
        while let size = expectedFrameSize, buffer.count >= size {
            let frameBytes = Array(buffer[0..<size])
            buffer.removeFirst(size)
            if let next = buffer.first, next != COLMIBigDataFrame.magic {
                buffer = []
            }
            do {
                frames.append(try COLMIBigDataFrame(exactly: frameBytes))
            } catch {
                buffer = []
                throw error
            }
        }
        return frames
    }
}
