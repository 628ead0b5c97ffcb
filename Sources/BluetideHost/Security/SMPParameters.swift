import BluetideBase

/// What a device can show and type, announced in Pairing Request/Response (Core Vol 3 Part H
/// 3.5.1, Table 3.4). Together with the peer's, it picks the pairing method (2.3.5.1).
public enum SMPIOCapability: UInt8, Sendable, Hashable, Codable, CaseIterable {
    /// Can show a six-digit number, no way to answer.
    case displayOnly = 0x00
    /// Can show a number and take a yes/no answer.
    case displayYesNo = 0x01
    /// Can type digits, no display.
    case keyboardOnly = 0x02
    /// Neither (pairing is Just Works, unauthenticated).
    case noInputNoOutput = 0x03
    /// Can show a number and type digits.
    case keyboardDisplay = 0x04
}

/// The AuthReq field of Pairing Request/Response and Security Request (3.5.1, Figure 3.3).
public struct SMPAuthRequirements: OptionSet, Sendable, Hashable, Codable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Bonding_Flags = 01: the keys are to be stored (a bond).
    public static let bonding = SMPAuthRequirements(rawValue: 0x01)
    /// MITM protection wanted: an authenticated method (passkey or numeric comparison).
    public static let mitm = SMPAuthRequirements(rawValue: 0x04)
    /// LE Secure Connections supported.
    public static let secureConnections = SMPAuthRequirements(rawValue: 0x08)
    /// Keypress notifications wanted during passkey entry.
    public static let keypress = SMPAuthRequirements(rawValue: 0x10)
    /// The h7 function is supported for cross-transport key derivation.
    public static let ct2 = SMPAuthRequirements(rawValue: 0x20)
}

/// The Initiator/Responder Key Distribution fields (3.6.1, Figure 3.11): which keys each side
/// sends after the link is encrypted.
public struct SMPKeyDistribution: OptionSet, Sendable, Hashable, Codable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// EncKey: LTK, EDIV and Rand (LE legacy pairing only; ignored with Secure Connections).
    public static let encryptionKey = SMPKeyDistribution(rawValue: 0x01)
    /// IdKey: IRK and identity address.
    public static let identityKey = SMPKeyDistribution(rawValue: 0x02)
    /// SignKey: CSRK for signed writes.
    public static let signingKey = SMPKeyDistribution(rawValue: 0x04)
    /// LinkKey: derive a BR/EDR link key (Bluetide is LE-only and never sets it).
    public static let linkKey = SMPKeyDistribution(rawValue: 0x08)
}

/// The six parameter octets of Pairing Request (3.5.1) and Pairing Response (3.5.2).
public struct SMPPairingFeatures: Sendable, Hashable {
    /// The sender's IO capability.
    public var ioCapability: SMPIOCapability
    /// True when the sender has out-of-band data of the peer.
    public var oobDataPresent: Bool
    /// Bonding, MITM, Secure Connections, keypress and CT2 flags.
    public var authRequirements: SMPAuthRequirements
    /// Largest encryption key the sender accepts, in octets (7…16).
    public var maximumKeySize: UInt8
    /// Keys the initiator is to send.
    public var initiatorKeys: SMPKeyDistribution
    /// Keys the responder is to send.
    public var responderKeys: SMPKeyDistribution

    public init(
        ioCapability: SMPIOCapability, oobDataPresent: Bool = false, authRequirements: SMPAuthRequirements,
        maximumKeySize: UInt8 = 16, initiatorKeys: SMPKeyDistribution, responderKeys: SMPKeyDistribution
    ) {
        self.ioCapability = ioCapability
        self.oobDataPresent = oobDataPresent
        self.authRequirements = authRequirements
        self.maximumKeySize = maximumKeySize
        self.initiatorKeys = initiatorKeys
        self.responderKeys = responderKeys
    }

