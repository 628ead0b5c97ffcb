import BluetideBase

// LE extended scanning and initiating (Core spec Vol 4 Part E 7.8.64-7.8.66). A controller that
// was given one of these may refuse the legacy ones (and the reverse) until Reset.

/// Reads the PHY bit field of extended scanning/initiating: only bits 0 (1M), 1 (2M, initiating
/// only) and 2 (Coded) exist.
private func readPHYBits(_ reader: inout ByteReader, _ field: String, allowed: UInt8) throws(DecodingError) -> UInt8 {
    let start = reader.offset
    let bits = try reader.readUInt8(field)
    guard bits & ~allowed == 0 else {
        let hex = String(bits, radix: 16, uppercase: true)
        throw .invalid(field, expected: "only bits 0x\(String(allowed, radix: 16, uppercase: true))", found: "0x\(hex)", at: start)
    }
    return bits
}

/// LE Set Extended Scan Parameters (0x2041).
public struct LESetExtendedScanParameters: HCICommand, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x2041)
    public static let name = "LE Set Extended Scan Parameters"

    /// How to scan on one PHY.
    public struct PHYScan: Hashable, Sendable {
        /// True for active scanning (scan requests, so scan responses are reported).
        public var active: Bool
        /// Scan interval and window, 0.625 ms units.
        public var interval: UInt16
        /// Scan window, 0.625 ms units (at most the interval).
        public var window: UInt16
        public init(active: Bool = true, interval: UInt16 = 0x0010, window: UInt16 = 0x0010) {
            self.active = active
            self.interval = interval
            self.window = window
        }
    }

    /// Which own address to use: 0 public, 1 the random address set before (2/3: resolvable private, else 0/1).
    public var ownAddressType: LEAddressType
    /// Filter policy (0 = accept all).
    public var filterPolicy: UInt8
    /// Scanning on LE 1M (nil: not scanned).
    public var le1M: PHYScan?
    /// Scanning on LE Coded (nil: not scanned).
    public var coded: PHYScan?

    public init(ownAddressType: LEAddressType = .public, filterPolicy: UInt8 = 0, le1M: PHYScan? = PHYScan(), coded: PHYScan? = nil) {
        self.ownAddressType = ownAddressType
        self.filterPolicy = filterPolicy
        self.le1M = le1M
        self.coded = coded
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        ownAddressType = LEAddressType(rawValue: try reader.readUInt8("own address type"))
        filterPolicy = try reader.readUInt8("scanning filter policy")
        let bits = try readPHYBits(&reader, "scanning PHYs", allowed: 0b101)
        func phy(_ name: String, _ reader: inout ByteReader) throws(DecodingError) -> PHYScan {
            PHYScan(active: try reader.readUInt8("\(name) scan type") != 0,
                    interval: try reader.read(UInt16.self, "\(name) scan interval"),
                    window: try reader.read(UInt16.self, "\(name) scan window"))
        }
        le1M = bits & 0b001 != 0 ? try phy("LE 1M", &reader) : nil
        coded = bits & 0b100 != 0 ? try phy("LE Coded", &reader) : nil
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(ownAddressType.rawValue)
        writer.write(filterPolicy)
        writer.write(UInt8((le1M != nil ? 0b001 : 0) | (coded != nil ? 0b100 : 0)))
        for scan in [le1M, coded].compactMap({ $0 }) {
            writer.write(UInt8(scan.active ? 1 : 0))
            writer.write(scan.interval)
            writer.write(scan.window)
        }
    }
}

/// LE Set Extended Scan Enable (0x2042).
public struct LESetExtendedScanEnable: HCICommand, HCIFieldTable, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x2042)
    public static let name = "LE Set Extended Scan Enable"
    /// True to start, false to stop.
    public var enable: Bool
    /// 0 off, 1 on, 2 on and reset for each scan period.
    public var filterDuplicates: UInt8
    /// Scan duration, 10 ms units (0 = until disabled).
    public var duration: UInt16
    /// Scan period, 1.28 s units (0 = scan once).
    public var period: UInt16
    public init(enable: Bool, filterDuplicates: UInt8 = 0, duration: UInt16 = 0, period: UInt16 = 0) {
        self.enable = enable
        self.filterDuplicates = filterDuplicates
        self.duration = duration
        self.period = period
    }
    public static let fields: [HCIField<Self>] = [
        .flag(\.enable, "scan enable"), .integer(\.filterDuplicates, "filter duplicates"),
        .integer(\.duration, "duration"), .integer(\.period, "period"),
    ]
    public static let blank = Self(enable: false)
}

