import BluetideBase

/// How two devices authenticate each other, from their IO capabilities (Core Vol 3 Part H 2.3.5.1).
public enum SMPPairingMethod: Sendable, Hashable, Codable, CustomStringConvertible {
    /// No user interaction; encrypted but not protected against a man in the middle.
    case justWorks
    /// LE Secure Connections only: both show the same six digits and the users confirm.
    case numericComparison
    /// One side shows (or both users type) a six-digit passkey that the other side types.
    case passkeyEntry(SMPPasskeyEntry)

    /// Who shows and who types the passkey.
    public enum SMPPasskeyEntry: Sendable, Hashable, Codable {
        /// The initiator shows it, the responder's user types it.
        case initiatorDisplays
        /// The responder shows it, the initiator's user types it.
        case responderDisplays
        /// Both users type the same passkey (two keyboards, no display).
        case bothInput
    }

    /// True for the methods that protect against a man in the middle.
    public var isAuthenticated: Bool { self != .justWorks }

    public var description: String {
        switch self {
        case .justWorks: return "just works"
        case .numericComparison: return "numeric comparison"
        case .passkeyEntry: return "passkey entry"
        }
    }

    /// The method for the initiator's and responder's features (OOB aside, which the caller
    /// decides first): Just Works unless one side asks for MITM protection, else the IO
    /// capability table of 2.3.5.1.
    public static func select(
        initiator: SMPPairingFeatures, responder: SMPPairingFeatures, secureConnections: Bool
    ) -> SMPPairingMethod {
        guard initiator.authRequirements.contains(.mitm) || responder.authRequirements.contains(.mitm) else {
            return .justWorks
        }
        let comparisonOr: (SMPPairingMethod) -> SMPPairingMethod = { secureConnections ? .numericComparison : $0 }
        switch (initiator.ioCapability, responder.ioCapability) {
        case (.noInputNoOutput, _), (_, .noInputNoOutput):
            return .justWorks
        case (.displayOnly, .displayOnly), (.displayOnly, .displayYesNo), (.displayYesNo, .displayOnly):
            return .justWorks
        case (.displayYesNo, .displayYesNo):
            return comparisonOr(.justWorks)
        case (.keyboardOnly, .displayOnly), (.keyboardOnly, .displayYesNo), (.keyboardOnly, .keyboardDisplay),
            (.keyboardDisplay, .displayOnly):
            return .passkeyEntry(.responderDisplays)
        case (.keyboardDisplay, .displayYesNo):
            return comparisonOr(.passkeyEntry(.responderDisplays))
        case (.displayOnly, .keyboardOnly), (.displayYesNo, .keyboardOnly), (.keyboardDisplay, .keyboardOnly),
            (.displayOnly, .keyboardDisplay):
            return .passkeyEntry(.initiatorDisplays)
        case (.displayYesNo, .keyboardDisplay), (.keyboardDisplay, .keyboardDisplay):
            return comparisonOr(.passkeyEntry(.initiatorDisplays))
        case (.keyboardOnly, .keyboardOnly):
            return .passkeyEntry(.bothInput)
        }
    }
}

/// LE Security Mode 1 levels (Core Vol 3 Part C 10.2.1), ordered.
public enum SMPSecurityLevel: Int, Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    /// Level 1: no encryption.
    case none = 1
    /// Level 2: encrypted, keys from an unauthenticated method (Just Works).
    case encrypted = 2
    /// Level 3: encrypted with keys from an authenticated (MITM-protected) method.
    case authenticated = 3
    /// Level 4: authenticated LE Secure Connections with a 128-bit key.
    case authenticatedSecureConnections = 4

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String {
        switch self {
        case .none: return "not encrypted"
        case .encrypted: return "encrypted (unauthenticated)"
        case .authenticated: return "encrypted and authenticated"
        case .authenticatedSecureConnections: return "encrypted and authenticated (Secure Connections, 128-bit key)"
        }
    }
}

/// A Long Term Key with the EDIV and Rand that name it in LE Enable Encryption and LE Long Term
/// Key Request (both zero for LE Secure Connections keys).
public struct SMPLongTermKey: Sendable, Hashable, Codable {
    /// 16 octets, least significant first; octets past the negotiated key size are zero.
    public var key: [UInt8]
    /// Encrypted Diversifier.
    public var ediv: UInt16
    /// Random number.
    public var random: UInt64

    public init(key: [UInt8], ediv: UInt16 = 0, random: UInt64 = 0) {
        self.key = key
        self.ediv = ediv
        self.random = random
    }
}

/// The keys one side holds after pairing.
public struct SMPKeySet: Sendable, Hashable {
    /// The key to encrypt with later: as central the peer's, as peripheral our own (for LE
    /// Secure Connections the derived LTK on both sides).
    public var longTermKey: SMPLongTermKey?
    /// Identity Resolving Key: resolves this side's resolvable private addresses.
    public var identityResolvingKey: [UInt8]?
    /// Public or static random identity address.
    public var identityAddress: BluetoothAddress?
    /// Connection Signature Resolving Key for signed writes.
    public var signatureKey: [UInt8]?

