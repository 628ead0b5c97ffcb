import BluetideBase

/// Battery Level (0x2A19): remaining charge in percent, uint8 0-100.
///
/// Values above 100 are outside the specification; they decode (``isInRange`` is false) rather
/// than throw, so a sloppy device still shows something.
public struct BatteryLevel: Equatable, Hashable, Sendable, Encodable, GATTCodable {
    /// Remaining charge, percent (0-100 when the device follows the specification).
    public var percent: UInt8

    public init(percent: UInt8) { self.percent = percent }

    /// True when ``percent`` is within 0-100.
    public var isInRange: Bool { percent <= 100 }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        percent = try reader.readUInt8("Battery Level")
    }

    public func encode(to writer: inout ByteWriter) { writer.write(percent) }

    /// One line, e.g. `90 %`.
    public var summary: String { "\(percent) %" + (isInRange ? "" : " (out of range)") }
}
