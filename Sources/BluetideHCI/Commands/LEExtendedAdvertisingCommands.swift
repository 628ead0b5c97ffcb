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
public struct LESetExtendedAdvertisingParameters: HCICommand, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x2036)
    public static let name = "LE Set Extended Advertising Parameters"

    /// The TX power the controller chose, dBm.
    public struct ReturnParameters: HCIReturnParameters, Equatable {
        /// Outcome (0x00 success).
        public var status: HCIStatus
        /// The TX power the controller chose, dBm.
        public var selectedTxPower: Int8
        public init(status: HCIStatus = .success, selectedTxPower: Int8) {
            self.status = status
            self.selectedTxPower = selectedTxPower
        }
        public init(from reader: inout ByteReader) throws(DecodingError) {
            status = try HCIStatus(from: &reader)
            selectedTxPower = try reader.read(Int8.self, "selected TX power")
        }
        public func encode(to writer: inout ByteWriter) {
            status.encode(to: &writer)
            writer.write(selectedTxPower)
        }
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

    public init(from reader: inout ByteReader) throws(DecodingError) {
        handle = try reader.readUInt8("advertising handle")
        properties = LEAdvertisingEventProperties(rawValue: try reader.read(UInt16.self, "advertising event properties"))
        primaryIntervalMin = try reader.readUInt24("primary advertising interval min")
        primaryIntervalMax = try reader.readUInt24("primary advertising interval max")
        primaryChannelMap = try reader.readUInt8("primary advertising channel map")
        ownAddressType = LEAddressType(rawValue: try reader.readUInt8("own address type"))
        peerAddressType = LEAddressType(rawValue: try reader.readUInt8("peer address type"))
        peerAddress = try reader.readAddress("peer address", type: peerAddressType)
        filterPolicy = try reader.readUInt8("advertising filter policy")
        txPower = try reader.read(Int8.self, "advertising TX power")
        primaryPHY = LEPHY(rawValue: try reader.readUInt8("primary advertising PHY"))
        secondaryMaxSkip = try reader.readUInt8("secondary advertising max skip")
        secondaryPHY = LEPHY(rawValue: try reader.readUInt8("secondary advertising PHY"))
        sid = try reader.readUInt8("advertising SID")
        scanRequestNotificationEnable = try reader.readUInt8("scan request notification enable")
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(handle)
        writer.write(properties.rawValue)
        writer.writeUInt24(primaryIntervalMin)
        writer.writeUInt24(primaryIntervalMax)
        writer.write(primaryChannelMap)
        writer.write(ownAddressType.rawValue)
        writer.write(peerAddressType.rawValue)
        writer.write(address: peerAddress)
        writer.write(filterPolicy)
        writer.write(txPower)
        writer.write(primaryPHY.rawValue)
        writer.write(secondaryMaxSkip)
        writer.write(secondaryPHY.rawValue)
        writer.write(sid)
        writer.write(scanRequestNotificationEnable)
    }
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
public struct LEExtendedDataBlock: Hashable, Sendable {
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

    init(from reader: inout ByteReader) throws(DecodingError) {
        handle = try reader.readUInt8("advertising handle")
        operation = LEAdvertisingDataOperation(rawValue: try reader.readUInt8("operation"))
        fragmentPreference = try reader.readUInt8("fragment preference")
        let length = try reader.readUInt8("data length")
        data = try reader.readBytes(Int(length), "data")
    }

    func encode(to writer: inout ByteWriter) {
        writer.write(handle)
        writer.write(operation.rawValue)
        writer.write(fragmentPreference)
        let clipped = data.prefix(251)
        writer.write(UInt8(clipped.count))
        writer.write(bytes: clipped)
    }
}

/// LE Set Extended Advertising Data (0x2037).
public struct LESetExtendedAdvertisingData: HCICommand, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x2037)
    public static let name = "LE Set Extended Advertising Data"
    /// The set handle, operation and data.
    public var block: LEExtendedDataBlock
    public init(handle: UInt8, operation: LEAdvertisingDataOperation = .complete, data: [UInt8]) {
        block = LEExtendedDataBlock(handle: handle, operation: operation, data: data)
    }
    public init(from reader: inout ByteReader) throws(DecodingError) { block = try LEExtendedDataBlock(from: &reader) }
    public func encode(to writer: inout ByteWriter) { block.encode(to: &writer) }
}

/// LE Set Extended Scan Response Data (0x2038).
public struct LESetExtendedScanResponseData: HCICommand, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x2038)
    public static let name = "LE Set Extended Scan Response Data"
    /// The set handle, operation and data.
    public var block: LEExtendedDataBlock
    public init(handle: UInt8, operation: LEAdvertisingDataOperation = .complete, data: [UInt8]) {
        block = LEExtendedDataBlock(handle: handle, operation: operation, data: data)
    }
    public init(from reader: inout ByteReader) throws(DecodingError) { block = try LEExtendedDataBlock(from: &reader) }
    public func encode(to writer: inout ByteWriter) { block.encode(to: &writer) }
}

