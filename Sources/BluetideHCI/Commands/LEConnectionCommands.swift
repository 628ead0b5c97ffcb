import BluetideBase

// LE connection commands (Core spec Vol 4 Part E 7.8.12-7.8.49).

/// LE connection parameters as requested by a central: intervals in units of 1.25 ms, latency in
/// connection events, supervision timeout in units of 10 ms, connection-event lengths in 0.625 ms.
public struct LEConnectionParameters: HCIFieldTable, Hashable, Sendable {
    /// Minimum connection interval, 1.25 ms units (0x0006-0x0C80).
    public var intervalMin: UInt16
    /// Maximum connection interval, 1.25 ms units.
    public var intervalMax: UInt16
    /// Peripheral latency, connection events (0-499).
    public var maxLatency: UInt16
    /// Supervision timeout, 10 ms units (0x000A-0x0C80).
    public var supervisionTimeout: UInt16
    /// Minimum connection event length, 0.625 ms units (a hint).
    public var minCELength: UInt16
    /// Maximum connection event length, 0.625 ms units (a hint).
    public var maxCELength: UInt16

    /// Defaults: 30-50 ms interval, no latency, 4 s timeout.
    public init(intervalMin: UInt16 = 0x0018, intervalMax: UInt16 = 0x0028, maxLatency: UInt16 = 0,
                supervisionTimeout: UInt16 = 0x0190, minCELength: UInt16 = 0, maxCELength: UInt16 = 0) {
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.maxLatency = maxLatency
        self.supervisionTimeout = supervisionTimeout
        self.minCELength = minCELength
        self.maxCELength = maxCELength
    }

    public static let fields: [HCIField<Self>] = [
        .integer(\.intervalMin, "connection interval min"), .integer(\.intervalMax, "connection interval max"),
        .integer(\.maxLatency, "max latency"), .integer(\.supervisionTimeout, "supervision timeout"),
        .integer(\.minCELength, "min CE length"), .integer(\.maxCELength, "max CE length"),
    ]
    public static let blank = Self()
}

/// LE Create Connection (0x200D): connect to an advertising peer; Command Status, then LE
/// (Enhanced) Connection Complete.
public struct LECreateConnection: HCICommand, HCIFieldTable, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x200D)
    public static let name = "LE Create Connection"
    public static var completion: HCICommandCompletion { .commandStatus }
    /// Scan interval and window while initiating, 0.625 ms units.
    public var scanInterval: UInt16
    /// Scan window while initiating, 0.625 ms units.
    public var scanWindow: UInt16
    /// 0: connect to `peerAddress`; 1: to any device on the filter accept list.
    public var initiatorFilterPolicy: UInt8
    /// The peer address type as sent (0 public, 1 random, 2/3 identity addresses).
    public var peerAddressType: LEAddressType
    /// The peer's address; its type must match the one it advertises with.
    public var peerAddress: BluetoothAddress
    /// Which own address to use: 0 public, 1 the random address set before (2/3: resolvable private, else 0/1).
    public var ownAddressType: LEAddressType
    /// The requested connection parameters.
    public var connection: LEConnectionParameters

    public init(peerAddress: BluetoothAddress, ownAddressType: LEAddressType = .public,
                connection: LEConnectionParameters = LEConnectionParameters(),
                scanInterval: UInt16 = 0x0060, scanWindow: UInt16 = 0x0060, initiatorFilterPolicy: UInt8 = 0) {
        self.scanInterval = scanInterval
        self.scanWindow = scanWindow
        self.initiatorFilterPolicy = initiatorFilterPolicy
        self.peerAddressType = LEAddressType(peerAddress.type)
        self.peerAddress = peerAddress
        self.ownAddressType = ownAddressType
        self.connection = connection
    }
    public static let fields: [HCIField<Self>] = [
        .integer(\.scanInterval, "scan interval"), .integer(\.scanWindow, "scan window"),
        .integer(\.initiatorFilterPolicy, "initiator filter policy"), .raw(\.peerAddressType, "peer address type"),
        .address(\.peerAddress, "peer address", typeFrom: \.peerAddressType),
        .raw(\.ownAddressType, "own address type"), .group(\.connection),
    ]
    public static let blank = Self(peerAddress: BluetoothAddress(value: 0, type: .public))
}

/// LE Create Connection Cancel (0x200E): stops a pending LE Create Connection, which then
/// completes with status 0x02 unknown connection identifier.
public struct LECreateConnectionCancel: HCIParameterlessCommand, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x200E)
    public static let name = "LE Create Connection Cancel"
    public init() {}
}

/// LE Connection Update (0x2013): new parameters for a connection; Command Status, then LE
/// Connection Update Complete.
public struct LEConnectionUpdate: HCICommand, HCIFieldTable, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x2013)
    public static let name = "LE Connection Update"
    public static var completion: HCICommandCompletion { .commandStatus }
    /// Connection handle (12 bits).
    public var handle: UInt16
    /// The requested connection parameters.
    public var connection: LEConnectionParameters
    public init(handle: UInt16, connection: LEConnectionParameters) {
        self.handle = handle
        self.connection = connection
    }
    public static let fields: [HCIField<Self>] = [.handle(\.handle), .group(\.connection)]
    public static let blank = Self(handle: 0, connection: LEConnectionParameters())
}

