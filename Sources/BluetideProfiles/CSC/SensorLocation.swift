import BluetideBase

/// Sensor Location (0x2A5D, uint8), shared by Cycling Speed and Cadence and Cycling Power.
public enum SensorLocation: Equatable, Hashable, Sendable, Encodable, GATTCodable, CustomStringConvertible {
    /// Wire values 0-16, in this order.
    case other, topOfShoe, inShoe, hip, frontWheel, leftCrank, rightCrank, leftPedal, rightPedal
    case frontHub, rearDropout, chainstay, rearWheel, rearHub, chest, spider, chainRing
    /// Values 17-255, reserved; kept so nothing is lost.
    case reserved(UInt8)

    private static let named: [SensorLocation] = [
        .other, .topOfShoe, .inShoe, .hip, .frontWheel, .leftCrank, .rightCrank, .leftPedal, .rightPedal,
        .frontHub, .rearDropout, .chainstay, .rearWheel, .rearHub, .chest, .spider, .chainRing,
    ]
    private static let names = [
        "other", "top of shoe", "in shoe", "hip", "front wheel", "left crank", "right crank", "left pedal",
        "right pedal", "front hub", "rear dropout", "chainstay", "rear wheel", "rear hub", "chest", "spider",
        "chain ring",
    ]

    /// Maps the wire value.
    public init(rawValue: UInt8) {
        let index = Int(rawValue)
        self = index < Self.named.count ? Self.named[index] : .reserved(rawValue)
    }

    /// The wire value.
    public var rawValue: UInt8 {
        if case let .reserved(value) = self { return value }
        return UInt8(truncatingIfNeeded: Self.named.firstIndex(of: self) ?? 0)
    }

    /// Readable name, e.g. `rear hub`, `reserved (40)`.
    public var description: String {
        if case let .reserved(value) = self { return "reserved (\(value))" }
        let index = Int(rawValue)
        return index < Self.names.count ? Self.names[index] : "reserved (\(rawValue))"
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        self.init(rawValue: try reader.readUInt8("Sensor Location"))
    }

    public func encode(to writer: inout ByteWriter) { writer.write(rawValue) }

    /// JSON: the readable name.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}
