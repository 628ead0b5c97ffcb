/// Appends fixed-width values to a growing byte buffer.
///
/// Values wider than their field (a 24-bit write of a number above 2^24 − 1) are truncated to the
/// field's width: encoders document their ranges and clamp before writing.
///
/// `@inlinable` like ``ByteReader``, so encoders in other modules get specialised code.
public struct ByteWriter: Sendable {
    /// The bytes written so far.
    @inlinable public var bytes: [UInt8] { storage }
    @usableFromInline var storage: [UInt8]

    @inlinable
    public init(capacity: Int = 0) {
        storage = []
        storage.reserveCapacity(capacity)
    }

    /// Number of bytes written so far.
    @inlinable public var count: Int { storage.count }

    /// Writes an integer in `T`'s width and the given byte order.
    @inlinable
    public mutating func write<T: FixedWidthInteger>(_ value: T, _ endian: Endianness = .little) {
        writeRaw(UInt64(truncatingIfNeeded: value), width: T.bitWidth / 8, endian: endian)
    }

    /// Writes the low 24 bits of `value`.
    @inlinable
    public mutating func writeUInt24(_ value: UInt32, _ endian: Endianness = .little) {
        writeRaw(UInt64(value), width: 3, endian: endian)
    }

    /// Writes a signed 24-bit value (two's complement).
    @inlinable
    public mutating func writeInt24(_ value: Int32, _ endian: Endianness = .little) {
        writeRaw(UInt64(truncatingIfNeeded: value), width: 3, endian: endian)
    }

    /// Writes the low 48 bits of `value`.
    @inlinable
    public mutating func writeUInt48(_ value: UInt64, _ endian: Endianness = .little) {
        writeRaw(value, width: 6, endian: endian)
    }

    /// Writes a signed 48-bit value (two's complement).
    @inlinable
    public mutating func writeInt48(_ value: Int64, _ endian: Endianness = .little) {
        writeRaw(UInt64(bitPattern: value), width: 6, endian: endian)
    }

    /// Appends raw bytes.
    @inlinable
    public mutating func write<S: Sequence>(bytes more: S) where S.Element == UInt8 {
        storage.append(contentsOf: more)
    }

    /// Appends a string's UTF-8 bytes (no terminator, no length prefix).
    @inlinable
    public mutating func write(string: String) {
        storage.append(contentsOf: Array(string.utf8))
    }

    /// Appends `count` copies of `byte` (padding).
    @inlinable
    public mutating func pad(_ count: Int, with byte: UInt8 = 0) {
        if count > 0 { storage.append(contentsOf: repeatElement(byte, count: count)) }
    }

    /// Overwrites one already-written byte (e.g. a flags byte computed after the fields).
    @inlinable
    public mutating func set(_ byte: UInt8, at index: Int) {
        storage[index] = byte
    }

    @inlinable
    mutating func writeRaw(_ value: UInt64, width: Int, endian: Endianness) {
        switch endian {
        case .little:
            for i in 0..<width { storage.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i)))) }
        case .big:
            for i in stride(from: width - 1, through: 0, by: -1) {
                storage.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i))))
            }
        }
    }
}
