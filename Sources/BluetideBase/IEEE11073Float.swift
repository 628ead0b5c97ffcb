/// IEEE-11073-20601 floating point numbers, as health profiles send them (thermometer, blood
/// pressure, weight, glucose, pulse oximeter).
///
/// Both formats are a signed decimal mantissa and a signed, **unbiased** power-of-ten exponent:
/// value = mantissa × 10^exponent. Both keep the mantissa and exponent, so `2.0` (20 × 10⁻¹) and
/// `2.00` (200 × 10⁻²) stay distinct: they carry different precision.
///
/// With exponent 0, five mantissas are special values (NaN, NRes, ±infinity, reserved). They are
/// recognised before any arithmetic. Encoders never emit a reserved pattern.

/// A special (non-numeric) IEEE-11073 value.
public enum IEEE11073Special: String, Sendable, Hashable, Encodable, CaseIterable {
    /// Not a number: the device has no valid value.
    case notANumber = "NaN"
    /// Not at this resolution: the value cannot be shown with the available precision.
    case notAtThisResolution = "NRes"
    /// Positive infinity.
    case positiveInfinity = "+INF"
    /// Negative infinity.
    case negativeInfinity = "-INF"
    /// A raw value reserved for future use; treated like NaN.
    case reserved = "reserved"
}

/// Arithmetic shared by ``IEEE11073SFloat`` and ``IEEE11073Float``.
enum IEEE11073Arithmetic {
    /// 10^0 … 10^128, each the correctly rounded Double (parsed, not multiplied, so no error builds up).
    static let powersOfTen: [Double] = (0...128).map { Double("1e\($0)") ?? .nan }

    /// 10^exponent for exponent in −128…128 (callers stay in range).
    static func scale(_ mantissa: Double, byPowerOfTen exponent: Int) -> Double {
        let magnitude = min(abs(exponent), 128)
        // Dividing by an exact power of ten rounds once; multiplying by 10^-n would round twice.
        return exponent >= 0 ? mantissa * powersOfTen[magnitude] : mantissa / powersOfTen[magnitude]
    }

    /// The special value meant by `mantissa` at exponent 0, for a format whose largest mantissa is `max`.
    static func special(mantissa: Int32, exponent: Int8, max: Int32) -> IEEE11073Special? {
        guard exponent == 0 else { return nil }
        switch mantissa {
        case max: return .notANumber
        case -max - 1: return .notAtThisResolution
        case max - 1: return .positiveInfinity
        case -(max - 1): return .negativeInfinity
        case -max: return .reserved
        default: return nil
        }
    }

    /// The mantissa that encodes `special` (at exponent 0).
    static func mantissa(for special: IEEE11073Special, max: Int32) -> Int32 {
        switch special {
        case .notANumber: return max
        case .notAtThisResolution: return -max - 1
        case .positiveInfinity: return max - 1
        case .negativeInfinity: return -(max - 1)
        case .reserved: return -max
        }
    }

    /// The result of choosing a mantissa and exponent for a Double.
    enum Choice: Equatable {
        case number(mantissa: Int32, exponent: Int8, exact: Bool)
        case special(IEEE11073Special)
    }

