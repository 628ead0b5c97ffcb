import BluetideBase

// Controller and baseband, informational and status commands (Core spec Vol 4 Part E 7.3-7.5).

/// HCI Reset (0x0C03): returns the controller to its power-on state.
public struct HCIReset: HCIParameterlessCommand, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x0C03)
    public static let name = "Reset"
    public init() {}
}

/// Set Event Mask (0x0C01): which events the controller may send (bit n = event code n+1).
public struct HCISetEventMask: HCICommand, HCIFieldTable, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x0C01)
    public static let name = "Set Event Mask"
    /// The 64-bit mask.
    public var mask: UInt64
    /// The default after Reset (`0x00001FFFFFFFFFFF`).
    public static let defaultMask: UInt64 = 0x0000_1FFF_FFFF_FFFF
    public init(mask: UInt64) { self.mask = mask }
    public static let fields: [HCIField<Self>] = [.integer(\.mask, "event mask")]
    public static let blank = Self(mask: 0)
}

/// Read Local Version Information (0x1001).
public struct HCIReadLocalVersionInformation: HCIParameterlessCommand, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x1001)
    public static let name = "Read Local Version Information"
    public init() {}

    /// The controller's HCI and LMP/LL versions and manufacturer.
    public struct ReturnParameters: HCIReturnParameters, HCIFieldTable, Equatable {
        /// Outcome (0x00 success).
        public var status: HCIStatus
        /// HCI version (0x09 = Core 5.0, 0x0C = 5.3, 0x0D = 5.4).
        public var hciVersion: UInt8
        /// Manufacturer-specific HCI revision.
        public var hciSubversion: UInt16
        /// LMP/LL version (same numbering as `hciVersion`).
        public var lmpVersion: UInt8
        /// Bluetooth SIG company identifier (0xFFFF = none/test).
        public var companyIdentifier: UInt16
        /// Manufacturer-specific LMP/LL revision.
        public var lmpSubversion: UInt16
        public init(status: HCIStatus = .success, hciVersion: UInt8, hciSubversion: UInt16, lmpVersion: UInt8,
                    companyIdentifier: UInt16, lmpSubversion: UInt16) {
            self.status = status
            self.hciVersion = hciVersion
            self.hciSubversion = hciSubversion
            self.lmpVersion = lmpVersion
            self.companyIdentifier = companyIdentifier
            self.lmpSubversion = lmpSubversion
        }
        public static let fields: [HCIField<Self>] = [
            .status(\.status), .integer(\.hciVersion, "HCI version"), .integer(\.hciSubversion, "HCI subversion"),
            .integer(\.lmpVersion, "LMP version"), .integer(\.companyIdentifier, "company identifier"),
            .integer(\.lmpSubversion, "LMP subversion"),
        ]
        public static let blank = Self(hciVersion: 0, hciSubversion: 0, lmpVersion: 0, companyIdentifier: 0, lmpSubversion: 0)
    }
}

/// Read Local Supported Commands (0x1002): a 64-byte bitmap of the commands the controller knows.
public struct HCIReadLocalSupportedCommands: HCIParameterlessCommand, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x1002)
    public static let name = "Read Local Supported Commands"
    public init() {}

    /// The supported-commands bitmap (octet n, bit b as in the Core spec table).
    public struct ReturnParameters: HCIReturnParameters, HCIFieldTable, Equatable {
        /// Outcome (0x00 success).
        public var status: HCIStatus
        /// 64 octets.
        public var commands: [UInt8]
        public init(status: HCIStatus = .success, commands: [UInt8]) {
            self.status = status
            self.commands = commands
        }
        public static let fields: [HCIField<Self>] = [.status(\.status), .bytes(\.commands, count: 64, "supported commands")]
        public static let blank = Self(commands: [])
        /// Whether octet `octet`, bit `bit` is set.
        public func supports(octet: Int, bit: Int) -> Bool {
            guard octet >= 0, octet < commands.count, bit >= 0, bit < 8 else { return false }
            return commands[octet] & (1 << UInt8(bit)) != 0
        }
    }
}

/// Read Local Supported Features (0x1003): the LMP feature page 0 (bit 38 = LE supported,
/// bit 37 = BR/EDR not supported).
public struct HCIReadLocalSupportedFeatures: HCIParameterlessCommand, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x1003)
    public static let name = "Read Local Supported Features"
    public init() {}

    /// What Command Complete returns for this command (status first).
    public struct ReturnParameters: HCIReturnParameters, HCIFieldTable, Equatable {
        /// Outcome (0x00 success).
        public var status: HCIStatus
        /// The 64-bit LMP features, little-endian.
        public var features: UInt64
        public init(status: HCIStatus = .success, features: UInt64) {
            self.status = status
            self.features = features
        }
        public static let fields: [HCIField<Self>] = [.status(\.status), .integer(\.features, "LMP features")]
        public static let blank = Self(features: 0)
    }
}

