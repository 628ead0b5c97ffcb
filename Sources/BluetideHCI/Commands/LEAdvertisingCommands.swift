import BluetideBase

// Legacy LE advertising and scanning commands (Core spec Vol 4 Part E 7.8.5-7.8.11).

/// The legacy advertising PDU type chosen by LE Set Advertising Parameters.
public struct LEAdvertisingType: RawRepresentable, Hashable, Sendable {
    /// The value as sent over HCI.
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// 0: connectable and scannable undirected (ADV_IND).
    public static let connectableUndirected = LEAdvertisingType(rawValue: 0)
    /// 1: connectable directed, high duty cycle (ADV_DIRECT_IND).
    public static let connectableDirectedHighDuty = LEAdvertisingType(rawValue: 1)
    /// 2: scannable undirected (ADV_SCAN_IND).
    public static let scannableUndirected = LEAdvertisingType(rawValue: 2)
    /// 3: non-connectable undirected (ADV_NONCONN_IND).
    public static let nonConnectableUndirected = LEAdvertisingType(rawValue: 3)
    /// 4: connectable directed, low duty cycle (ADV_DIRECT_IND).
    public static let connectableDirectedLowDuty = LEAdvertisingType(rawValue: 4)

    /// Whether a central may connect to this advertising.
    public var isConnectable: Bool { rawValue == 0 || rawValue == 1 || rawValue == 4 }
    /// Whether a scanner may send a scan request (and get scan response data).
    public var isScannable: Bool { rawValue == 0 || rawValue == 2 }
}

/// LE Set Advertising Parameters (0x2006).
public struct LESetAdvertisingParameters: HCICommand, HCIFieldTable, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x2006)
    public static let name = "LE Set Advertising Parameters"
    /// Minimum interval, units of 0.625 ms (0x0020-0x4000; default 0x0800 = 1.28 s).
    public var intervalMin: UInt16
    /// Maximum interval, units of 0.625 ms.
    public var intervalMax: UInt16
    /// Which legacy PDU to send (connectable, scannable, directed...).
    public var advertisingType: LEAdvertisingType
    /// Which own address to advertise from (public, or the random address set before).
    public var ownAddressType: LEAddressType
    /// For directed advertising: the peer's address type and address.
    public var peerAddressType: LEAddressType
    /// The peer's device address (its type follows the peer address type).
    public var peerAddress: BluetoothAddress
    /// Channels 37, 38, 39 as bits 0-2 (0x07 = all).
    public var channelMap: UInt8
    /// Filter policy for scan and connect requests (0 = allow all).
    public var filterPolicy: UInt8

    public init(intervalMin: UInt16 = 0x0800, intervalMax: UInt16 = 0x0800,
                advertisingType: LEAdvertisingType = .connectableUndirected, ownAddressType: LEAddressType = .public,
                peerAddress: BluetoothAddress = BluetoothAddress(value: 0), channelMap: UInt8 = 0x07, filterPolicy: UInt8 = 0) {
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.advertisingType = advertisingType
        self.ownAddressType = ownAddressType
        self.peerAddressType = LEAddressType(peerAddress.type)
        self.peerAddress = peerAddress
        self.channelMap = channelMap
        self.filterPolicy = filterPolicy
    }
    public static let fields: [HCIField<Self>] = [
        .integer(\.intervalMin, "advertising interval min"), .integer(\.intervalMax, "advertising interval max"),
        .raw(\.advertisingType, "advertising type"), .raw(\.ownAddressType, "own address type"),
        .raw(\.peerAddressType, "peer address type"),
        .address(\.peerAddress, "peer address", typeFrom: \.peerAddressType),
        .integer(\.channelMap, "advertising channel map"), .integer(\.filterPolicy, "advertising filter policy"),
    ]
    public static let blank = Self()
}