    /// Chooses the representation of `value`: the largest exponent that holds it exactly with
    /// `|mantissa| ≤ max` (`max − 2` at exponent 0, keeping clear of the special codes); when no
    /// exponent is exact, the smallest exponent whose rounded mantissa fits (the most precise
    /// approximation); ±infinity when the value is too large for any exponent.
    static func choose(_ value: Double, max: Int32, exponents: ClosedRange<Int>) -> Choice {
        if value.isNaN { return .special(.notANumber) }
        if value.isInfinite { return .special(value > 0 ? .positiveInfinity : .negativeInfinity) }
        if value == 0 { return .number(mantissa: 0, exponent: 0, exact: true) }
        var closest: (mantissa: Int32, exponent: Int)?
        for exponent in exponents.reversed() {
            let limit = Double(exponent == 0 ? max - 2 : max)
            let scaled = scale(value, byPowerOfTen: -exponent)
            let rounded = scaled.rounded()
            // |mantissa| grows as the exponent falls: once it no longer fits, no smaller exponent will.
            guard abs(rounded) <= limit else { break }
            let mantissa = Int32(rounded)
            // A non-zero value that rounds to mantissa 0 is an approximation, never exact.
            if rounded != 0, abs(scaled - rounded) <= abs(scaled) * 1e-12 {
                return .number(mantissa: mantissa, exponent: Int8(exponent), exact: true)
            }
            closest = (mantissa, exponent)
        }
        if let closest {
            // Too small for any exponent: plain zero rather than 0 × 10^-128.
            if closest.mantissa == 0 { return .number(mantissa: 0, exponent: 0, exact: false) }
            return .number(mantissa: closest.mantissa, exponent: Int8(closest.exponent), exact: false)
        }
        return .special(value > 0 ? .positiveInfinity : .negativeInfinity)
    }

    /// `mantissa × 10^exponent` written exactly in decimal, e.g. (364, −1) → `36.4`, (200, −2) → `2.00`.
    static func decimalText(mantissa: Int32, exponent: Int8) -> String {
        let negative = mantissa < 0
        var digits = String(Int64(mantissa).magnitude)
        if exponent >= 0 {
            if mantissa != 0 { digits += String(repeating: "0", count: Int(exponent)) }
        } else {
            let places = Int(-Int16(exponent))
            if digits.count <= places {
                digits = String(repeating: "0", count: places - digits.count + 1) + digits
            }
            digits.insert(".", at: digits.index(digits.endIndex, offsetBy: -places))
        }
        return negative ? "-" + digits : digits
    }
}

/// IEEE-11073 16-bit SFLOAT: 4-bit signed exponent (bits 15-12), 12-bit signed mantissa (bits 11-0).
///
/// Example: raw `0xF16C` (bytes `6C F1`) = 364 × 10⁻¹ = 36.4. Equality compares the raw bits, so
/// values of different precision (2.0 and 2.00) are different.
public struct IEEE11073SFloat: Sendable, Hashable, GATTCodable, Encodable, CustomStringConvertible {
    /// Largest mantissa; the special codes sit at ±2046, ±2047 and −2048 with exponent 0.
    public static let maximumMantissa: Int32 = 2047
    /// Exponents the format can carry.
    public static let exponentRange: ClosedRange<Int> = -8...7

    /// The 16 raw bits as sent (little-endian on the wire).
    public let rawValue: UInt16

    /// Wraps raw bits as received.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// Builds `mantissa × 10^exponent`; nil if either is out of range (mantissa −2048…2047,
    /// exponent −8…7) or the pair is one of the special codes.
    public init?(mantissa: Int, exponent: Int) {
        guard (-2048...2047).contains(mantissa), Self.exponentRange.contains(exponent) else { return nil }
        let raw = UInt16(UInt8(truncatingIfNeeded: exponent) & 0x0F) << 12
            | UInt16(truncatingIfNeeded: mantissa) & 0x0FFF
        self.init(rawValue: raw)
        guard special == nil else { return nil }
    }

    /// The raw pattern of a special value.
    public init(special: IEEE11073Special) {
        let mantissa = IEEE11073Arithmetic.mantissa(for: special, max: Self.maximumMantissa)
        self.init(rawValue: UInt16(truncatingIfNeeded: mantissa) & 0x0FFF)
    }

    /// Encodes `value` with the largest exponent that represents it exactly (20 → 2 × 10¹,
    /// 36.4 → 364 × 10⁻¹). A value that no exponent holds exactly is rounded to the most precise
    /// exponent that fits; one too large for the format becomes ±infinity; NaN becomes NaN.
    /// Never produces NRes or a reserved pattern.
    public init(_ value: Double) {
        switch IEEE11073Arithmetic.choose(value, max: Self.maximumMantissa, exponents: Self.exponentRange) {
        case let .special(special): self.init(special: special)
        case let .number(mantissa, exponent, _):
            self.init(rawValue: UInt16(UInt8(bitPattern: exponent) & 0x0F) << 12
                | UInt16(truncatingIfNeeded: mantissa) & 0x0FFF)
        }
    }

