import BluetideBase

// LE connection commands (Core spec Vol 4 Part E 7.8.12-7.8.49).

/// LE connection parameters as requested by a central: intervals in units of 1.25 ms, latency in
/// connection events, supervision timeout in units of 10 ms, connection-event lengths in 0.625 ms.
public struct LEConnectionParameters: Hashable, Sendable {
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

    init(from reader: inout ByteReader) throws(DecodingError) {
        intervalMin = try reader.read(UInt16.self, "connection interval min")
        intervalMax = try reader.read(UInt16.self, "connection interval max")
        maxLatency = try reader.read(UInt16.self, "max latency")
        supervisionTimeout = try reader.read(UInt16.self, "supervision timeout")
        minCELength = try reader.read(UInt16.self, "min CE length")
        maxCELength = try reader.read(UInt16.self, "max CE length")
    }

    func encode(to writer: inout ByteWriter) {
        writer.write(intervalMin)
        writer.write(intervalMax)
        writer.write(maxLatency)
        writer.write(supervisionTimeout)
        writer.write(minCELength)
        writer.write(maxCELength)
    }
}

/// LE Create Connection (0x200D): connect to an advertising peer; Command Status, then LE
/// (Enhanced) Connection Complete.
public struct LECreateConnection: HCICommand, Equatable {
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
    public init(from reader: inout ByteReader) throws(DecodingError) {
        scanInterval = try reader.read(UInt16.self, "scan interval")
        scanWindow = try reader.read(UInt16.self, "scan window")
        initiatorFilterPolicy = try reader.readUInt8("initiator filter policy")
        peerAddressType = LEAddressType(rawValue: try reader.readUInt8("peer address type"))
        peerAddress = try reader.readAddress("peer address", type: peerAddressType)
        ownAddressType = LEAddressType(rawValue: try reader.readUInt8("own address type"))
        connection = try LEConnectionParameters(from: &reader)
    }
    public func encode(to writer: inout ByteWriter) {
        writer.write(scanInterval)
        writer.write(scanWindow)
        writer.write(initiatorFilterPolicy)
        writer.write(peerAddressType.rawValue)
        writer.write(address: peerAddress)
        writer.write(ownAddressType.rawValue)
        connection.encode(to: &writer)
    }
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
public struct LEConnectionUpdate: HCICommand, Equatable {
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
    public init(from reader: inout ByteReader) throws(DecodingError) {
        handle = try reader.readHandle()
        connection = try LEConnectionParameters(from: &reader)
    }
    public func encode(to writer: inout ByteWriter) {
        writer.write(handle)
        connection.encode(to: &writer)
    }
}

/// LE Read Remote Features (0x2016): Command Status, then LE Read Remote Features Complete.
public struct LEReadRemoteFeatures: HCICommand, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x2016)
    public static let name = "LE Read Remote Features"
    public static var completion: HCICommandCompletion { .commandStatus }
    /// Connection handle (12 bits).
    public var handle: UInt16
    public init(handle: UInt16) { self.handle = handle }
    public init(from reader: inout ByteReader) throws(DecodingError) { handle = try reader.readHandle() }
    public func encode(to writer: inout ByteWriter) { writer.write(handle) }
}

/// LE Set Data Length (0x2022): suggest a larger link-layer payload for a connection; Command
/// Complete now, LE Data Length Change when the effective length changes.
public struct LESetDataLength: HCICommand, Equatable {
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
    public init(from reader: inout ByteReader) throws(DecodingError) {
        handle = try reader.readHandle()
        txOctets = try reader.read(UInt16.self, "TX octets")
        txTime = try reader.read(UInt16.self, "TX time")
    }
    public func encode(to writer: inout ByteWriter) {
        writer.write(handle)
        writer.write(txOctets)
        writer.write(txTime)
    }
}

/// LE Read PHY (0x2030): the transmitter and receiver PHYs of a connection.
public struct LEReadPHY: HCICommand, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x2030)
    public static let name = "LE Read PHY"
    /// Connection handle (12 bits).
    public var handle: UInt16
    public init(handle: UInt16) { self.handle = handle }
    public init(from reader: inout ByteReader) throws(DecodingError) { handle = try reader.readHandle() }
    public func encode(to writer: inout ByteWriter) { writer.write(handle) }

    /// What Command Complete returns for this command (status first).
    public struct ReturnParameters: HCIReturnParameters, Equatable {
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
        public init(from reader: inout ByteReader) throws(DecodingError) {
            status = try HCIStatus(from: &reader)
            handle = try reader.readHandle()
            txPHY = LEPHY(rawValue: try reader.readUInt8("TX PHY"))
            rxPHY = LEPHY(rawValue: try reader.readUInt8("RX PHY"))
        }
        public func encode(to writer: inout ByteWriter) {
            status.encode(to: &writer)
            writer.write(handle)
            writer.write(txPHY.rawValue)
            writer.write(rxPHY.rawValue)
        }
    }
}

/// LE Set PHY (0x2032): preferred PHYs for a connection; Command Status, then LE PHY Update
/// Complete.
public struct LESetPHY: HCICommand, Equatable {
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
    public init(from reader: inout ByteReader) throws(DecodingError) {
        handle = try reader.readHandle()
        allPHYs = try reader.readUInt8("all PHYs")
        txPHYs = try reader.readUInt8("TX PHYs")
        rxPHYs = try reader.readUInt8("RX PHYs")
        phyOptions = try reader.read(UInt16.self, "PHY options")
    }
    public func encode(to writer: inout ByteWriter) {
        writer.write(handle)
        writer.write(allPHYs)
        writer.write(txPHYs)
        writer.write(rxPHYs)
        writer.write(phyOptions)
    }
}