    public init(
        longTermKey: SMPLongTermKey? = nil, identityResolvingKey: [UInt8]? = nil,
        identityAddress: BluetoothAddress? = nil, signatureKey: [UInt8]? = nil
    ) {
        self.longTermKey = longTermKey
        self.identityResolvingKey = identityResolvingKey
        self.identityAddress = identityAddress
        self.signatureKey = signatureKey
    }
}

/// A device's identity for key distribution: its IRK and its public or static random address.
public struct SMPIdentity: Sendable, Hashable {
    /// 16 octets, least significant first.
    public var identityResolvingKey: [UInt8]
    /// The identity address.
    public var address: BluetoothAddress

    public init(identityResolvingKey: [UInt8], address: BluetoothAddress) {
        self.identityResolvingKey = identityResolvingKey
        self.address = address
    }
}

/// What pairing produced.
public struct SMPPairingResult: Sendable, Hashable {
    /// The method that authenticated the devices.
    public var method: SMPPairingMethod
    /// True for LE Secure Connections, false for LE legacy pairing.
    public var secureConnections: Bool
    /// The security level the link now has.
    public var securityLevel: SMPSecurityLevel
    /// The encryption key size in octets (7…16).
    public var keySize: Int
    /// True when both sides asked to bond (the keys are meant to be stored).
    public var bonded: Bool
    /// Keys we sent (or, for Secure Connections, derived) and keep to answer the peer.
    public var localKeys: SMPKeySet
    /// Keys the peer sent (or derived with us).
    public var peerKeys: SMPKeySet
    /// True when the peer used the published debug key pair (anyone can decrypt the link).
    public var peerUsedDebugKey: Bool
}

/// Why pairing ended without keys. `description` is one line for a user.
public enum SMPPairingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// We ended pairing and sent Pairing Failed with this reason.
    case localFailure(SMPPairingFailureReason)
    /// The peer sent Pairing Failed with this reason.
    case peerFailure(SMPPairingFailureReason)
    /// No SMP progress for 30 seconds; no further pairing on this link until it reconnects.
    case timeout
    /// The controller reported the encryption did not start (HCI status code).
    case encryptionFailed(status: UInt8)

    /// The Pairing Failed reason, when there was one.
    public var reason: SMPPairingFailureReason? {
        switch self {
        case let .localFailure(reason), let .peerFailure(reason): return reason
        case .timeout, .encryptionFailed: return nil
        }
    }

    public var description: String {
        switch self {
        case let .localFailure(reason) where reason == .confirmValueFailed:
            return "pairing failed: the passkey did not match (0x04); check the number and pair again"
        case let .peerFailure(reason) where reason == .confirmValueFailed:
            return "pairing failed: the device says the passkey did not match (0x04); check the number and pair again"
        case let .peerFailure(reason) where reason == .pairingNotSupported:
            return "pairing failed: the device does not support pairing (0x05)"
        case let .localFailure(reason):
            return "pairing failed: \(reason)"
        case let .peerFailure(reason):
            return "pairing failed: the device refused, \(reason)"
        case .timeout:
            return "pairing failed: the device stopped answering for 30 s; reconnect and pair again"
        case .encryptionFailed(status: 0x06):
            // PIN or Key Missing: the peer's host answered our bond's LTK with a negative reply.
            return "encryption failed: the device has no key for this link (HCI status 0x06, PIN or Key Missing): if it was"
                + " bonded, it forgot the bond or our address changed; remove the bond (bluetide bonds remove ADDRESS) and pair again"
        case let .encryptionFailed(status):
            return "pairing failed: the controller could not encrypt the link (HCI status 0x\([status].hexString))"
        }
    }
}

/// Something the user has to do for pairing to go on. Answer with
/// ``SMPPairing/confirmNumericComparison(_:now:)`` or ``SMPPairing/enterPasskey(_:now:)``.
public enum SMPPrompt: Sendable, Hashable {
    /// Show this six-digit number and ask whether the other device shows the same one.
    case confirmNumber(UInt32)
    /// Ask the user to type the six-digit passkey the other device shows.
    case enterPasskey
    /// Show this six-digit passkey for the user to type on the other device.
    case displayPasskey(UInt32)
}

/// What a pairing step asks its owner to do, in order.
public enum SMPOutput: Sendable, Hashable {
    /// Send this PDU on L2CAP CID 0x0006.
    case send(SMPPDU)
    /// (Central) start encryption with LE Enable Encryption using this key.
    case startEncryption(SMPLongTermKey)
    /// Ask the user something.
    case prompt(SMPPrompt)
    /// (Central) the peripheral sent a Security Request: pair, or encrypt with a stored bond.
    case securityRequested(SMPAuthRequirements)
    /// Pairing finished: the link is encrypted and keys were exchanged.
    case completed(SMPPairingResult)
    /// Pairing ended without keys.
    case failed(SMPPairingError)
}

