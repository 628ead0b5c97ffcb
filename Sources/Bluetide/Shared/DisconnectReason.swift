import BluetideHCI

/// Why a link closed: the HCI reason code the controller reported, with a sentence saying what
/// it means.
///
/// Compare with the named reasons (`reason == .connectionTimeout`, or `case .connectionTimeout:`
/// in a `switch`); any other code is kept as it came, so nothing the controller says is lost.
public struct DisconnectReason: Sendable, Hashable, CustomStringConvertible {
    /// The HCI reason code (Core Specification Vol 1 Part F).
    public let code: UInt8

    /// The reason with HCI code `code`.
    public init(code: UInt8) { self.code = code }

    /// 0x08: the link supervision timeout expired: the peer went silent (out of range, powered off).
    public static let connectionTimeout = DisconnectReason(code: 0x08)
    /// 0x13: the peer closed the link.
    public static let remoteUserTerminated = DisconnectReason(code: 0x13)
    /// 0x14: the peer closed the link because it ran low on resources.
    public static let remoteLowResources = DisconnectReason(code: 0x14)
    /// 0x15: the peer closed the link because it is powering off.
    public static let remotePowerOff = DisconnectReason(code: 0x15)
    /// 0x16: this host closed the link.
    public static let localHostTerminated = DisconnectReason(code: 0x16)
    /// 0x05: authentication failed (pairing keys missing or wrong).
    public static let authenticationFailure = DisconnectReason(code: 0x05)
    /// 0x1A: the peer does not support a feature the link needed.
    public static let unsupportedRemoteFeature = DisconnectReason(code: 0x1A)
    /// 0x22: the peer stopped answering a link-layer procedure.
    public static let linkLayerResponseTimeout = DisconnectReason(code: 0x22)
    /// 0x3B: the connection parameters were not acceptable.
    public static let unacceptableConnectionParameters = DisconnectReason(code: 0x3B)
    /// 0x3D: a packet failed its integrity check (MIC failure) on an encrypted link.
    public static let integrityCheckFailure = DisconnectReason(code: 0x3D)
    /// 0x3E: the link never got going (no packet from the peer after the connect request).
    public static let failedToEstablish = DisconnectReason(code: 0x3E)

    /// A sentence saying what happened, e.g. "the peer went silent (link supervision timeout)".
    public var explanation: String {
        switch code {
        case 0x05: "authentication failed"
        case 0x08: "the peer went silent (link supervision timeout)"
        case 0x13: "the peer closed the link"
        case 0x14: "the peer closed the link (low on resources)"
        case 0x15: "the peer closed the link (powering off)"
        case 0x16: "this host closed the link"
        case 0x1A: "the peer lacks a feature the link needed"
        case 0x22: "the peer stopped answering a link-layer procedure"
        case 0x3B: "the connection parameters were refused"
        case 0x3D: "a packet failed its integrity check"
        case 0x3E: "the link could not be established"
        default: "the controller closed the link (\(HCIStatus(code).name ?? "unlisted reason"))"
        }
    }

    /// `0x13 (remote user terminated connection)`: the code and the specification's name.
    public var description: String { HCIStatus(code).description }

    /// The reason carried by an HCI status.
    init(_ status: HCIStatus) { self.init(code: status.rawValue) }
}