    /// Encodes `value` only if some exponent represents it exactly; nil otherwise.
    public init?(exactly value: Double) {
        switch IEEE11073Arithmetic.choose(value, max: Self.maximumMantissa, exponents: Self.exponentRange) {
        case let .special(special):
            guard value.isNaN || value.isInfinite else { return nil }
            self.init(special: special)
        case let .number(_, _, exact):
            guard exact else { return nil }
            self.init(value)
        }
    }

    /// NaN: no valid value.
    public static let nan = IEEE11073SFloat(special: .notANumber)
    /// NRes: not representable at this resolution.
    public static let notAtThisResolution = IEEE11073SFloat(special: .notAtThisResolution)
    /// +INFINITY.
    public static let positiveInfinity = IEEE11073SFloat(special: .positiveInfinity)
    /// −INFINITY.
    public static let negativeInfinity = IEEE11073SFloat(special: .negativeInfinity)

    /// Signed 12-bit mantissa (−2048…2047).
    public var mantissa: Int16 { Int16(bitPattern: rawValue << 4) >> 4 }
    /// Signed 4-bit exponent (−8…7), not biased.
    public var exponent: Int8 { Int8(bitPattern: UInt8(truncatingIfNeeded: rawValue >> 8) & 0xF0) >> 4 }

    /// The special value these bits stand for, or nil for an ordinary number.
    public var special: IEEE11073Special? {
        IEEE11073Arithmetic.special(mantissa: Int32(mantissa), exponent: exponent, max: Self.maximumMantissa)
    }

    /// The number: nil for NaN, NRes and reserved; ±infinity for ±INF.
    public var doubleValue: Double? {
        switch special {
        case .positiveInfinity: return .infinity
        case .negativeInfinity: return -.infinity
        case .notANumber, .notAtThisResolution, .reserved: return nil
        case nil: return IEEE11073Arithmetic.scale(Double(mantissa), byPowerOfTen: Int(exponent))
        }
    }

    /// Exact decimal text with the precision the device sent (`36.4`, `2.00`), or the special's name.
    public var description: String {
        if let special { return special.rawValue }
        return IEEE11073Arithmetic.decimalText(mantissa: Int32(mantissa), exponent: exponent)
    }

    /// Reads 2 bytes, little-endian (field name `SFLOAT`).
    public init(from reader: inout ByteReader) throws(DecodingError) {
        self.init(rawValue: try reader.read(UInt16.self, "SFLOAT"))
    }

    /// Writes the 2 raw bytes, little-endian.
    public func encode(to writer: inout ByteWriter) { writer.write(rawValue) }

    /// JSON: a number when finite, otherwise the special's name (`"NaN"`, `"+INF"`, …).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let special { try container.encode(special.rawValue) } else { try container.encode(doubleValue ?? 0) }
    }
}

/// IEEE-11073 32-bit FLOAT: 8-bit signed exponent (most significant byte), 24-bit signed mantissa.
///
/// Example: raw `0xFF00016C` (bytes `6C 01 00 FF`) = 364 × 10⁻¹ = 36.4. Equality compares the raw
/// bits, so values of different precision are different.
public struct IEEE11073Float: Sendable, Hashable, GATTCodable, Encodable, CustomStringConvertible {
    /// Largest mantissa; the special codes sit at ±8388606, ±8388607 and −8388608 with exponent 0.
    public static let maximumMantissa: Int32 = 8_388_607
    /// Exponents the format can carry.
    public static let exponentRange: ClosedRange<Int> = -128...127

    /// The 32 raw bits as sent (little-endian on the wire).
    public let rawValue: UInt32

    /// Wraps raw bits as received.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Builds `mantissa × 10^exponent`; nil if either is out of range (mantissa −8388608…8388607,
    /// exponent −128…127) or the pair is one of the special codes.
    public init?(mantissa: Int, exponent: Int) {
        guard (-8_388_608...8_388_607).contains(mantissa), Self.exponentRange.contains(exponent) else { return nil }
        self.init(rawValue: UInt32(UInt8(truncatingIfNeeded: exponent)) << 24
            | UInt32(truncatingIfNeeded: mantissa) & 0x00FF_FFFF)
        guard special == nil else { return nil }
    }

