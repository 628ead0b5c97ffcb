import BluetideBase

/// Where one incoming L2CAP PDU went.
public struct L2CAPRouting: Equatable, Sendable {
    /// The ATT PDU to hand to the connection's ATT bearer, if the frame was on CID 0x0004.
    public var att: [UInt8]?
    /// The SMP PDU to hand to the host's security component, if the frame was on CID 0x0006.
    public var smp: [UInt8]?
    /// Frames to send back to the peer on this connection (signalling and SMP answers).
    public var outgoing: [L2CAPFrame] = []
    /// Signalling events for the host (e.g. a parameter update to apply).
    public var signalingEvents: [L2CAPSignalingEvent] = []
    /// Why the frame was dropped, when it was.
    public var dropped: DropReason?

    /// Why a frame was not delivered.
    public enum DropReason: Equatable, Sendable {
        /// The basic header was malformed.
        case malformed(DecodingError)
        /// The channel is not one we serve on LE.
        case unknownChannel(L2CAPChannelID)
    }

    /// A routing result; empty by default.
    public init(
        att: [UInt8]? = nil, smp: [UInt8]? = nil, outgoing: [L2CAPFrame] = [], signalingEvents: [L2CAPSignalingEvent] = [],
        dropped: DropReason? = nil
    ) {
        self.att = att
        self.smp = smp
        self.outgoing = outgoing
        self.signalingEvents = signalingEvents
        self.dropped = dropped
    }
}

/// Routes the complete L2CAP PDUs of one LE connection to its fixed channels: ATT (0x0004) and
/// SMP (0x0006) are handed up, LE signalling (0x0005) is answered here. No I/O: the caller
/// sends `outgoing` frames, feeds `att` to the ATT bearer and `smp` to ``HostSecurity``.
public struct L2CAPRouter: Sendable {
    /// Our role on the link.
    public let role: LinkRole
    /// The LE signalling state of this connection.
    public private(set) var signaling: L2CAPSignalingHandler

    /// A router for a new connection where we play `role`.
    public init(role: LinkRole) {
        self.role = role
        self.signaling = L2CAPSignalingHandler(role: role)
    }

    /// Routes one complete (reassembled) L2CAP PDU.
    public mutating func receive(_ pdu: [UInt8]) -> L2CAPRouting {
        let frame: L2CAPFrame
        do {
            frame = try L2CAPFrame(bytes: pdu)
        } catch {
            return L2CAPRouting(dropped: .malformed(error))
        }
        switch frame.channelID {
        case .att:
            return L2CAPRouting(att: frame.payload)
        case .leSignaling:
            let (replies, events) = signaling.receive(frame.payload)
            return L2CAPRouting(
                outgoing: replies.map { L2CAPFrame(channelID: .leSignaling, payload: $0.bytes) }, signalingEvents: events)
        case .smp:
            return L2CAPRouting(smp: frame.payload)
        default:
            return L2CAPRouting(dropped: .unknownChannel(frame.channelID))
        }
    }

    /// (Peripheral) the frame that asks the central for new connection parameters.
    public mutating func requestConnectionParameterUpdate(_ parameters: L2CAPConnectionParameters) -> L2CAPFrame {
        L2CAPFrame(channelID: .leSignaling, payload: signaling.makeConnectionParameterUpdateRequest(parameters).bytes)
    }

    /// Wraps an ATT PDU for sending on CID 0x0004.
    public static func attFrame(_ att: [UInt8]) -> L2CAPFrame {
        L2CAPFrame(channelID: .att, payload: att)
    }
}
