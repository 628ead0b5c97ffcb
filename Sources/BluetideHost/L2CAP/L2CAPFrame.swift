import BluetideBase

/// An L2CAP channel identifier. LE links use the fixed channels below (Core Vol 3 Part A 2.1).
public struct L2CAPChannelID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The CID value.
    public let rawValue: UInt16
    /// Wraps a CID.
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    /// Wraps a CID.
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    /// 0x0004: Attribute Protocol.
    public static let att = L2CAPChannelID(0x0004)
    /// 0x0005: LE signalling channel.
    public static let leSignaling = L2CAPChannelID(0x0005)
    /// 0x0006: Security Manager Protocol.
    public static let smp = L2CAPChannelID(0x0006)

    /// `0x0004` style hex.
    public var description: String {
        let hex = String(rawValue, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}

/// An L2CAP basic frame (B-frame, Core Vol 3 Part A 3.1): payload length u16, channel ID u16,
/// payload. This is one complete PDU, after ACL reassembly.
public struct L2CAPFrame: Hashable, Sendable {
    /// The channel the payload belongs to.
    public var channelID: L2CAPChannelID
    /// The information payload (at most 65535 octets).
    public var payload: [UInt8]

    /// A frame carrying `payload` on `channelID`.
    public init(channelID: L2CAPChannelID, payload: [UInt8]) {
        self.channelID = channelID
        self.payload = payload
    }

    /// Size of the basic L2CAP header in octets.
    public static let headerSize = 4

    /// Decodes one complete frame. The length field must match the bytes present exactly:
    /// fewer is a truncation, more is reported as an invalid length.
    public init(bytes: [UInt8]) throws(DecodingError) {
        var r = ByteReader(bytes)
        let length = Int(try r.read(UInt16.self, "L2CAP length"))
        let cid = try r.read(UInt16.self, "L2CAP channel ID")
        let payload = try r.readBytes(length, "L2CAP payload")
        guard r.isAtEnd else {
            throw .invalid("L2CAP length", expected: "\(bytes.count - 4)", found: "\(length)", at: 0)
        }
        self.init(channelID: L2CAPChannelID(cid), payload: payload)
    }

    /// The frame's bytes. Payloads longer than 65535 octets are cut to that length (callers
    /// never build such frames: the ATT MTU is at most 517).
    public var bytes: [UInt8] {
        let body = payload.prefix(Int(UInt16.max))
        var w = ByteWriter(capacity: body.count + 4)
        w.write(UInt16(body.count))
        w.write(channelID.rawValue)
        w.write(bytes: body)
        return w.bytes
    }
}
