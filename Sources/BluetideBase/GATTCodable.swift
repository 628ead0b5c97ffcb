/// A value that can be read from the bytes of a characteristic or packet.
///
/// Conformers read their fields in order from a ``ByteReader``; several values can be decoded one
/// after another from one payload with ``ByteReader/decode(_:)``.
public protocol GATTDecodable: Sendable {
    /// Reads the value from the reader's current position, consuming its bytes.
    init(from reader: inout ByteReader) throws(DecodingError)
}

/// A value that can be written as the bytes of a characteristic or packet.
public protocol GATTEncodable: Sendable {
    /// Appends the value's bytes to the writer.
    func encode(to writer: inout ByteWriter)
}

/// A value that is built from bytes and turns back into bytes (a characteristic value, a packet).
public typealias GATTCodable = GATTDecodable & GATTEncodable

extension GATTDecodable {
    /// Decodes a value from a whole payload. Trailing bytes after the value are tolerated
    /// (devices pad); use ``init(exactly:)`` to reject them.
    @inlinable
    public init<C: Collection>(bytes: C) throws(DecodingError) where C.Element == UInt8 {
        var reader = ByteReader(Array(bytes))
        self = try Self(from: &reader)
    }

    /// Decodes a value that must use every byte of the payload.
    @inlinable
    public init<C: Collection>(exactly bytes: C) throws(DecodingError) where C.Element == UInt8 {
        var reader = ByteReader(Array(bytes))
        self = try Self(from: &reader)
        guard reader.isAtEnd else {
            throw .invalid(
                "\(Self.self)", expected: "\(reader.offset) bytes", found: "\(reader.bytes.count) bytes",
                at: reader.offset)
        }
    }
}

extension GATTEncodable {
    /// The value's bytes.
    public var bytes: [UInt8] {
        var writer = ByteWriter()
        encode(to: &writer)
        return writer.bytes
    }
}

extension ByteReader {
    /// Decodes the next value of type `T` (assembling payloads from several values in order).
    public mutating func decode<T: GATTDecodable>(_ type: T.Type = T.self) throws(DecodingError) -> T {
        try T(from: &self)
    }
}

extension ByteWriter {
    /// Appends a value's bytes (assembling a payload from several values in order).
    public mutating func encode<T: GATTEncodable>(_ value: T) {
        value.encode(to: &self)
    }
}

/// Splits or joins several values in one payload: `try GATTPayload.decode(bytes, as: (UInt8.self, UInt16.self))`
/// is spelled with parameter packs so any number of values can be combined.
public enum GATTPayload {
    /// Encodes each value in order into one payload.
    public static func encode<each T: GATTEncodable>(_ value: repeat each T) -> [UInt8] {
        var writer = ByteWriter()
        repeat (each value).encode(to: &writer)
        return writer.bytes
    }

    /// Decodes values of the given types in order from one payload.
    public static func decode<each T: GATTDecodable>(
        _ bytes: [UInt8], as types: repeat (each T).Type
    ) throws(DecodingError) -> (repeat each T) {
        var reader = ByteReader(bytes)
        return (repeat try (each T)(from: &reader))
    }
}

// MARK: - Conformances for plain values

extension UInt8: GATTCodable {
    public init(from reader: inout ByteReader) throws(DecodingError) { self = try reader.read(Self.self, "UInt8") }
    public func encode(to writer: inout ByteWriter) { writer.write(self) }
}
extension Int8: GATTCodable {
    public init(from reader: inout ByteReader) throws(DecodingError) { self = try reader.read(Self.self, "Int8") }
    public func encode(to writer: inout ByteWriter) { writer.write(self) }
}
extension UInt16: GATTCodable {
    public init(from reader: inout ByteReader) throws(DecodingError) { self = try reader.read(Self.self, "UInt16") }
    public func encode(to writer: inout ByteWriter) { writer.write(self) }
}
extension Int16: GATTCodable {
    public init(from reader: inout ByteReader) throws(DecodingError) { self = try reader.read(Self.self, "Int16") }
    public func encode(to writer: inout ByteWriter) { writer.write(self) }
}
extension UInt32: GATTCodable {
    public init(from reader: inout ByteReader) throws(DecodingError) { self = try reader.read(Self.self, "UInt32") }
    public func encode(to writer: inout ByteWriter) { writer.write(self) }
}
extension Int32: GATTCodable {
    public init(from reader: inout ByteReader) throws(DecodingError) { self = try reader.read(Self.self, "Int32") }
    public func encode(to writer: inout ByteWriter) { writer.write(self) }
}
extension UInt64: GATTCodable {
    public init(from reader: inout ByteReader) throws(DecodingError) { self = try reader.read(Self.self, "UInt64") }
    public func encode(to writer: inout ByteWriter) { writer.write(self) }
}
extension Int64: GATTCodable {
    public init(from reader: inout ByteReader) throws(DecodingError) { self = try reader.read(Self.self, "Int64") }
    public func encode(to writer: inout ByteWriter) { writer.write(self) }
}

extension Bool: GATTCodable {
    /// One byte: 0 is false, anything else true.
    public init(from reader: inout ByteReader) throws(DecodingError) { self = try reader.readUInt8("Bool") != 0 }
    public func encode(to writer: inout ByteWriter) { writer.write(UInt8(self ? 1 : 0)) }
}

extension String: GATTCodable {
    /// The rest of the payload as a device string (UTF-8, Latin-1 fallback, trailing NULs trimmed).
    public init(from reader: inout ByteReader) throws(DecodingError) {
        self = try reader.readLenientString(nil, "String")
    }
    public func encode(to writer: inout ByteWriter) { writer.write(string: self) }
}

extension Array: GATTDecodable where Element: GATTDecodable {
    /// Elements until the payload ends; a trailing partial element throws.
    public init(from reader: inout ByteReader) throws(DecodingError) {
        var out: [Element] = []
        while !reader.isAtEnd { out.append(try Element(from: &reader)) }
        self = out
    }
}

extension Array: GATTEncodable where Element: GATTEncodable {
    public func encode(to writer: inout ByteWriter) {
        for element in self { element.encode(to: &writer) }
    }
}