extension HCIField {
    /// The 1-byte length + 31-byte zero-padded data block of legacy advertising, called `name`.
    /// Data longer than 31 bytes is cut when written; the padding is skipped when present on
    /// reading (some hosts omit it).
    static func legacyAdvertisingData(_ path: WritableKeyPath<Root, [UInt8]> & Sendable, _ name: String) -> HCIField {
        let capacity = 31
        return HCIField(
            decode: { (value: inout Root, reader: inout ByteReader) throws(DecodingError) in
                let start = reader.offset
                let length = try reader.readUInt8("\(name) length")
                guard Int(length) <= capacity else {
                    throw .invalid("\(name) length", expected: "at most 31", found: "\(length)", at: start)
                }
                value[keyPath: path] = try reader.readBytes(Int(length), name)
                _ = try? reader.skip(min(capacity - Int(length), reader.remaining), "\(name) padding")
            },
            encode: { value, writer in
                let clipped = value[keyPath: path].prefix(capacity)
                writer.write(UInt8(clipped.count))
                writer.write(bytes: clipped)
                writer.pad(capacity - clipped.count)
            })
    }
}

/// LE Set Advertising Data (0x2008): up to 31 bytes of AD structures.
public struct LESetAdvertisingData: HCICommand, HCIFieldTable, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x2008)
    public static let name = "LE Set Advertising Data"
    /// The AD structures (at most 31 bytes; longer data is cut when encoding).
    public var data: [UInt8]
    public init(data: [UInt8]) { self.data = data }
    public static let fields: [HCIField<Self>] = [.legacyAdvertisingData(\.data, "advertising data")]
    public static let blank = Self(data: [])
}

/// LE Set Scan Response Data (0x2009): up to 31 bytes sent in answer to scan requests.
public struct LESetScanResponseData: HCICommand, HCIFieldTable, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x2009)
    public static let name = "LE Set Scan Response Data"
    /// The AD structures.
    public var data: [UInt8]
    public init(data: [UInt8]) { self.data = data }
    public static let fields: [HCIField<Self>] = [.legacyAdvertisingData(\.data, "scan response data")]
    public static let blank = Self(data: [])
}

/// LE Set Advertising Enable (0x200A).
public struct LESetAdvertisingEnable: HCICommand, HCIFieldTable, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x200A)
    public static let name = "LE Set Advertising Enable"
    /// True to start, false to stop.
    public var enable: Bool
    public init(enable: Bool) { self.enable = enable }
    public static let fields: [HCIField<Self>] = [.flag(\.enable, "advertising enable")]
    public static let blank = Self(enable: false)
}

/// LE Set Scan Parameters (0x200B).
public struct LESetScanParameters: HCICommand, HCIFieldTable, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x200B)
    public static let name = "LE Set Scan Parameters"
    /// True for active scanning (scan requests, so scan responses are reported too).
    public var active: Bool
    /// Scan interval, units of 0.625 ms (default 0x0010 = 10 ms).
    public var interval: UInt16
    /// Scan window, units of 0.625 ms (at most the interval).
    public var window: UInt16
    /// Which own address to use: 0 public, 1 the random address set before (2/3: resolvable private, else 0/1).
    public var ownAddressType: LEAddressType
    /// Scanning filter policy (0 = accept all).
    public var filterPolicy: UInt8
    public init(active: Bool = true, interval: UInt16 = 0x0010, window: UInt16 = 0x0010,
                ownAddressType: LEAddressType = .public, filterPolicy: UInt8 = 0) {
        self.active = active
        self.interval = interval
        self.window = window
        self.ownAddressType = ownAddressType
        self.filterPolicy = filterPolicy
    }
    public static let fields: [HCIField<Self>] = [
        .flag(\.active, "scan type"), .integer(\.interval, "scan interval"), .integer(\.window, "scan window"),
        .raw(\.ownAddressType, "own address type"), .integer(\.filterPolicy, "scanning filter policy"),
    ]
    public static let blank = Self()
}

/// LE Set Scan Enable (0x200C).
public struct LESetScanEnable: HCICommand, HCIFieldTable, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x200C)
    public static let name = "LE Set Scan Enable"
    /// True to start, false to stop.
    public var enable: Bool
    /// When true the controller reports each advertiser once per scan.
    public var filterDuplicates: Bool
    public init(enable: Bool, filterDuplicates: Bool = false) {
        self.enable = enable
        self.filterDuplicates = filterDuplicates
    }
    public static let fields: [HCIField<Self>] = [.flag(\.enable, "scan enable"), .flag(\.filterDuplicates, "filter duplicates")]
    public static let blank = Self(enable: false)
}
