import BluetideBase

/// One field of an HCI parameter block, declared once: where it lives in the value, and how its
/// bytes read (with the field's name for errors) and write. A type lists its fields in wire
/// order (``HCIFieldTable/fields``) and gets ``HCIParameters`` from that list, instead of
/// spelling every field again in a decoder and an encoder (issue 22 item 4).
public struct HCIField<Root>: Sendable {
    let decode: @Sendable (inout Root, inout ByteReader) throws(DecodingError) -> Void
    let encode: @Sendable (Root, inout ByteWriter) -> Void

    /// A little-endian integer field called `name` (as decoding errors name it).
    public static func integer<T: FixedWidthInteger & Sendable>(_ path: WritableKeyPath<Root, T> & Sendable, _ name: String) -> HCIField {
        HCIField(
            decode: { (value: inout Root, reader: inout ByteReader) throws(DecodingError) in value[keyPath: path] = try reader.read(T.self, name) },
            encode: { value, writer in writer.write(value[keyPath: path]) })
    }

    /// A value carried as a little-endian integer (an option set, a code), called `name`.
    public static func raw<T: RawRepresentable & Sendable>(_ path: WritableKeyPath<Root, T> & Sendable, _ name: String) -> HCIField
    where T.RawValue: FixedWidthInteger & Sendable {
        HCIField(
            decode: { (value: inout Root, reader: inout ByteReader) throws(DecodingError) in
                let raw = try reader.read(T.RawValue.self, name)
                guard let decoded = T(rawValue: raw) else { throw .invalid(name, expected: "a known value", found: "\(raw)") }
                value[keyPath: path] = decoded
            },
            encode: { value, writer in writer.write(value[keyPath: path].rawValue) })
    }

    /// A little-endian 24-bit integer field called `name` (advertising intervals).
    public static func uint24(_ path: WritableKeyPath<Root, UInt32> & Sendable, _ name: String) -> HCIField {
        HCIField(
            decode: { (value: inout Root, reader: inout ByteReader) throws(DecodingError) in value[keyPath: path] = try reader.readUInt24(name) },
            encode: { value, writer in writer.writeUInt24(value[keyPath: path]) })
    }

    /// A one-byte flag called `name`: 0 is false, anything else true (written as 0 or 1).
    public static func flag(_ path: WritableKeyPath<Root, Bool> & Sendable, _ name: String) -> HCIField {
        HCIField(
            decode: { (value: inout Root, reader: inout ByteReader) throws(DecodingError) in value[keyPath: path] = try reader.readUInt8(name) != 0 },
            encode: { value, writer in writer.write(UInt8(value[keyPath: path] ? 1 : 0)) })
    }

    /// A status byte: the outcome of return parameters, or a reason (`name`) such as Disconnect's.
    public static func status(_ path: WritableKeyPath<Root, HCIStatus> & Sendable, _ name: String = "status") -> HCIField {
        HCIField(
            decode: { (value: inout Root, reader: inout ByteReader) throws(DecodingError) in value[keyPath: path] = HCIStatus(try reader.readUInt8(name)) },
            encode: { value, writer in value[keyPath: path].encode(to: &writer) })
    }

    /// A connection handle (12 bits; the reserved top 4 bits are kept as sent).
    public static func handle(_ path: WritableKeyPath<Root, UInt16> & Sendable, _ name: String = "connection handle") -> HCIField {
        integer(path, name)
    }

    /// A six-byte address whose type is `type`.
    public static func address(_ path: WritableKeyPath<Root, BluetoothAddress> & Sendable, _ name: String, type: LEAddressType) -> HCIField {
        HCIField(
            decode: { (value: inout Root, reader: inout ByteReader) throws(DecodingError) in value[keyPath: path] = try reader.readAddress(name, type: type) },
            encode: { value, writer in writer.write(address: value[keyPath: path]) })
    }

