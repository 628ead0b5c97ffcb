import BluetideBase

// LE extended advertising sets (Core spec Vol 4 Part E 7.8.52-7.8.61).

/// Advertising event properties of an extended advertising set.
public struct LEAdvertisingEventProperties: OptionSet, Hashable, Sendable {
    /// The value as sent over HCI.
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    /// A central may connect.
    public static let connectable = LEAdvertisingEventProperties(rawValue: 1 << 0)
    /// Answers scan requests with scan response data.
    public static let scannable = LEAdvertisingEventProperties(rawValue: 1 << 1)
    /// Aimed at one peer address.
    public static let directed = LEAdvertisingEventProperties(rawValue: 1 << 2)
    /// Directed advertising at a high duty cycle (legacy, short).
    public static let highDutyCycleDirected = LEAdvertisingEventProperties(rawValue: 1 << 3)
    /// Use legacy PDUs (ADV_IND etc.), visible to legacy scanners.
    public static let legacy = LEAdvertisingEventProperties(rawValue: 1 << 4)
    /// Omit the advertiser's address.
    public static let anonymous = LEAdvertisingEventProperties(rawValue: 1 << 5)
    /// Put the TX power in the extended header.
    public static let includeTxPower = LEAdvertisingEventProperties(rawValue: 1 << 6)

    /// Legacy ADV_IND: connectable, scannable, legacy PDUs.
    public static let legacyConnectableScannable: LEAdvertisingEventProperties = [.connectable, .scannable, .legacy]
}

/// LE Set Extended Advertising Parameters v1 (0x2036).
public struct LESetExtendedAdvertisingParameters: HCICommand, HCIFieldTable, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x2036)
    public static let name = "LE Set Extended Advertising Parameters"

    /// The TX power the controller chose, dBm.
    public struct ReturnParameters: HCIReturnParameters, HCIFieldTable, Equatable {
        /// Outcome (0x00 success).
        public var status: HCIStatus
        /// The TX power the controller chose, dBm.
        public var selectedTxPower: Int8
        public init(status: HCIStatus = .success, selectedTxPower: Int8) {
            self.status = status
            self.selectedTxPower = selectedTxPower
        }
        public static let fields: [HCIField<Self>] = [.status(\.status), .integer(\.selectedTxPower, "selected TX power")]
        public static let blank = Self(selectedTxPower: 0)
    }

    /// Advertising set handle (0x00-0xEF).
    public var handle: UInt8
    /// Advertising event properties (connectable, scannable, legacy PDUs...).
    public var properties: LEAdvertisingEventProperties
    /// Primary advertising interval, 0.625 ms units (24-bit).
    public var primaryIntervalMin: UInt32
    /// Maximum primary advertising interval, 0.625 ms units (24-bit).
    public var primaryIntervalMax: UInt32
    /// Channels 37, 38, 39 as bits 0-2.
    public var primaryChannelMap: UInt8
    /// Which own address to use: 0 public, 1 the random address set before (2/3: resolvable private, else 0/1).
    public var ownAddressType: LEAddressType
    /// The peer address type as sent (0 public, 1 random, 2/3 identity addresses).
    public var peerAddressType: LEAddressType
    /// The peer's device address (its type follows the peer address type).
    public var peerAddress: BluetoothAddress
    /// Filter policy (0 = accept all).
    public var filterPolicy: UInt8
    /// Requested TX power, dBm (127 = no preference).
    public var txPower: Int8
    /// PHY of the primary advertising channels (1M or Coded).
    public var primaryPHY: LEPHY
    /// Primary advertising events the secondary channel may skip.
    public var secondaryMaxSkip: UInt8
    /// PHY of the secondary channel (AUX packets).
    public var secondaryPHY: LEPHY
    /// Advertising SID (0x0-0xF), reported to scanners.
    public var sid: UInt8
    /// 1 to get a Scan Request Received event per scan request.
    public var scanRequestNotificationEnable: UInt8

    public init(handle: UInt8 = 0, properties: LEAdvertisingEventProperties = .legacyConnectableScannable,
                primaryIntervalMin: UInt32 = 0x0800, primaryIntervalMax: UInt32 = 0x0800, primaryChannelMap: UInt8 = 0x07,
                ownAddressType: LEAddressType = .public, peerAddress: BluetoothAddress = BluetoothAddress(value: 0),
                filterPolicy: UInt8 = 0, txPower: Int8 = 127, primaryPHY: LEPHY = .le1M, secondaryMaxSkip: UInt8 = 0,
                secondaryPHY: LEPHY = .le1M, sid: UInt8 = 0, scanRequestNotificationEnable: UInt8 = 0) {
        self.handle = handle
        self.properties = properties
        self.primaryIntervalMin = primaryIntervalMin
        self.primaryIntervalMax = primaryIntervalMax
        self.primaryChannelMap = primaryChannelMap
        self.ownAddressType = ownAddressType
        self.peerAddressType = LEAddressType(peerAddress.type)
        self.peerAddress = peerAddress
        self.filterPolicy = filterPolicy
        self.txPower = txPower
        self.primaryPHY = primaryPHY
        self.secondaryMaxSkip = secondaryMaxSkip
        self.secondaryPHY = secondaryPHY
        self.sid = sid
        self.scanRequestNotificationEnable = scanRequestNotificationEnable
    }

    public static let fields: [HCIField<Self>] = [
        .integer(\.handle, "advertising handle"), .raw(\.properties, "advertising event properties"),
        .uint24(\.primaryIntervalMin, "primary advertising interval min"),
        .uint24(\.primaryIntervalMax, "primary advertising interval max"),
        .integer(\.primaryChannelMap, "primary advertising channel map"), .raw(\.ownAddressType, "own address type"),
        .raw(\.peerAddressType, "peer address type"),
        .address(\.peerAddress, "peer address", typeFrom: \.peerAddressType),
        .integer(\.filterPolicy, "advertising filter policy"), .integer(\.txPower, "advertising TX power"),
        .raw(\.primaryPHY, "primary advertising PHY"), .integer(\.secondaryMaxSkip, "secondary advertising max skip"),
        .raw(\.secondaryPHY, "secondary advertising PHY"), .integer(\.sid, "advertising SID"),
        .integer(\.scanRequestNotificationEnable, "scan request notification enable"),
    ]
    public static let blank = Self()
}

