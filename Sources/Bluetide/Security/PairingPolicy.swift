import BluetideHost

/// How this host pairs, for ``Bluetooth/Configuration/pairing``: what it can show and type (which
/// decides the method the two devices use), whether it bonds, and whether a central pairs by
/// itself when a device refuses an operation for want of security (as phones do).
public struct PairingPolicy: Sendable, Hashable {
    /// What this device can show and type. `.noInputNoOutput` pairs Just Works (encrypted, not
    /// authenticated); `.displayYesNo` or `.keyboardDisplay` allow numeric comparison and
    /// passkeys, answered through ``Bluetooth/pairingPrompts``.
    public var ioCapability: IOCapability
    /// Store the keys (in ``Bluetooth/Configuration/bondFile``) so later connections encrypt
    /// without pairing again.
    public var bonding: Bool
    /// Refuse pairing methods that do not protect against a man in the middle (Just Works).
    public var requiresMITM: Bool
    /// Refuse LE legacy pairing (devices without LE Secure Connections).
    public var secureConnectionsOnly: Bool
    /// False: every pairing request is refused with Pairing Failed 0x05 "Pairing Not Supported".
    public var pairable: Bool
    /// (Central) when a device answers a read, write or subscription with Insufficient
    /// Encryption (0x0F), Insufficient Authentication (0x05) or Insufficient Encryption Key Size
    /// (0x0C), pair (or encrypt with the bond) and retry the operation once.
    public var pairsWhenRequired: Bool
    /// (Central) pair at once when a peripheral sends a Security Request.
    public var pairsOnSecurityRequest: Bool
    /// Time limit of one pairing: the SMP timeout, 30 s in the specification (Vol 3 Part H 3.4).
    public var timeout: Duration

    /// A policy; see each property.
    public init(
        ioCapability: IOCapability = .noInputNoOutput, bonding: Bool = true, requiresMITM: Bool = false,
        secureConnectionsOnly: Bool = false, pairable: Bool = true, pairsWhenRequired: Bool = true,
        pairsOnSecurityRequest: Bool = true, timeout: Duration = .seconds(30)
    ) {
        self.ioCapability = ioCapability
        self.bonding = bonding
        self.requiresMITM = requiresMITM
        self.secureConnectionsOnly = secureConnectionsOnly
        self.pairable = pairable
        self.pairsWhenRequired = pairsWhenRequired
        self.pairsOnSecurityRequest = pairsOnSecurityRequest
        self.timeout = timeout
    }

    /// Just Works, bonding, pairing when a device asks for it: no questions to the user.
    public static let justWorks = PairingPolicy()
    /// A device that does not pair at all (the behaviour before pairing existed).
    public static let notPairable = PairingPolicy(pairable: false, pairsWhenRequired: false, pairsOnSecurityRequest: false)

    /// The host's policy for this one.
    var hostPolicy: SecurityPolicy {
        SecurityPolicy(
            pairing: SMPConfiguration(
                ioCapability: ioCapability, bonding: bonding, requiresMITM: requiresMITM,
                secureConnectionsOnly: secureConnectionsOnly, timeout: timeout, pairable: pairable),
            pairsOnSecurityRequest: pairsOnSecurityRequest, encryptsBondedLinksOnConnect: true)
    }
}
