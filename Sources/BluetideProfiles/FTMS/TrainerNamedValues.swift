import BluetideBase

/// A one-byte code with a name for each known value (training status, result codes, FE state).
///
/// Unknown values are kept, not rejected, so a device using a newer revision still decodes; they
/// print and encode to JSON as `reserved (0xNN)`.
public protocol TrainerNamedCode: RawRepresentable, Hashable, Sendable, Encodable, CustomStringConvertible
where RawValue == UInt8 {
    /// Names of the known values.
    static var names: [UInt8: String] { get }
    init(rawValue: UInt8)
}

extension TrainerNamedCode {
    /// The value's name, or `reserved (0xNN)` for values the specification does not define.
    public var name: String { Self.names[rawValue] ?? "reserved (0x\([rawValue].hexString))" }
    public var description: String { name }
    /// Encodes as the name (JSON readers want words, the raw byte is in the name when unknown).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }
}

/// An option set whose bits have names, encoded to JSON as the list of names of the set bits.
public protocol TrainerNamedFlags: OptionSet, Hashable, Sendable, Encodable, CustomStringConvertible
where RawValue: FixedWidthInteger {
    /// Name of each defined bit, by bit index.
    static var bitNames: [Int: String] { get }
}

extension TrainerNamedFlags {
    /// Names of the set bits in bit order; undefined bits appear as `bit N`.
    public var names: [String] {
        (0..<RawValue.bitWidth).compactMap { bit in
            guard rawValue & (RawValue(1) << RawValue(bit)) != 0 else { return nil }
            return Self.bitNames[bit] ?? "bit \(bit)"
        }
    }
    public var description: String { names.isEmpty ? "none" : names.joined(separator: ", ") }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(names)
    }
}

/// Formats a number with a fixed count of decimals for summaries (no Foundation needed).
func trainerFormat(_ value: Double, decimals: Int) -> String {
    guard value.isFinite else { return "\(value)" }
    var scale = 1.0
    for _ in 0..<max(decimals, 0) { scale *= 10 }
    let scaled = (abs(value) * scale).rounded()
    guard scaled < 9e15 else { return "\(value)" }
    let whole = Int64(scaled)
    let divisor = Int64(scale)
    let sign = value < 0 && whole != 0 ? "-" : ""
    let integerPart = whole / divisor
    guard decimals > 0 else { return "\(sign)\(integerPart)" }
    var fraction = String(whole % divisor)
    while fraction.count < decimals { fraction = "0" + fraction }
    return "\(sign)\(integerPart).\(fraction)"
}

/// A JSON key made from a string, for hand-written `Encodable` conformances of enums whose
/// synthesized form would print `_0`.
struct TrainerJSONKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// `value / resolution` rounded to the nearest integer and clamped to `T`'s range (NaN gives 0),
/// for building wire values from physical units without trapping.
func trainerScaled<T: FixedWidthInteger>(_ value: Double, resolution: Double, as type: T.Type = T.self) -> T {
    let raw = (value / resolution).rounded()
    guard !raw.isNaN else { return 0 }
    if raw <= Double(T.min) { return T.min }
    if raw >= Double(T.max) { return T.max }
    return T(raw)
}