/// Which part of the set's data an extended data command carries.
public struct LEAdvertisingDataOperation: RawRepresentable, Hashable, Sendable {
    /// The value as sent over HCI.
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// A middle fragment of data longer than one command.
    public static let intermediateFragment = LEAdvertisingDataOperation(rawValue: 0)
    /// The first fragment (replaces the old data).
    public static let firstFragment = LEAdvertisingDataOperation(rawValue: 1)
    /// The last fragment.
    public static let lastFragment = LEAdvertisingDataOperation(rawValue: 2)
    /// The whole data in this one command (the usual case).
    public static let complete = LEAdvertisingDataOperation(rawValue: 3)
    /// Keep the data, change the advertising DID only.
    public static let unchanged = LEAdvertisingDataOperation(rawValue: 4)
}

/// The shared layout of LE Set Extended Advertising Data and Scan Response Data.
public struct LEExtendedDataBlock: HCIFieldTable, Hashable, Sendable {
    /// Advertising set handle (0x00-0xEF).
    public var handle: UInt8
    /// Whether the command carries all of the data or one fragment.
    public var operation: LEAdvertisingDataOperation
    /// 0: the controller may fragment; 1: it should not.
    public var fragmentPreference: UInt8
    /// AD structures, at most 251 bytes per command.
    public var data: [UInt8]

    public init(handle: UInt8, operation: LEAdvertisingDataOperation = .complete, fragmentPreference: UInt8 = 1, data: [UInt8]) {
        self.handle = handle
        self.operation = operation
        self.fragmentPreference = fragmentPreference
        self.data = data
    }

    public static let fields: [HCIField<Self>] = [
        .integer(\.handle, "advertising handle"), .raw(\.operation, "operation"),
        .integer(\.fragmentPreference, "fragment preference"), .lengthPrefixed(\.data, "data", max: 251),
    ]
    public static let blank = Self(handle: 0, data: [])
}

/// LE Set Extended Advertising Data (0x2037).
public struct LESetExtendedAdvertisingData: HCICommand, HCIFieldTable, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x2037)
    public static let name = "LE Set Extended Advertising Data"
    /// The set handle, operation and data.
    public var block: LEExtendedDataBlock
    public init(handle: UInt8, operation: LEAdvertisingDataOperation = .complete, data: [UInt8]) {
        block = LEExtendedDataBlock(handle: handle, operation: operation, data: data)
    }
    public static let fields: [HCIField<Self>] = [.group(\.block)]
    public static let blank = Self(handle: 0, data: [])
}

/// LE Set Extended Scan Response Data (0x2038).
public struct LESetExtendedScanResponseData: HCICommand, HCIFieldTable, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x2038)
    public static let name = "LE Set Extended Scan Response Data"
    /// The set handle, operation and data.
    public var block: LEExtendedDataBlock
    public init(handle: UInt8, operation: LEAdvertisingDataOperation = .complete, data: [UInt8]) {
        block = LEExtendedDataBlock(handle: handle, operation: operation, data: data)
    }
    public static let fields: [HCIField<Self>] = [.group(\.block)]
    public static let blank = Self(handle: 0, data: [])
}