/// Local pairing policy for a link.
public struct SMPConfiguration: Sendable, Hashable {
    /// What this device can show and type.
    public var ioCapability: SMPIOCapability
    /// Ask to bond (store the keys for later reconnects).
    public var bonding: Bool
    /// Refuse methods without MITM protection (Just Works) with reason 0x03.
    public var requiresMITM: Bool
    /// Offer LE Secure Connections.
    public var secureConnections: Bool
    /// Refuse LE legacy pairing with reason 0x03.
    public var secureConnectionsOnly: Bool
    /// Largest key size offered, in octets.
    public var maximumKeySize: UInt8
    /// Smallest key size accepted; shorter negotiations fail with 0x06.
    public var minimumKeySize: UInt8
    /// Keys this device is willing to send.
    public var keysToDistribute: SMPKeyDistribution
    /// Keys this device asks the peer for.
    public var keysToRequest: SMPKeyDistribution
    /// This device's IRK and identity address, sent when the peer asks for IdKey.
    public var identity: SMPIdentity?
    /// The SMP timeout (30 s in the specification).
    public var timeout: Duration
    /// Use the published debug key pair (lets a sniffer decrypt; for debugging one's own links).
    public var usesDebugKeys: Bool
    /// False: refuse every pairing with Pairing Failed 0x05 "Pairing Not Supported".
    public var pairable: Bool

    public init(
        ioCapability: SMPIOCapability = .noInputNoOutput, bonding: Bool = true, requiresMITM: Bool = false,
        secureConnections: Bool = true, secureConnectionsOnly: Bool = false, maximumKeySize: UInt8 = 16,
        minimumKeySize: UInt8 = 7, keysToDistribute: SMPKeyDistribution = [.encryptionKey, .identityKey, .signingKey],
        keysToRequest: SMPKeyDistribution = [.encryptionKey, .identityKey, .signingKey], identity: SMPIdentity? = nil,
        timeout: Duration = .seconds(30), usesDebugKeys: Bool = false, pairable: Bool = true
    ) {
        self.ioCapability = ioCapability
        self.bonding = bonding
        self.requiresMITM = requiresMITM
        self.secureConnections = secureConnections
        self.secureConnectionsOnly = secureConnectionsOnly
        self.maximumKeySize = min(max(maximumKeySize, 7), 16)
        self.minimumKeySize = min(max(minimumKeySize, 7), 16)
        self.keysToDistribute = keysToDistribute
        self.keysToRequest = keysToRequest
        self.identity = identity
        self.timeout = timeout
        self.usesDebugKeys = usesDebugKeys
        self.pairable = pairable
    }

    /// A device that does not pair: every Pairing Request (and, as central, Security Request) is
    /// answered with Pairing Failed 0x05.
    public static let notPairable = SMPConfiguration(pairable: false)

    /// The AuthReq this device sends: bonding as configured, MITM whenever its IO can take part
    /// in an authenticated method (as phones do), SC when offered.
    var authRequirements: SMPAuthRequirements {
        var auth: SMPAuthRequirements = []
        if bonding { auth.insert(.bonding) }
        if requiresMITM || ioCapability != .noInputNoOutput { auth.insert(.mitm) }
        if secureConnections || secureConnectionsOnly { auth.insert(.secureConnections) }
        return auth
    }

    /// Keys we can actually send: IdKey only with an identity; never LinkKey (LE only).
    var distributableKeys: SMPKeyDistribution {
        var keys = keysToDistribute.subtracting(.linkKey)
        if identity == nil { keys.remove(.identityKey) }
        return bonding ? keys : []
    }
}

/// Failed attempts against one peer, for the repeated-attempts rule (Core Vol 3 Part H 2.3.6):
/// after a failure the next attempt must wait, the wait doubling with each further failure.
public struct SMPAttemptHistory: Sendable, Hashable {
    /// Consecutive failures.
    public private(set) var failures: Int = 0
    /// Time (on the caller's clock) before which a new attempt is refused with 0x09.
    public private(set) var notBefore: Duration?
    /// The first wait; it doubles per failure up to ``longestWait``.
    public static let firstWait: Duration = .seconds(2)
    /// The longest wait.
    public static let longestWait: Duration = .seconds(64)

    public init() {}

    /// Whether an attempt may start at `now`.
    public func allows(at now: Duration) -> Bool { notBefore.map { now >= $0 } ?? true }

    /// Records a failed attempt at `now`.
    public mutating func recordFailure(at now: Duration) {
        failures += 1
        let wait = Self.firstWait * (1 << min(failures - 1, 5))
        notBefore = now + min(wait, Self.longestWait)
    }

    /// Records a success: the next attempt may start at once.
    public mutating func recordSuccess() {
        failures = 0
        notBefore = nil
    }
}
