/// Reads fixed-width values from a byte buffer, front to back, with bounds checks.
///
/// Every read names the field it is for; a read past the end throws ``DecodingError`` with that
/// name, the bytes needed and the bytes left. Nothing here traps on any input.
///
/// The reading methods are `@inlinable`: the profile codecs live in other modules, and without
/// inlining every `read<T>` there ran as unspecialised generic code (several times slower).
public struct ByteReader: Sendable {
    /// The whole input.
    public let bytes: [UInt8]
    /// Index of the next byte to read.
    public var offset: Int { position }
    @usableFromInline var position: Int

    @inlinable
    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        self.position = 0
    }

    @inlinable
    public init<S: Sequence>(_ bytes: S) where S.Element == UInt8 {
        self.init(Array(bytes))
    }

    /// Bytes not yet read.
    @inlinable public var remaining: Int { bytes.count - position }
    /// True once every byte has been read.
    @inlinable public var isAtEnd: Bool { position >= bytes.count }

    /// Throws unless `count` more bytes are present.
    @inlinable
    public func require(_ count: Int, _ field: String) throws(DecodingError) {
        guard count >= 0, remaining >= count else {
            throw .truncated(field, needed: count, present: max(remaining, 0), at: position)
        }
    }

    /// Reads an unsigned or signed integer of `T`'s width in the given byte order.
    @inlinable
    public mutating func read<T: FixedWidthInteger>(
        _ type: T.Type = T.self, _ field: String, _ endian: Endianness = .little
    ) throws(DecodingError) -> T {
        let width = T.bitWidth / 8
        try require(width, field)
        let raw: T.Magnitude = readRaw(width: width, endian: endian)
        position += width
        return T(truncatingIfNeeded: raw)
    }

    /// Reads one byte.
    @inlinable
    public mutating func readUInt8(_ field: String) throws(DecodingError) -> UInt8 {
        try require(1, field)
        defer { position += 1 }
        return bytes[position]
    }

    /// Reads an unsigned 24-bit integer.
    @inlinable
    public mutating func readUInt24(_ field: String, _ endian: Endianness = .little) throws(DecodingError) -> UInt32 {
        try require(3, field)
        let value: UInt32 = readRaw(width: 3, endian: endian)
        position += 3
        return value
    }

    /// Reads a signed (two's complement) 24-bit integer.
    @inlinable
    public mutating func readInt24(_ field: String, _ endian: Endianness = .little) throws(DecodingError) -> Int32 {
        let raw = try readUInt24(field, endian)
        return Int32(bitPattern: raw << 8) >> 8
    }

    /// Reads an unsigned 48-bit integer.
    @inlinable
    public mutating func readUInt48(_ field: String, _ endian: Endianness = .little) throws(DecodingError) -> UInt64 {
        try require(6, field)
        let value: UInt64 = readRaw(width: 6, endian: endian)
        position += 6
        return value
    }

    /// Reads a signed (two's complement) 48-bit integer.
    @inlinable
    public mutating func readInt48(_ field: String, _ endian: Endianness = .little) throws(DecodingError) -> Int64 {
        let raw = try readUInt48(field, endian)
        return Int64(bitPattern: raw << 16) >> 16
    }

    /// Reads `count` bytes.
    @inlinable
    public mutating func readBytes(_ count: Int, _ field: String) throws(DecodingError) -> [UInt8] {
        try require(count, field)
        defer { position += count }
        return Array(bytes[position..<position + count])
    }

    /// Reads every byte that is left (possibly none).
    @inlinable
    public mutating func readRemaining() -> [UInt8] {
        guard position < bytes.count else { return [] }
        defer { position = bytes.count }
        return Array(bytes[position...])
    }

    /// Reads `count` bytes (or all that are left when `count` is nil) as UTF-8.
    /// Invalid UTF-8 throws; use ``readLenientString(_:_:)`` for device strings.
    public mutating func readString(_ count: Int? = nil, _ field: String) throws(DecodingError) -> String {
        let start = position
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
    @inlinable
    public mutating func skip(_ count: Int, _ field: String) throws(DecodingError) {
        try require(count, field)
        position += count
    }

    /// The next byte without consuming it, or nil at the end.
    @inlinable
    public func peek() -> UInt8? {
        position < bytes.count ? bytes[position] : nil
    }

    @inlinable
    func readRaw<T: FixedWidthInteger & UnsignedInteger>(width: Int, endian: Endianness) -> T {
        var value: T = 0
        switch endian {
        case .little:
            for i in stride(from: width - 1, through: 0, by: -1) {
                value = (value << 8) | T(bytes[position + i])
            }
        case .big:
            for i in 0..<width {
                value = (value << 8) | T(bytes[position + i])
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