/// LE Set Extended Advertising Enable (0x2039): starts or stops one or more sets (none listed
/// with enable = false stops all).
public struct LESetExtendedAdvertisingEnable: HCICommand, HCIFieldTable, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x2039)
    public static let name = "LE Set Extended Advertising Enable"

    /// One set to start or stop.
    public struct SetEntry: HCIFieldTable, Hashable, Sendable {
        /// Advertising set handle (0x00-0xEF).
        public var handle: UInt8
        /// How long to advertise, 10 ms units (0 = until stopped).
        public var duration: UInt16
        /// Stop after this many advertising events (0 = no limit).
        public var maxExtendedEvents: UInt8
        public init(handle: UInt8, duration: UInt16 = 0, maxExtendedEvents: UInt8 = 0) {
            self.handle = handle
            self.duration = duration
            self.maxExtendedEvents = maxExtendedEvents
        }
        public static let fields: [HCIField<Self>] = [
            .integer(\.handle, "advertising handle"), .integer(\.duration, "duration"),
            .integer(\.maxExtendedEvents, "max extended advertising events"),
        ]
        public static let blank = Self(handle: 0)
    }

    /// True to start, false to stop.
    public var enable: Bool
    /// The sets to start or stop.
    public var sets: [SetEntry]
    public init(enable: Bool, sets: [SetEntry]) {
        self.enable = enable
        self.sets = sets
    }

    public static let fields: [HCIField<Self>] = [
        .flag(\.enable, "enable"), .list(\.sets, count: "number of sets", item: "set", max: 63),
    ]
    public static let blank = Self(enable: false, sets: [])
}

/// LE Set Advertising Set Random Address (0x2035).
public struct LESetAdvertisingSetRandomAddress: HCICommand, HCIFieldTable, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x2035)
    public static let name = "LE Set Advertising Set Random Address"
    /// Advertising set handle (0x00-0xEF).
    public var handle: UInt8
    /// The device address.
    public var address: BluetoothAddress
    public init(handle: UInt8, address: BluetoothAddress) {
        self.handle = handle
        self.address = BluetoothAddress(value: address.value, type: .random)
    }
    public static let fields: [HCIField<Self>] = [
        .integer(\.handle, "advertising handle"), .address(\.address, "random address", type: .random),
    ]
    public static let blank = Self(handle: 0, address: BluetoothAddress(value: 0, type: .random))
}

/// LE Read Maximum Advertising Data Length (0x203A).
public struct LEReadMaximumAdvertisingDataLength: HCIParameterlessCommand, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x203A)
    public static let name = "LE Read Maximum Advertising Data Length"
    public init() {}

    /// What Command Complete returns for this command (status first).
    public struct ReturnParameters: HCIReturnParameters, HCIFieldTable, Equatable {
        /// Outcome (0x00 success).
        public var status: HCIStatus
        /// Most advertising (or scan response) data one set can hold, bytes (31-1650).
        public var maximumLength: UInt16
        public init(status: HCIStatus = .success, maximumLength: UInt16) {
            self.status = status
            self.maximumLength = maximumLength
        }
        public static let fields: [HCIField<Self>] = [
            .status(\.status), .integer(\.maximumLength, "maximum advertising data length"),
        ]
        public static let blank = Self(maximumLength: 0)
    }
}

/// LE Read Number Of Supported Advertising Sets (0x203B).
public struct LEReadNumberOfSupportedAdvertisingSets: HCIParameterlessCommand, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x203B)
    public static let name = "LE Read Number Of Supported Advertising Sets"
    public init() {}

    /// What Command Complete returns for this command (status first).
    public struct ReturnParameters: HCIReturnParameters, HCIFieldTable, Equatable {
        /// Outcome (0x00 success).
        public var status: HCIStatus
        /// How many advertising sets the controller supports.
        public var count: UInt8
        public init(status: HCIStatus = .success, count: UInt8) {
            self.status = status
            self.count = count
        }
        public static let fields: [HCIField<Self>] = [
            .status(\.status), .integer(\.count, "number of supported advertising sets"),
        ]
        public static let blank = Self(count: 0)
    }
}

/// LE Remove Advertising Set (0x203C).
public struct LERemoveAdvertisingSet: HCICommand, HCIFieldTable, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x203C)
    public static let name = "LE Remove Advertising Set"
    /// Advertising set handle (0x00-0xEF).
    public var handle: UInt8
    public init(handle: UInt8) { self.handle = handle }
    public static let fields: [HCIField<Self>] = [.integer(\.handle, "advertising handle")]
    public static let blank = Self(handle: 0)
}

/// LE Clear Advertising Sets (0x203D).
public struct LEClearAdvertisingSets: HCIParameterlessCommand, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x203D)
    public static let name = "LE Clear Advertising Sets"
    public init() {}
}
