/// Reads fixed-width values from a byte buffer, front to back, with bounds checks.
///
/// Every read names the field it is for; a read past the end throws ``DecodingError`` with that
/// name, the bytes needed and the bytes left. Nothing here traps on any input.
public struct ByteReader: Sendable {
    /// The whole input.
    public let bytes: [UInt8]
    /// Index of the next byte to read.
    public private(set) var offset: Int

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        self.offset = 0
    }

    public init<S: Sequence>(_ bytes: S) where S.Element == UInt8 {
        self.init(Array(bytes))
    }

    /// Bytes not yet read.
    public var remaining: Int { bytes.count - offset }
    /// True once every byte has been read.
    public var isAtEnd: Bool { offset >= bytes.count }

    /// Throws unless `count` more bytes are present.
    public func require(_ count: Int, _ field: String) throws(DecodingError) {
        guard count >= 0, remaining >= count else {
            throw .truncated(field, needed: count, present: max(remaining, 0), at: offset)
        }
    }

    /// Reads an unsigned or signed integer of `T`'s width in the given byte order.
    public mutating func read<T: FixedWidthInteger>(
        _ type: T.Type = T.self, _ field: String, _ endian: Endianness = .little
    ) throws(DecodingError) -> T {
        let width = T.bitWidth / 8
        try require(width, field)
        let raw: T.Magnitude = readRaw(width: width, endian: endian)
        offset += width
        return T(truncatingIfNeeded: raw)
    }

    /// Reads one byte.
    public mutating func readUInt8(_ field: String) throws(DecodingError) -> UInt8 {
        try read(UInt8.self, field)
    }

    /// Reads an unsigned 24-bit integer.
    public mutating func readUInt24(_ field: String, _ endian: Endianness = .little) throws(DecodingError) -> UInt32 {
        try require(3, field)
        let value: UInt32 = readRaw(width: 3, endian: endian)
        offset += 3
        return value
    }

    /// Reads a signed (two's complement) 24-bit integer.
    public mutating func readInt24(_ field: String, _ endian: Endianness = .little) throws(DecodingError) -> Int32 {
        let raw = try readUInt24(field, endian)
        return Int32(bitPattern: raw << 8) >> 8
    }

    /// Reads an unsigned 48-bit integer.
    public mutating func readUInt48(_ field: String, _ endian: Endianness = .little) throws(DecodingError) -> UInt64 {
        try require(6, field)
        let value: UInt64 = readRaw(width: 6, endian: endian)
        offset += 6
        return value
    }

    /// Reads a signed (two's complement) 48-bit integer.
    public mutating func readInt48(_ field: String, _ endian: Endianness = .little) throws(DecodingError) -> Int64 {
        let raw = try readUInt48(field, endian)
        return Int64(bitPattern: raw << 16) >> 16
    }

    /// Reads `count` bytes.
    public mutating func readBytes(_ count: Int, _ field: String) throws(DecodingError) -> [UInt8] {
        try require(count, field)
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    /// Reads every byte that is left (possibly none).
    public mutating func readRemaining() -> [UInt8] {
        guard offset < bytes.count else { return [] }
        defer { offset = bytes.count }
        return Array(bytes[offset...])
    }

    /// Reads `count` bytes (or all that are left when `count` is nil) as UTF-8.
    /// Invalid UTF-8 throws; use ``readLenientString(_:_:)`` for device strings.
    public mutating func readString(_ count: Int? = nil, _ field: String) throws(DecodingError) -> String {
        let start = offset
        let raw = try count.map { n throws(DecodingError) in try readBytes(n, field) } ?? readRemaining()
        guard let text = String(validating: raw, as: UTF8.self) else {
            throw .invalid(field, expected: "UTF-8 text", found: raw.hexString, at: start)
        }
        return text
    }

    /// Reads a device string: UTF-8, falling back to Latin-1 when invalid, with trailing NULs
    /// and whitespace trimmed (Device Information strings are padded by some devices).
    public mutating func readLenientString(_ count: Int? = nil, _ field: String) throws(DecodingError) -> String {
        let raw = try count.map { n throws(DecodingError) in try readBytes(n, field) } ?? readRemaining()
        return String(deviceBytes: raw)
    }

    /// Skips `count` bytes.
    public mutating func skip(_ count: Int, _ field: String) throws(DecodingError) {
        try require(count, field)
        offset += count
    }

    /// The next byte without consuming it, or nil at the end.
    public func peek() -> UInt8? {
        offset < bytes.count ? bytes[offset] : nil
    }

    private func readRaw<T: FixedWidthInteger & UnsignedInteger>(width: Int, endian: Endianness) -> T {
        var value: T = 0
        switch endian {
        case .little:
            for i in stride(from: width - 1, through: 0, by: -1) {
                value = (value << 8) | T(bytes[offset + i])
            }
        case .big:
            for i in 0..<width {
                value = (value << 8) | T(bytes[offset + i])
            }
        }
        return value
    }
}

extension String {
    /// Decodes device-supplied bytes: UTF-8, or Latin-1 when not valid UTF-8; trailing NULs and
    /// whitespace removed.
    public init(deviceBytes raw: [UInt8]) {
        var end = raw.count
        while end > 0, raw[end - 1] == 0 { end -= 1 }
        let trimmed = Array(raw[..<end])
        let text = String(validating: trimmed, as: UTF8.self)
            ?? String(trimmed.map { Character(Unicode.Scalar($0)) })
        var scalars = Substring(text)
        while let last = scalars.last, last.isWhitespace || last == "\0" { scalars.removeLast() }
        self = String(scalars)
    }
}
