import BluetideBase

// LE controller setup commands (Core spec Vol 4 Part E 7.8).

/// LE Set Event Mask (0x2001): which LE Meta subevents may be sent (bit n = subevent n+1).
public struct LESetEventMask: HCICommand, HCIFieldTable, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x2001)
    public static let name = "LE Set Event Mask"
    /// The 64-bit mask (bit n lets event or subevent n+1 through).
    public var mask: UInt64
    /// The default after Reset (`0x1F`: subevents 0x01-0x05).
    public static let defaultMask: UInt64 = 0x1F
    public init(mask: UInt64) { self.mask = mask }
    public static let fields: [HCIField<Self>] = [.integer(\.mask, "LE event mask")]
    public static let blank = Self(mask: 0)
}

/// LE Read Buffer Size v1 (0x2002): the LE ACL buffers (length 0 = use Read Buffer Size's).
public struct LEReadBufferSize: HCIParameterlessCommand, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x2002)
    public static let name = "LE Read Buffer Size"
    public init() {}

    /// What Command Complete returns for this command (status first).
    public struct ReturnParameters: HCIReturnParameters, HCIFieldTable, Equatable {
        /// Outcome (0x00 success).
        public var status: HCIStatus
        /// Maximum LE ACL payload per packet, bytes (0 = shared with BR/EDR).
        public var leACLDataPacketLength: UInt16
        /// Number of LE ACL packets the controller can buffer.
        public var totalNumLEACLDataPackets: UInt8
        public init(status: HCIStatus = .success, leACLDataPacketLength: UInt16, totalNumLEACLDataPackets: UInt8) {
            self.status = status
            self.leACLDataPacketLength = leACLDataPacketLength
            self.totalNumLEACLDataPackets = totalNumLEACLDataPackets
        }
        public static let fields: [HCIField<Self>] = [
            .status(\.status), .integer(\.leACLDataPacketLength, "LE ACL data packet length"),
            .integer(\.totalNumLEACLDataPackets, "total LE ACL data packets"),
        ]
        public static let blank = Self(leACLDataPacketLength: 0, totalNumLEACLDataPackets: 0)
    }
}

/// LE Read Buffer Size v2 (0x2060): LE ACL and ISO buffers.
public struct LEReadBufferSizeV2: HCIParameterlessCommand, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x2060)
    public static let name = "LE Read Buffer Size v2"
    public init() {}

    /// What Command Complete returns for this command (status first).
    public struct ReturnParameters: HCIReturnParameters, HCIFieldTable, Equatable {
        /// Outcome (0x00 success).
        public var status: HCIStatus
        /// Maximum LE ACL payload per packet, bytes.
        public var leACLDataPacketLength: UInt16
        /// Number of LE ACL packets the controller can buffer.
        public var totalNumLEACLDataPackets: UInt8
        /// Maximum ISO payload per packet, bytes.
        public var isoDataPacketLength: UInt16
        /// Number of ISO packets the controller can buffer.
        public var totalNumISODataPackets: UInt8
        public init(status: HCIStatus = .success, leACLDataPacketLength: UInt16, totalNumLEACLDataPackets: UInt8,
                    isoDataPacketLength: UInt16 = 0, totalNumISODataPackets: UInt8 = 0) {
            self.status = status
            self.leACLDataPacketLength = leACLDataPacketLength
            self.totalNumLEACLDataPackets = totalNumLEACLDataPackets
            self.isoDataPacketLength = isoDataPacketLength
            self.totalNumISODataPackets = totalNumISODataPackets
        }
        public static let fields: [HCIField<Self>] = [
            .status(\.status), .integer(\.leACLDataPacketLength, "LE ACL data packet length"),
            .integer(\.totalNumLEACLDataPackets, "total LE ACL data packets"),
            .integer(\.isoDataPacketLength, "ISO data packet length"), .integer(\.totalNumISODataPackets, "total ISO data packets"),
        ]
        public static let blank = Self(leACLDataPacketLength: 0, totalNumLEACLDataPackets: 0)
    }
}

/// The 64-bit LE feature bitmap (Core spec Vol 6 Part B 4.6), shared by LE Read Local Supported
/// Features and LE Read Remote Features Complete.
public struct LEFeatures: OptionSet, Hashable, Sendable {
    /// The value as sent over HCI.
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    /// Bit 0: LE encryption.
    public static let encryption = LEFeatures(rawValue: 1 << 0)
    /// Bit 1: connection parameters request procedure.
    public static let connectionParametersRequest = LEFeatures(rawValue: 1 << 1)
    /// Bit 2: extended reject indication.
    public static let extendedRejectIndication = LEFeatures(rawValue: 1 << 2)
    /// Bit 3: peripheral-initiated features exchange.
    public static let peripheralInitiatedFeaturesExchange = LEFeatures(rawValue: 1 << 3)
    /// Bit 4: LE ping.
    public static let ping = LEFeatures(rawValue: 1 << 4)
    /// Bit 5: LL payloads up to 251 bytes.
    public static let dataPacketLengthExtension = LEFeatures(rawValue: 1 << 5)
    /// Bit 6: address resolution in the controller.
    public static let llPrivacy = LEFeatures(rawValue: 1 << 6)
    /// Bit 7: extended scanner filter policies.
    public static let extendedScanningFilterPolicies = LEFeatures(rawValue: 1 << 7)
    /// Bit 8: LE 2M PHY.
    public static let le2MPHY = LEFeatures(rawValue: 1 << 8)
    /// Bit 11: LE Coded PHY.
    public static let codedPHY = LEFeatures(rawValue: 1 << 11)
    /// When set, a scanner may get Extended Advertising Reports (0x0D) instead of legacy ones.
    public static let extendedAdvertising = LEFeatures(rawValue: 1 << 12)
    /// Bit 13: periodic advertising.
    public static let periodicAdvertising = LEFeatures(rawValue: 1 << 13)
    /// Bit 14: channel selection algorithm #2.
    public static let channelSelectionAlgorithm2 = LEFeatures(rawValue: 1 << 14)
}

/// LE Read Local Supported Features (0x2003).
public struct LEReadLocalSupportedFeatures: HCIParameterlessCommand, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x2003)
    public static let name = "LE Read Local Supported Features"
    public init() {}

    /// What Command Complete returns for this command (status first).
    public struct ReturnParameters: HCIReturnParameters, HCIFieldTable, Equatable {
        /// Outcome (0x00 success).
        public var status: HCIStatus
        /// The 64-bit LE feature bits.
        public var features: LEFeatures
        public init(status: HCIStatus = .success, features: LEFeatures) {
            self.status = status
            self.features = features
        }
        public static let fields: [HCIField<Self>] = [.status(\.status), .raw(\.features, "LE features")]
        public static let blank = Self(features: [])
    }
}

/// LE Set Random Address (0x2005): the random (usually static) address used when an own
/// address type of "random" is chosen.
public struct LESetRandomAddress: HCICommand, HCIFieldTable, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x2005)
    public static let name = "LE Set Random Address"
    /// The address (its type is always random).
    public var address: BluetoothAddress
    public init(address: BluetoothAddress) { self.address = BluetoothAddress(value: address.value, type: .random) }
    public static let fields: [HCIField<Self>] = [.address(\.address, "random address", type: .random)]
    public static let blank = Self(address: BluetoothAddress(value: 0, type: .random))
}
