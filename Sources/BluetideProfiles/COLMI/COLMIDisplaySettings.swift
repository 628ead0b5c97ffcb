import BluetideBase

/// Display settings of a ring with a screen (opcode 0x05, write only): bytes 1...11 are
/// `04 <on 1|off 2> <hand 1 left|2 right> <brightness 1...5> 05 <2 all day|1 scheduled>
/// <from hour> <from minute> <to hour> <to minute>`.
///
/// The layout is the one newer Gadgetbridge (the "yawell ring" driver) writes for the R11 and
/// R12; the meaning of the constant bytes `04` and `05` is not known, and no read command is
/// documented, so a ring's display settings can be set but not asked for.
public struct COLMIDisplaySettings: GATTCodable, Hashable, Sendable, Encodable {
    /// Byte 1 of every display write.
    public static let writeTag: UInt8 = 0x04
    /// Byte 5 of every display write.
    static let secondTag: UInt8 = 0x05

    /// Screen on (wire 1) or off (wire 2).
    public var enabled: Bool
    /// Worn on the left hand (wire 1) or the right (wire 2).
    public var leftHand: Bool
    /// Brightness level 1...5.
    public var brightness: UInt8
    /// On all day (wire 2) or only between ``fromMinuteOfDay`` and ``toMinuteOfDay`` (wire 1).
    public var allDay: Bool
    /// Start of the scheduled period, minutes after midnight.
    public var fromMinuteOfDay: Int
    /// End of the scheduled period, minutes after midnight.
    public var toMinuteOfDay: Int

    public init(enabled: Bool, leftHand: Bool, brightness: UInt8, allDay: Bool, fromMinuteOfDay: Int, toMinuteOfDay: Int) {
        self.enabled = enabled
        self.leftHand = leftHand
        self.brightness = brightness
        self.allDay = allDay
        self.fromMinuteOfDay = fromMinuteOfDay
        self.toMinuteOfDay = toMinuteOfDay
    }

    /// Reads bytes 1...11 of the packet (the `04` tag first).
    public init(from reader: inout ByteReader) throws(DecodingError) {
        let start = reader.offset
        let tag = try reader.readUInt8("COLMI display.tag")
        guard tag == Self.writeTag else {
            throw .invalid("COLMI display.tag", expected: "0x04", found: "0x\([tag].hexString)", at: start)
        }
        enabled = try reader.readUInt8("COLMI display.enabled") == 1
        leftHand = try reader.readUInt8("COLMI display.hand") == 1
        brightness = try reader.readUInt8("COLMI display.brightness")
        try reader.skip(1, "COLMI display.second tag")
        allDay = try reader.readUInt8("COLMI display.all day") == 2
        let fromHour = Int(try reader.readUInt8("COLMI display.from hour"))
        let fromMinute = Int(try reader.readUInt8("COLMI display.from minute"))
        let toHour = Int(try reader.readUInt8("COLMI display.to hour"))
        let toMinute = Int(try reader.readUInt8("COLMI display.to minute"))
        fromMinuteOfDay = fromHour * 60 + fromMinute
        toMinuteOfDay = toHour * 60 + toMinute
    }

    public func encode(to writer: inout ByteWriter) {
        let from = max(0, min(fromMinuteOfDay, 1439)), to = max(0, min(toMinuteOfDay, 1439))
        for b in [
            Self.writeTag, enabled ? 1 : 2, leftHand ? 1 : 2, brightness, Self.secondTag, allDay ? 2 : 1,
            UInt8(from / 60), UInt8(from % 60), UInt8(to / 60), UInt8(to % 60),
        ] as [UInt8] {
            writer.write(b)
        }
    }
}
