/// Appends fixed-width values to a growing byte buffer.
///
/// Values wider than their field (a 24-bit write of a number above 2^24 − 1) are truncated to the
/// field's width: encoders document their ranges and clamp before writing.
public struct ByteWriter: Sendable {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8]

    public init(capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Number of bytes written so far.
    public var count: Int { bytes.count }

    /// Writes an integer in `T`'s width and the given byte order.
    public mutating func write<T: FixedWidthInteger>(_ value: T, _ endian: Endianness = .little) {
        writeRaw(UInt64(truncatingIfNeeded: value), width: T.bitWidth / 8, endian: endian)
    }

    /// Writes the low 24 bits of `value`.
    public mutating func writeUInt24(_ value: UInt32, _ endian: Endianness = .little) {
        writeRaw(UInt64(value), width: 3, endian: endian)
    }

    /// Writes a signed 24-bit value (two's complement).
    public mutating func writeInt24(_ value: Int32, _ endian: Endianness = .little) {
        writeRaw(UInt64(truncatingIfNeeded: value), width: 3, endian: endian)
    }

    /// Writes the low 48 bits of `value`.
    public mutating func writeUInt48(_ value: UInt64, _ endian: Endianness = .little) {
        writeRaw(value, width: 6, endian: endian)
    }

    /// Writes a signed 48-bit value (two's complement).
    public mutating func writeInt48(_ value: Int64, _ endian: Endianness = .little) {
        writeRaw(UInt64(bitPattern: value), width: 6, endian: endian)
    }

    /// Appends raw bytes.
    public mutating func write<S: Sequence>(bytes more: S) where S.Element == UInt8 {
        bytes.append(contentsOf: more)
    }

    /// Appends a string's UTF-8 bytes (no terminator, no length prefix).
    public mutating func write(string: String) {
        bytes.append(contentsOf: Array(string.utf8))
    }

    /// Appends `count` copies of `byte` (padding).
    public mutating func pad(_ count: Int, with byte: UInt8 = 0) {
        if count > 0 { bytes.append(contentsOf: repeatElement(byte, count: count)) }
    }

    /// Overwrites one already-written byte (e.g. a flags byte computed after the fields).
    public mutating func set(_ byte: UInt8, at index: Int) {
        bytes[index] = byte
    }

    private mutating func writeRaw(_ value: UInt64, width: Int, endian: Endianness) {
        switch endian {
        case .little:
            for i in 0..<width { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i)))) }
        case .big:
            for i in stride(from: width - 1, through: 0, by: -1) {
                bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i))))
            }
        }
    }
}