    /// A six-byte address whose type is the field `typePath`, decoded before it.
    public static func address(_ path: WritableKeyPath<Root, BluetoothAddress> & Sendable, _ name: String,
                               typeFrom typePath: KeyPath<Root, LEAddressType> & Sendable) -> HCIField {
        HCIField(
            decode: { (value: inout Root, reader: inout ByteReader) throws(DecodingError) in
                value[keyPath: path] = try reader.readAddress(name, type: value[keyPath: typePath])
            },
            encode: { value, writer in writer.write(address: value[keyPath: path]) })
    }

    /// `count` bytes; a shorter value is padded with zeros and a longer one cut when written.
    public static func bytes(_ path: WritableKeyPath<Root, [UInt8]> & Sendable, count: Int, _ name: String) -> HCIField {
        HCIField(
            decode: { (value: inout Root, reader: inout ByteReader) throws(DecodingError) in value[keyPath: path] = try reader.readBytes(count, name) },
            encode: { value, writer in
                let bytes = value[keyPath: path]
                writer.write(bytes: bytes.prefix(count))
                writer.pad(count - min(bytes.count, count))
            })
    }

    /// A 128-bit key (16 bytes, least significant first).
    public static func key(_ path: WritableKeyPath<Root, HCIKey128> & Sendable, _ name: String) -> HCIField {
        HCIField(
            decode: { (value: inout Root, reader: inout ByteReader) throws(DecodingError) in value[keyPath: path] = try HCIKey128(from: &reader, name) },
            encode: { value, writer in writer.write(bytes: value[keyPath: path].bytes) })
    }

    /// Bytes after a one-byte length (at most `max` are written).
    public static func lengthPrefixed(_ path: WritableKeyPath<Root, [UInt8]> & Sendable, _ name: String, max: Int = 255) -> HCIField {
        HCIField(
            decode: { (value: inout Root, reader: inout ByteReader) throws(DecodingError) in
                let length = try reader.readUInt8(name + " length")
                value[keyPath: path] = try reader.readBytes(Int(length), name)
            },
            encode: { value, writer in
                let bytes = value[keyPath: path].prefix(max)
                writer.write(UInt8(bytes.count))
                writer.write(bytes: bytes)
            })
    }

    /// Items after a one-byte count (at most `max` are written); a decoding error names the item
    /// (`report[2]`).
    public static func list<T: HCIParameters>(
        _ path: WritableKeyPath<Root, [T]> & Sendable, count name: String, item: String, max: Int = 255
    ) -> HCIField {
        HCIField(
            decode: { (value: inout Root, reader: inout ByteReader) throws(DecodingError) in
                let count = try reader.readUInt8(name)
                var items: [T] = []
                items.reserveCapacity(Int(count))
                for index in 0..<Int(count) {
                    do throws(DecodingError) { items.append(try T(from: &reader)) } catch { throw error.within("\(item)[\(index)]") }
                }
                value[keyPath: path] = items
            },
            encode: { value, writer in
                let items = value[keyPath: path]
                // The count as given (a test may send a wrong one on purpose) when it fits the cap.
                writer.write(UInt8(truncatingIfNeeded: max == 255 ? items.count : min(items.count, max)))
                for item in items.prefix(max) { item.encode(to: &writer) }
            })
    }

    /// A group of fields that is a parameters value of its own (e.g. ``LEConnectionParameters``).
    public static func group<T: HCIParameters>(_ path: WritableKeyPath<Root, T> & Sendable) -> HCIField {
        HCIField(
            decode: { (value: inout Root, reader: inout ByteReader) throws(DecodingError) in value[keyPath: path] = try T(from: &reader) },
            encode: { value, writer in value[keyPath: path].encode(to: &writer) })
    }
}

/// Parameters declared as a field table: ``fields`` in wire order, and ``blank``, the value that
/// decoding fills in field by field.
public protocol HCIFieldTable: HCIParameters {
    /// The fields, front to back.
    static var fields: [HCIField<Self>] { get }
    /// A value with every field at a placeholder (overwritten by decoding).
    static var blank: Self { get }
}

extension HCIFieldTable {
    public init(from reader: inout ByteReader) throws(DecodingError) {
        var value = Self.blank
        for field in Self.fields { try field.decode(&value, &reader) }
        self = value
    }

    public func encode(to writer: inout ByteWriter) {
        for field in Self.fields { field.encode(self, &writer) }
    }
}