/// Read Buffer Size (0x1005): the shared ACL buffers (used on LE when LE Read Buffer Size returns 0).
public struct HCIReadBufferSize: HCIParameterlessCommand, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x1005)
    public static let name = "Read Buffer Size"
    public init() {}

    /// What Command Complete returns for this command (status first).
    public struct ReturnParameters: HCIReturnParameters, HCIFieldTable, Equatable {
        /// Outcome (0x00 success).
        public var status: HCIStatus
        /// Maximum ACL payload per packet, bytes.
        public var aclDataPacketLength: UInt16
        /// Maximum SCO payload per packet, bytes.
        public var synchronousDataPacketLength: UInt8
        /// Number of ACL packets the controller can buffer.
        public var totalNumACLDataPackets: UInt16
        /// Number of SCO packets the controller can buffer.
        public var totalNumSynchronousDataPackets: UInt16
        public init(status: HCIStatus = .success, aclDataPacketLength: UInt16, synchronousDataPacketLength: UInt8 = 0,
                    totalNumACLDataPackets: UInt16, totalNumSynchronousDataPackets: UInt16 = 0) {
            self.status = status
            self.aclDataPacketLength = aclDataPacketLength
            self.synchronousDataPacketLength = synchronousDataPacketLength
            self.totalNumACLDataPackets = totalNumACLDataPackets
            self.totalNumSynchronousDataPackets = totalNumSynchronousDataPackets
        }
        public static let fields: [HCIField<Self>] = [
            .status(\.status), .integer(\.aclDataPacketLength, "ACL data packet length"),
            .integer(\.synchronousDataPacketLength, "synchronous data packet length"),
            .integer(\.totalNumACLDataPackets, "total ACL data packets"),
            .integer(\.totalNumSynchronousDataPackets, "total synchronous data packets"),
        ]
        public static let blank = Self(aclDataPacketLength: 0, totalNumACLDataPackets: 0)
    }
}

/// Read BD_ADDR (0x1009): the controller's public address.
public struct HCIReadBDADDR: HCIParameterlessCommand, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x1009)
    public static let name = "Read BD_ADDR"
    public init() {}

    /// What Command Complete returns for this command (status first).
    public struct ReturnParameters: HCIReturnParameters, HCIFieldTable, Equatable {
        /// Outcome (0x00 success).
        public var status: HCIStatus
        /// The public address (type `.public`).
        public var address: BluetoothAddress
        public init(status: HCIStatus = .success, address: BluetoothAddress) {
            self.status = status
            self.address = address
        }
        public static let fields: [HCIField<Self>] = [.status(\.status), .address(\.address, "BD_ADDR", type: .public)]
        public static let blank = Self(address: BluetoothAddress(value: 0, type: .public))
    }
}

/// Read RSSI (0x1405): the received signal strength of a connection.
public struct HCIReadRSSI: HCICommand, HCIFieldTable, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x1405)
    public static let name = "Read RSSI"
    /// Connection handle.
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
        /// Signal strength, dBm (LE: absolute, -127...20; 127 = not available).
        public var rssi: Int8
        public init(status: HCIStatus = .success, handle: UInt16, rssi: Int8) {
            self.status = status
            self.handle = handle
            self.rssi = rssi
        }
        public static let fields: [HCIField<Self>] = [.status(\.status), .handle(\.handle), .integer(\.rssi, "RSSI")]
        public static let blank = Self(handle: 0, rssi: 0)
    }
}

/// Disconnect (0x0406): ends a connection; answered with Command Status, then Disconnection
/// Complete (reason 0x16 locally, the given reason at the peer).
public struct HCIDisconnect: HCICommand, HCIFieldTable, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x0406)
    public static let name = "Disconnect"
    public static var completion: HCICommandCompletion { .commandStatus }
    /// Connection handle (12 bits).
    public var handle: UInt16
    /// Reason told to the peer (usually 0x13 remote user terminated).
    public var reason: HCIStatus
    public init(handle: UInt16, reason: HCIStatus = .remoteUserTerminated) {
        self.handle = handle
        self.reason = reason
    }
    public static let fields: [HCIField<Self>] = [.handle(\.handle), .status(\.reason, "reason")]
    public static let blank = Self(handle: 0)
}