/// LE Extended Create Connection v1 (0x2043): Command Status, then (Enhanced) LE Connection
/// Complete.
public struct LEExtendedCreateConnection: HCICommand, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x2043)
    public static let name = "LE Extended Create Connection"
    public static var completion: HCICommandCompletion { .commandStatus }

    /// Scan and connection parameters for one initiating PHY.
    public struct PHYParameters: Hashable, Sendable {
        /// Scan interval and window, 0.625 ms units.
        public var scanInterval: UInt16
        /// Scan window while initiating, 0.625 ms units.
        public var scanWindow: UInt16
        /// The requested connection parameters.
        public var connection: LEConnectionParameters
        public init(scanInterval: UInt16 = 0x0060, scanWindow: UInt16 = 0x0060, connection: LEConnectionParameters = LEConnectionParameters()) {
            self.scanInterval = scanInterval
            self.scanWindow = scanWindow
            self.connection = connection
        }
    }

    /// 0: connect to the given peer; 1: to any device on the filter accept list.
    public var initiatorFilterPolicy: UInt8
    /// Which own address to use: 0 public, 1 the random address set before (2/3: resolvable private, else 0/1).
    public var ownAddressType: LEAddressType
    /// The peer address type as sent (0 public, 1 random, 2/3 identity addresses).
    public var peerAddressType: LEAddressType
    /// The peer's device address (its type follows the peer address type).
    public var peerAddress: BluetoothAddress
    /// Parameters for LE 1M, LE 2M and LE Coded; nil ones are not used (at least one must be set).
    public var le1M: PHYParameters?
    /// Parameters for initiating on LE 2M (nil: not used).
    public var le2M: PHYParameters?
    /// Parameters for LE Coded (nil: not used).
    public var coded: PHYParameters?

    public init(peerAddress: BluetoothAddress, ownAddressType: LEAddressType = .public, initiatorFilterPolicy: UInt8 = 0,
                le1M: PHYParameters? = PHYParameters(), le2M: PHYParameters? = nil, coded: PHYParameters? = nil) {
        self.initiatorFilterPolicy = initiatorFilterPolicy
        self.ownAddressType = ownAddressType
        self.peerAddressType = LEAddressType(peerAddress.type)
        self.peerAddress = peerAddress
        self.le1M = le1M
        self.le2M = le2M
        self.coded = coded
    }

    /// The parameters of the first PHY given (1M, else 2M, else Coded).
    public var primary: PHYParameters? { le1M ?? le2M ?? coded }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        initiatorFilterPolicy = try reader.readUInt8("initiator filter policy")
        ownAddressType = LEAddressType(rawValue: try reader.readUInt8("own address type"))
        peerAddressType = LEAddressType(rawValue: try reader.readUInt8("peer address type"))
        peerAddress = try reader.readAddress("peer address", type: peerAddressType)
        let bits = try readPHYBits(&reader, "initiating PHYs", allowed: 0b111)
        func phy(_ name: String, _ reader: inout ByteReader) throws(DecodingError) -> PHYParameters {
            do {
                return PHYParameters(scanInterval: try reader.read(UInt16.self, "scan interval"),
                                     scanWindow: try reader.read(UInt16.self, "scan window"),
                                     connection: try LEConnectionParameters(from: &reader))
            } catch {
                throw error.within(name)
            }
        }
        le1M = bits & 0b001 != 0 ? try phy("LE 1M", &reader) : nil
        le2M = bits & 0b010 != 0 ? try phy("LE 2M", &reader) : nil
        coded = bits & 0b100 != 0 ? try phy("LE Coded", &reader) : nil
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(initiatorFilterPolicy)
        writer.write(ownAddressType.rawValue)
        writer.write(peerAddressType.rawValue)
        writer.write(address: peerAddress)
        writer.write(UInt8((le1M != nil ? 0b001 : 0) | (le2M != nil ? 0b010 : 0) | (coded != nil ? 0b100 : 0)))
        for phy in [le1M, le2M, coded].compactMap({ $0 }) {
            writer.write(phy.scanInterval)
            writer.write(phy.scanWindow)
            phy.connection.encode(to: &writer)
        }
    }
}
