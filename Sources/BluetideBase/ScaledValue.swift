/// The unit step of a scaled fixed-point value: value = raw × ``resolution`` + ``offset``.
///
/// Bluetooth profiles carry fractions as integers with a "multiplier factor": a time in
/// milliseconds, an RR interval in 1/1024 s, a target power in 0.25 W. A scale is a type (not a
/// stored number) so a value can be decoded from bytes knowing only its type.
public protocol ValueScale: Sendable {
    /// Size of one raw step in the value's unit, e.g. 0.001 for milliseconds read as seconds.
    static var resolution: Double { get }
    /// Added after scaling, e.g. −200 for a grade sent as (grade + 200) / 0.01. Zero by default.
    static var offset: Double { get }
}

extension ValueScale {
    public static var offset: Double { 0 }
}

/// Common scales used by the fitness and device profiles.
public enum Scales {
    /// Seconds carried as milliseconds (raw × 0.001 s).
    public enum Milliseconds: ValueScale { public static var resolution: Double { 0.001 } }
    /// Seconds carried in 1/1024 s ticks (CSC event times, RR intervals).
    public enum Per1024Second: ValueScale { public static var resolution: Double { 1.0 / 1024 } }
    /// Seconds carried in 1/2048 s ticks (Cycling Power wheel event time).
    public enum Per2048Second: ValueScale { public static var resolution: Double { 1.0 / 2048 } }
    /// Watts carried in 0.25 W steps (FE-C target power).
    public enum QuarterWatt: ValueScale { public static var resolution: Double { 0.25 } }
    /// Newton-metres carried in 1/32 N·m steps (Cycling Power torque).
    public enum Per32NewtonMetre: ValueScale { public static var resolution: Double { 1.0 / 32 } }
    /// Percent carried in 0.5 % steps (pedal power balance, FE-C basic resistance).
    public enum HalfPercent: ValueScale { public static var resolution: Double { 0.5 } }
    /// A tenth of the unit (0.1 % grade, 0.1 resistance level).
    public enum Tenth: ValueScale { public static var resolution: Double { 0.1 } }
    /// A hundredth of the unit (0.01 km/h, 0.01 kg).
    public enum Hundredth: ValueScale { public static var resolution: Double { 0.01 } }
}

/// A fixed-point value: a raw integer of type `Raw` standing for `raw × Scale.resolution + Scale.offset`.
///
/// Decoding reads `Raw` little-endian; ``doubleValue`` gives the value in its unit. Building from a
/// Double rounds to the nearest raw step and clamps to `Raw`'s range, so an encoder never wraps
/// around (4000.3 W in a UInt8 field becomes 255 steps, not a small number).
public struct ScaledValue<Raw: FixedWidthInteger & Sendable, Scale: ValueScale>:
    Sendable, Hashable, GATTCodable, Encodable, CustomStringConvertible
{
    /// The integer as sent.
    public var rawValue: Raw

    /// Wraps a raw integer as sent.
    public init(rawValue: Raw) { self.rawValue = rawValue }

    /// The raw step nearest to `value` (ties away from zero), clamped to `Raw.min…Raw.max`.
    /// NaN encodes as raw 0; ±infinity clamps to the ends of the range.
    public init(_ value: Double) {
        let steps = ((value - Scale.offset) / Scale.resolution).rounded()
        self.init(rawValue: Self.clamped(steps))
    }

    /// The value in its unit: raw × resolution + offset.
    public var doubleValue: Double { Double(rawValue) * Scale.resolution + Scale.offset }

    /// True when `value` lies inside the range the raw type can carry (before rounding).
    public static func canRepresent(_ value: Double) -> Bool {
        let steps = ((value - Scale.offset) / Scale.resolution).rounded()
        return steps >= Double(Raw.min) && steps <= Double(Raw.max) && !steps.isNaN
    }

    /// Smallest and largest values the raw type can carry.
    public static var range: ClosedRange<Double> {
        let a = Self(rawValue: .min).doubleValue, b = Self(rawValue: .max).doubleValue
        return min(a, b)...max(a, b)
    }

    /// Converts rounded steps to `Raw` without trapping: out-of-range clamps, NaN gives 0.
    static func clamped(_ steps: Double) -> Raw {
        if steps.isNaN { return 0 }
        // Double(Raw.max) may round up past Raw.max (UInt64), so compare with >= before converting.
        if steps >= Double(Raw.max) { return .max }
        if steps <= Double(Raw.min) { return .min }
        return Raw(steps)
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        self.init(rawValue: try reader.read(Raw.self, "scaled value"))
    }

    public func encode(to writer: inout ByteWriter) { writer.write(rawValue) }

    /// JSON: the value in its unit (a number).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(doubleValue)
    }

    /// The value in its unit, e.g. `0.7773`.
    public var description: String { "\(doubleValue)" }
}