    /// The three octets f6 takes as IOcap, in wire order: IO capability, OOB flag, AuthReq
    /// (the spec writes them most significant first: AuthReq || OOB || IOcap).
    var ioCapField: [UInt8] { [ioCapability.rawValue, oobDataPresent ? 1 : 0, authRequirements.rawValue] }
}

/// The reason octet of Pairing Failed (3.5.5, Table 3.7). Unknown values are kept as they came.
public struct SMPPairingFailureReason: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// 0x01: the user cancelled or failed passkey entry.
    public static let passkeyEntryFailed = SMPPairingFailureReason(rawValue: 0x01)
    /// 0x02: OOB data is not available.
    public static let oobNotAvailable = SMPPairingFailureReason(rawValue: 0x02)
    /// 0x03: the IO capabilities cannot meet the authentication requirements.
    public static let authenticationRequirements = SMPPairingFailureReason(rawValue: 0x03)
    /// 0x04: a confirm value did not match (a wrong passkey shows up as this).
    public static let confirmValueFailed = SMPPairingFailureReason(rawValue: 0x04)
    /// 0x05: pairing is not supported by the device.
    public static let pairingNotSupported = SMPPairingFailureReason(rawValue: 0x05)
    /// 0x06: the resulting key would be too short.
    public static let encryptionKeySize = SMPPairingFailureReason(rawValue: 0x06)
    /// 0x07: the SMP command is not supported.
    public static let commandNotSupported = SMPPairingFailureReason(rawValue: 0x07)
    /// 0x08: pairing failed for a reason not listed.
    public static let unspecifiedReason = SMPPairingFailureReason(rawValue: 0x08)
    /// 0x09: too little time has passed since the last failed attempt.
    public static let repeatedAttempts = SMPPairingFailureReason(rawValue: 0x09)
    /// 0x0A: a command's length or a parameter was invalid.
    public static let invalidParameters = SMPPairingFailureReason(rawValue: 0x0A)
    /// 0x0B: the DHKey Check value did not match.
    public static let dhKeyCheckFailed = SMPPairingFailureReason(rawValue: 0x0B)
    /// 0x0C: the user said the two numbers differ.
    public static let numericComparisonFailed = SMPPairingFailureReason(rawValue: 0x0C)
    /// 0x0D: BR/EDR pairing is in progress.
    public static let brEdrPairingInProgress = SMPPairingFailureReason(rawValue: 0x0D)
    /// 0x0E: cross-transport key derivation is not allowed.
    public static let crossTransportKeyDerivationNotAllowed = SMPPairingFailureReason(rawValue: 0x0E)
    /// 0x0F: the device's security database is keyed on another identity for this key.
    public static let keyRejected = SMPPairingFailureReason(rawValue: 0x0F)

    /// What the reason means, for people.
    public var description: String {
        switch rawValue {
        case 0x01: return "passkey entry failed (0x01)"
        case 0x02: return "OOB data not available (0x02)"
        case 0x03: return "authentication requirements cannot be met (0x03)"
        case 0x04: return "confirm value failed, a wrong passkey? (0x04)"
        case 0x05: return "pairing not supported (0x05)"
        case 0x06: return "encryption key too short (0x06)"
        case 0x07: return "command not supported (0x07)"
        case 0x08: return "unspecified reason (0x08)"
        case 0x09: return "repeated attempts, wait before trying again (0x09)"
        case 0x0A: return "invalid parameters (0x0A)"
        case 0x0B: return "DHKey check failed (0x0B)"
        case 0x0C: return "numeric comparison failed (0x0C)"
        case 0x0D: return "BR/EDR pairing in progress (0x0D)"
        case 0x0E: return "cross-transport key derivation not allowed (0x0E)"
        case 0x0F: return "key rejected (0x0F)"
        default: return "reason 0x" + [rawValue].hexString
        }
    }
}

/// Keypress Notification types (3.5.8, Table 3.10).
public enum SMPKeypress: UInt8, Sendable, Hashable {
    case entryStarted = 0
    case digitEntered = 1
    case digitErased = 2
    case cleared = 3
    case entryCompleted = 4
}
