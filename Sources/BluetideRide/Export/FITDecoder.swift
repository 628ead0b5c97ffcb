/// One data message read from a FIT file: its global message number and each field's raw
/// bytes by field number, with the byte order its definition gave (developer fields left out).
public struct FITDecodedMessage: Sendable, Hashable {
    /// The global message number (0 file_id, 26 workout, 27 workout_step, …).
    public var global: UInt16
    /// Each field's bytes, by field definition number.
    public var fields: [UInt8: [UInt8]]
    /// Whether the definition said big-endian.
    public var bigEndian: Bool

    /// Field `number` as an unsigned integer (nil when absent, longer than 8 bytes, or all
    /// ones: FIT's invalid value for unsigned types).
    public func unsigned(_ number: UInt8) -> UInt64? {
        guard let bytes = fields[number], !bytes.isEmpty, bytes.count <= 8 else { return nil }
        let ordered = bigEndian ? bytes : bytes.reversed()
        let value = ordered.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let invalid: UInt64 = bytes.count == 8 ? .max : (1 << (8 * UInt64(bytes.count))) - 1
        return value == invalid ? nil : value
    }

    /// Field `number` as a string (up to its first zero byte; nil when absent or empty).
    public func string(_ number: UInt8) -> String? {
        guard let bytes = fields[number] else { return nil }
        let text = String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        return text.isEmpty ? nil : text
    }
}

/// Why a FIT file could not be read: where (byte offset) and what was wrong.
public struct FITDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong, e.g. `byte 14: a data message of local type 3, which no definition gave`.
    public var message: String
    public var description: String { message }
}

/// Reads FIT files: checks the header, the header's and the file's CRCs, then reads definition
/// and data messages (normal and compressed-timestamp headers, either byte order, developer
/// fields skipped). No I/O; never traps on malformed input.
public enum FITDecoder {
    /// The data messages of `bytes`, in order. Throws ``FITDecodingError`` naming the byte.
    public static func messages(_ bytes: [UInt8]) throws(FITDecodingError) -> [FITDecodedMessage] {
        func fail(_ offset: Int, _ text: String) -> FITDecodingError { FITDecodingError(message: "byte \(offset): \(text)") }
        guard bytes.count >= 12 else { throw fail(0, "expected a FIT header of 12 or 14 bytes, found \(bytes.count) bytes in all") }
        let headerSize = Int(bytes[0])
        guard headerSize == 12 || headerSize == 14, bytes.count >= headerSize, Array(bytes[8..<12]) == Array(".FIT".utf8) else {
            throw fail(0, "not a FIT file (expected a 12- or 14-byte header ending in \".FIT\")")
        }
        if headerSize == 14 {
            let stored = UInt16(bytes[12]) | UInt16(bytes[13]) << 8
            if stored != 0, stored != FITCRC.checksum(bytes[0..<12]) { throw fail(12, "the header's CRC does not match: the file is damaged") }
        }
        let dataSize = Int(bytes[4]) | Int(bytes[5]) << 8 | Int(bytes[6]) << 16 | Int(bytes[7]) << 24
        let end = headerSize + dataSize
        guard end + 2 <= bytes.count else {
            throw fail(4, "the header says \(dataSize) bytes of messages and a CRC, the file has \(bytes.count - headerSize)")
        }
        guard FITCRC.checksum(bytes[0..<(end + 2)]) == 0 else { throw fail(end, "the file's CRC does not match: the file is damaged") }

        struct Definition {
            var global: UInt16
            var bigEndian: Bool
            var fields: [(number: UInt8, size: Int)]
            var developerBytes: Int
        }
        var definitions: [UInt8: Definition] = [:]
        var messages: [FITDecodedMessage] = []
        var at = headerSize
        while at < end {
            let header = bytes[at]
            let start = at
            at += 1
            if header & 0x80 == 0, header & 0x40 != 0 {
                // Definition: reserved, architecture, global (2), field count, fields (3 each), developer fields.
                guard at + 5 <= end else { throw fail(start, "a definition message cut short") }
                let bigEndian = bytes[at + 1] == 1
                let global = bigEndian ? UInt16(bytes[at + 2]) << 8 | UInt16(bytes[at + 3]) : UInt16(bytes[at + 2]) | UInt16(bytes[at + 3]) << 8
                let count = Int(bytes[at + 4])
                at += 5
                guard at + 3 * count <= end else { throw fail(start, "a definition of \(count) fields cut short") }
                let fields = (0..<count).map { (number: bytes[at + 3 * $0], size: Int(bytes[at + 3 * $0 + 1])) }
                at += 3 * count
                var developerBytes = 0
                if header & 0x20 != 0 {
                    guard at < end else { throw fail(start, "a definition's developer fields cut short") }
                    let developer = Int(bytes[at])
                    at += 1
                    guard at + 3 * developer <= end else { throw fail(start, "a definition's developer fields cut short") }
                    developerBytes = (0..<developer).reduce(0) { $0 + Int(bytes[at + 3 * $1 + 1]) }
                    at += 3 * developer
                }
                definitions[header & 0x0F] = Definition(global: global, bigEndian: bigEndian, fields: fields, developerBytes: developerBytes)
            } else {
                // Data: a normal header names its local type in bits 0–3, a compressed-timestamp one in bits 5–6.
                let local = header & 0x80 != 0 ? (header >> 5) & 0x03 : header & 0x0F
                guard let definition = definitions[local] else {
                    throw fail(start, "a data message of local type \(local), which no definition gave")
                }
                var message = FITDecodedMessage(global: definition.global, fields: [:], bigEndian: definition.bigEndian)
                for field in definition.fields {
                    guard at + field.size <= end else { throw fail(start, "a data message cut short") }
                    message.fields[field.number] = Array(bytes[at..<(at + field.size)])
                    at += field.size
                }
                guard at + definition.developerBytes <= end else { throw fail(start, "a data message cut short") }
                at += definition.developerBytes
                messages.append(message)
            }
        }
        return messages
    }
}
