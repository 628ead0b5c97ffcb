/// Why a value could not be decoded from bytes.
///
/// Every decoder in Bluetide throws this instead of trapping: it names the field that failed,
/// how many bytes that field needed and how many were present (or what value was expected and
/// what came), so a user can tell a truncated notification from a device speaking another format.
public struct DecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong with the field.
    public enum Kind: Sendable, Equatable {
        /// The field needs `needed` bytes but only `present` remained.
        case truncated(needed: Int, present: Int)
        /// The bytes were there but did not hold an acceptable value.
        case invalidValue(expected: String, found: String)
    }

    /// The field being decoded, e.g. `"CSC Measurement.cumulative wheel revolutions"`.
    public var field: String
    /// What went wrong.
    public var kind: Kind
    /// Byte offset of the field within the input, when known.
    public var offset: Int?

    public init(field: String, kind: Kind, offset: Int? = nil) {
        self.field = field
        self.kind = kind
        self.offset = offset
    }

    /// A truncated-input error: `field` needed `needed` bytes, `present` were left.
    public static func truncated(_ field: String, needed: Int, present: Int, at offset: Int? = nil) -> DecodingError {
        DecodingError(field: field, kind: .truncated(needed: needed, present: present), offset: offset)
    }

    /// An invalid-value error: `field` held `found` where `expected` was required.
    public static func invalid(_ field: String, expected: String, found: String, at offset: Int? = nil) -> DecodingError {
        DecodingError(field: field, kind: .invalidValue(expected: expected, found: found), offset: offset)
    }

    /// The same error with the field name prefixed by a context (e.g. the characteristic name).
    public func within(_ context: String) -> DecodingError {
        var copy = self
        copy.field = field.isEmpty ? context : "\(context).\(field)"
        return copy
    }

    public var description: String {
        let place = offset.map { " at byte \($0)" } ?? ""
        switch kind {
        case let .truncated(needed, present):
            return "\(field)\(place): needs \(needed) byte\(needed == 1 ? "" : "s"), \(present) present"
        case let .invalidValue(expected, found):
            return "\(field)\(place): expected \(expected), found \(found)"
        }
    }
}
