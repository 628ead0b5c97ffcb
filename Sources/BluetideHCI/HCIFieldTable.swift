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

    /// A one-byte flag called `name`: 0 is false, anything else true (written as 0 or 1).
    public static func flag(_ path: WritableKeyPath<Root, Bool> & Sendable, _ name: String) -> HCIField {
        HCIField(
            decode: { (value: inout Root, reader: inout ByteReader) throws(DecodingError) in value[keyPath: path] = try reader.readUInt8(name) != 0 },
            encode: { value, writer in writer.write(UInt8(value[keyPath: path] ? 1 : 0)) })
    }

    /// The status byte of return parameters.
    public static func status(_ path: WritableKeyPath<Root, HCIStatus> & Sendable) -> HCIField {
        HCIField(
            decode: { (value: inout Root, reader: inout ByteReader) throws(DecodingError) in value[keyPath: path] = try HCIStatus(from: &reader) },
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