    /// The raw pattern of a special value.
    public init(special: IEEE11073Special) {
        let mantissa = IEEE11073Arithmetic.mantissa(for: special, max: Self.maximumMantissa)
        self.init(rawValue: UInt32(bitPattern: mantissa) & 0x00FF_FFFF)
    }

    /// Encodes `value` with the largest exponent that represents it exactly (22.5 → 225 × 10⁻¹).
    /// A value that no exponent holds exactly is rounded to the most precise exponent that fits;
    /// one too large becomes ±infinity; NaN becomes NaN. Never produces NRes or a reserved pattern.
    public init(_ value: Double) {
        switch IEEE11073Arithmetic.choose(value, max: Self.maximumMantissa, exponents: Self.exponentRange) {
        case let .special(special): self.init(special: special)
        case let .number(mantissa, exponent, _):
            self.init(rawValue: UInt32(UInt8(bitPattern: exponent)) << 24
                | UInt32(bitPattern: mantissa) & 0x00FF_FFFF)
        }
    }

    /// Encodes `value` only if some exponent represents it exactly; nil otherwise.
    public init?(exactly value: Double) {
        switch IEEE11073Arithmetic.choose(value, max: Self.maximumMantissa, exponents: Self.exponentRange) {
        case let .special(special):
            guard value.isNaN || value.isInfinite else { return nil }
            self.init(special: special)
        case let .number(_, _, exact):
            guard exact else { return nil }
            self.init(value)
        }
    }

    /// NaN: no valid value.
    public static let nan = IEEE11073Float(special: .notANumber)
    /// NRes: not representable at this resolution.
    public static let notAtThisResolution = IEEE11073Float(special: .notAtThisResolution)
    /// +INFINITY.
    public static let positiveInfinity = IEEE11073Float(special: .positiveInfinity)
    /// −INFINITY.
    public static let negativeInfinity = IEEE11073Float(special: .negativeInfinity)

    /// Signed 24-bit mantissa (−8388608…8388607).
    public var mantissa: Int32 { Int32(bitPattern: rawValue << 8) >> 8 }
    /// Signed 8-bit exponent (−128…127), not biased.
    public var exponent: Int8 { Int8(truncatingIfNeeded: Int32(bitPattern: rawValue) >> 24) }

    /// The special value these bits stand for, or nil for an ordinary number.
    public var special: IEEE11073Special? {
        IEEE11073Arithmetic.special(mantissa: mantissa, exponent: exponent, max: Self.maximumMantissa)
    }

    /// The number: nil for NaN, NRes and reserved; ±infinity for ±INF.
    public var doubleValue: Double? {
        switch special {
        case .positiveInfinity: return .infinity
        case .negativeInfinity: return -.infinity
        case .notANumber, .notAtThisResolution, .reserved: return nil
        case nil: return IEEE11073Arithmetic.scale(Double(mantissa), byPowerOfTen: Int(exponent))
        }
    }

    /// Exact decimal text with the precision the device sent (`36.4`, `22.50`), or the special's name.
    public var description: String {
        if let special { return special.rawValue }
        return IEEE11073Arithmetic.decimalText(mantissa: mantissa, exponent: exponent)
    }

    /// Reads 4 bytes, little-endian (field name `FLOAT`).
    public init(from reader: inout ByteReader) throws(DecodingError) {
        self.init(rawValue: try reader.read(UInt32.self, "FLOAT"))
    }

    /// Writes the 4 raw bytes, little-endian.
    public func encode(to writer: inout ByteWriter) { writer.write(rawValue) }

    /// JSON: a number when finite, otherwise the special's name (`"NaN"`, `"+INF"`, …).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let special { try container.encode(special.rawValue) } else { try container.encode(doubleValue ?? 0) }
    }
}