/// LE Read Remote Features (0x2016): Command Status, then LE Read Remote Features Complete.
public struct LEReadRemoteFeatures: HCICommand, HCIFieldTable, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x2016)
    public static let name = "LE Read Remote Features"
    public static var completion: HCICommandCompletion { .commandStatus }
    /// Connection handle (12 bits).
    public var handle: UInt16
    public init(handle: UInt16) { self.handle = handle }
    public static let fields: [HCIField<Self>] = [.handle(\.handle)]
    public static let blank = Self(handle: 0)
}

/// LE Set Data Length (0x2022): suggest a larger link-layer payload for a connection; Command
/// Complete now, LE Data Length Change when the effective length changes.
public struct LESetDataLength: HCICommand, HCIFieldTable, Equatable {
    /// What Command Complete returns for this command (status first).
    public typealias ReturnParameters = HCIHandleReturn
    public static let opcode = HCIOpcode(rawValue: 0x2022)
    public static let name = "LE Set Data Length"
    /// Connection handle (12 bits).
    public var handle: UInt16
    /// Preferred maximum payload per LL packet, bytes (27-251).
    public var txOctets: UInt16
    /// Preferred maximum time per LL packet, µs (328-17040).
    public var txTime: UInt16
    public init(handle: UInt16, txOctets: UInt16 = 251, txTime: UInt16 = 2120) {
        self.handle = handle
        self.txOctets = txOctets
        self.txTime = txTime
    }
    public static let fields: [HCIField<Self>] = [
        .handle(\.handle), .integer(\.txOctets, "TX octets"), .integer(\.txTime, "TX time"),
    ]
    public static let blank = Self(handle: 0)
}

/// LE Read PHY (0x2030): the transmitter and receiver PHYs of a connection.
public struct LEReadPHY: HCICommand, HCIFieldTable, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x2030)
    public static let name = "LE Read PHY"
    /// Connection handle (12 bits).
    public var handle: UInt16
    public init(handle: UInt16) { self.handle = handle }
    public static let fields: [HCIField<Self>] = [.handle(\.handle)]
    public static let blank = Self(handle: 0)

    /// What Command Complete returns for this command (status first).
    public struct ReturnParameters: HCIReturnParameters, HCIFieldTable, Equatable {
        /// Outcome (0x00 success).
        public var status: HCIStatus
        /// Connection handle (12 bits).
        public var handle: UInt16
        /// PHY this side transmits on.
        public var txPHY: LEPHY
        /// PHY this side receives on.
        public var rxPHY: LEPHY
        public init(status: HCIStatus = .success, handle: UInt16, txPHY: LEPHY, rxPHY: LEPHY) {
            self.status = status
            self.handle = handle
            self.txPHY = txPHY
            self.rxPHY = rxPHY
        }
        public static let fields: [HCIField<Self>] = [
            .status(\.status), .handle(\.handle), .raw(\.txPHY, "TX PHY"), .raw(\.rxPHY, "RX PHY"),
        ]
        public static let blank = Self(handle: 0, txPHY: .le1M, rxPHY: .le1M)
    }
}

/// LE Set PHY (0x2032): preferred PHYs for a connection; Command Status, then LE PHY Update
/// Complete.
public struct LESetPHY: HCICommand, HCIFieldTable, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x2032)
    public static let name = "LE Set PHY"
    public static var completion: HCICommandCompletion { .commandStatus }
    /// Connection handle (12 bits).
    public var handle: UInt16
    /// Bit 0: no TX preference; bit 1: no RX preference.
    public var allPHYs: UInt8
    /// Preferred PHYs as bits: 0 = 1M, 1 = 2M, 2 = Coded.
    public var txPHYs: UInt8
    /// Preferred receiver PHYs as bits: 0 = 1M, 1 = 2M, 2 = Coded.
    public var rxPHYs: UInt8
    /// Coded PHY coding preference (0 none, 1 S=2, 2 S=8).
    public var phyOptions: UInt16
    public init(handle: UInt16, allPHYs: UInt8 = 0, txPHYs: UInt8, rxPHYs: UInt8, phyOptions: UInt16 = 0) {
        self.handle = handle
        self.allPHYs = allPHYs
        self.txPHYs = txPHYs
        self.rxPHYs = rxPHYs
        self.phyOptions = phyOptions
    }
    public static let fields: [HCIField<Self>] = [
        .handle(\.handle), .integer(\.allPHYs, "all PHYs"), .integer(\.txPHYs, "TX PHYs"),
        .integer(\.rxPHYs, "RX PHYs"), .integer(\.phyOptions, "PHY options"),
    ]
    public static let blank = Self(handle: 0, txPHYs: 0, rxPHYs: 0)
}
