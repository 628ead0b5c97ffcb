import BluetideBase
import BluetideHCI

/// How a host sets itself up (``HostStack/Configuration`` is this type).
public struct HostConfiguration: Sendable {
    /// A random static address to use as our own (recommended: Bumble's controllers all share
    /// the public address 00:00:00:00:00:00). Nil uses the controller's public address.
    public var randomAddress: BluetoothAddress?
    /// GAP device name served in 0x2A00.
    public var deviceName: String
    /// GAP appearance served in 0x2A01.
    public var appearance: UInt16
    /// Services of the local GATT server (GAP and GATT services are added automatically).
    public var services: [GATTServiceDefinition]
    /// Seconds an HCI command may wait for its Command Complete / Status.
    public var commandTimeout: Double
    /// Seconds an ATT transaction may wait for its response (30 s in the specification).
    public var attTransactionTimeout: Double
    /// Our ATT MTU (the largest the peer may use towards us), 23…517.
    public var localMTU: Int
    /// How this host pairs and when it encrypts on its own (IO capability, bonding, MITM, ...).
    public var security: SecurityPolicy
    /// The bond file (JSON, mode 0600): loaded at start, rewritten after each new bond. Nil
    /// keeps bonds in memory only.
    public var bondFile: String?
    /// Where pairing's random numbers come from: the system's secure generator, or a seed that
    /// makes pairings reproducible (tests and capture replays only).
    public var randomness: HostRandomness

    public init(
        randomAddress: BluetoothAddress? = nil, deviceName: String = "Bluetide", appearance: UInt16 = 0,
        services: [GATTServiceDefinition] = [], commandTimeout: Double = 10, attTransactionTimeout: Double = 30,
        localMTU: Int = 517, security: SecurityPolicy = SecurityPolicy(), bondFile: String? = nil,
        randomness: HostRandomness = .system
    ) {
        self.randomness = randomness
        self.randomAddress = randomAddress
        self.deviceName = deviceName
        self.appearance = appearance
        self.services = services
        self.commandTimeout = commandTimeout
        self.attTransactionTimeout = attTransactionTimeout
        self.localMTU = min(max(localMTU, 23), 517)
        self.security = security
        self.bondFile = bondFile
    }

    /// The address type the controller uses for us: random when a random address is configured.
    var ownAddressType: LEAddressType { randomAddress == nil ? .public : .random }
}