/// LE Set Extended Advertising Enable (0x2039): starts or stops one or more sets (none listed
/// with enable = false stops all).
public struct LESetExtendedAdvertisingEnable: HCICommand, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x2039)
    public static let name = "LE Set Extended Advertising Enable"

    /// One set to start or stop.
    public struct SetEntry: Hashable, Sendable {
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
    }

    /// True to start, false to stop.
    public var enable: Bool
    /// The sets to start or stop.
    public var sets: [SetEntry]
    public init(enable: Bool, sets: [SetEntry]) {
        self.enable = enable
        self.sets = sets
    }

    public init(from reader: inout ByteReader) throws(DecodingError) {
        enable = try reader.readUInt8("enable") != 0
        let count = try reader.readUInt8("number of sets")
        var sets: [SetEntry] = []
        for index in 0..<Int(count) {
            do {
                sets.append(SetEntry(handle: try reader.readUInt8("advertising handle"),
                                     duration: try reader.read(UInt16.self, "duration"),
                                     maxExtendedEvents: try reader.readUInt8("max extended advertising events")))
            } catch {
                throw error.within("set[\(index)]")
            }
        }
        self.sets = sets
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(UInt8(enable ? 1 : 0))
        let kept = sets.prefix(63)
        writer.write(UInt8(kept.count))
        for set in kept {
            writer.write(set.handle)
            writer.write(set.duration)
            writer.write(set.maxExtendedEvents)
        }
    }
}

/// LE Set Advertising Set Random Address (0x2035).
public struct LESetAdvertisingSetRandomAddress: HCICommand, Equatable {
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
    public init(from reader: inout ByteReader) throws(DecodingError) {
        handle = try reader.readUInt8("advertising handle")
        address = try reader.readAddress("random address", type: .random)
    }
    public func encode(to writer: inout ByteWriter) {
        writer.write(handle)
        writer.write(address: address)
    }
}

/// LE Read Maximum Advertising Data Length (0x203A).
public struct LEReadMaximumAdvertisingDataLength: HCIParameterlessCommand, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x203A)
    public static let name = "LE Read Maximum Advertising Data Length"
    public init() {}

    /// What Command Complete returns for this command (status first).
    public struct ReturnParameters: HCIReturnParameters, Equatable {
        /// Outcome (0x00 success).
        public var status: HCIStatus
        /// Most advertising (or scan response) data one set can hold, bytes (31-1650).
        public var maximumLength: UInt16
        public init(status: HCIStatus = .success, maximumLength: UInt16) {
            self.status = status
            self.maximumLength = maximumLength
        }
        public init(from reader: inout ByteReader) throws(DecodingError) {
            status = try HCIStatus(from: &reader)
            maximumLength = try reader.read(UInt16.self, "maximum advertising data length")
        }
        public func encode(to writer: inout ByteWriter) {
            status.encode(to: &writer)
            writer.write(maximumLength)
        }
    }
}

/// LE Read Number Of Supported Advertising Sets (0x203B).
public struct LEReadNumberOfSupportedAdvertisingSets: HCIParameterlessCommand, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x203B)
    public static let name = "LE Read Number Of Supported Advertising Sets"
    public init() {}

    /// What Command Complete returns for this command (status first).
    public struct ReturnParameters: HCIReturnParameters, Equatable {
        /// Outcome (0x00 success).
        public var status: HCIStatus
        /// How many advertising sets the controller supports.
        public var count: UInt8
        public init(status: HCIStatus = .success, count: UInt8) {
            self.status = status
            self.count = count
        }
        public init(from reader: inout ByteReader) throws(DecodingError) {
            status = try HCIStatus(from: &reader)
            count = try reader.readUInt8("number of supported advertising sets")
        }
        public func encode(to writer: inout ByteWriter) {
            status.encode(to: &writer)
            writer.write(count)
        }
    }
}

/// LE Remove Advertising Set (0x203C).
public struct LERemoveAdvertisingSet: HCICommand, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x203C)
    public static let name = "LE Remove Advertising Set"
    /// Advertising set handle (0x00-0xEF).
    public var handle: UInt8
    public init(handle: UInt8) { self.handle = handle }
    public init(from reader: inout ByteReader) throws(DecodingError) { handle = try reader.readUInt8("advertising handle") }
    public func encode(to writer: inout ByteWriter) { writer.write(handle) }
}

/// LE Clear Advertising Sets (0x203D).
public struct LEClearAdvertisingSets: HCIParameterlessCommand, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x203D)
    public static let name = "LE Clear Advertising Sets"
    public init() {}
}
