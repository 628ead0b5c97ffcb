import BluetideBase
import BluetideHCI

/// What every virtual controller reports about itself.
public enum VirtualControllerProfile {
    /// LE ACL payload per packet, bytes, both directions (controller-to-host data is split to it).
    public static let aclDataPacketLength: UInt16 = 251
    /// LE ACL packets the controller buffers; each is completed once delivered to the peer's host.
    public static let totalNumACLDataPackets: UInt8 = 16
    /// HCI and LL version 0x0C (Core 5.3); company 0xFFFF (none).
    public static let version = HCIReadLocalVersionInformation.ReturnParameters(
        hciVersion: 0x0C, hciSubversion: 0, lmpVersion: 0x0C, companyIdentifier: 0xFFFF, lmpSubversion: 0)
    /// LMP features page 0: LE supported (controller), BR/EDR not supported.
    public static let lmpFeatures: UInt64 = 1 << 38 | 1 << 37
    /// LE features: encryption, data length extension, 2M PHY, peripheral-initiated feature
    /// exchange, extended advertising (sets, extended scanning and reports). A host may use the
    /// legacy or the extended commands, not both until Reset.
    public static let leFeatures: LEFeatures = [
        .encryption, .dataPacketLengthExtension, .le2MPHY, .peripheralInitiatedFeaturesExchange, .extendedAdvertising,
    ]

    /// Opcodes of the extended advertising, scanning and create connection commands.
    static let extendedOpcodes: Set<HCIOpcode> = [
        LESetAdvertisingSetRandomAddress.opcode, LESetExtendedAdvertisingParameters.opcode,
        LESetExtendedAdvertisingData.opcode, LESetExtendedScanResponseData.opcode,
        LESetExtendedAdvertisingEnable.opcode, LEReadMaximumAdvertisingDataLength.opcode,
        LEReadNumberOfSupportedAdvertisingSets.opcode, LERemoveAdvertisingSet.opcode, LEClearAdvertisingSets.opcode,
        LESetExtendedScanParameters.opcode, LESetExtendedScanEnable.opcode, LEExtendedCreateConnection.opcode,
    ]

    /// Every command the controller implements, with its bit in the Supported Commands bitmap
    /// (Core Vol 4 Part E 6.27). The one list both the bitmap and the tests are built from.
    /// (Read Local Supported Commands, 0x1002, has no bit: it is always supported.)
    public static let commands: [(opcode: UInt16, octet: Int, bit: Int)] = [
        (0x0406, 0, 5),  // Disconnect
        (0x041D, 2, 7),  // Read Remote Version Information
        (0x0C01, 5, 6), (0x0C03, 5, 7),  // Set Event Mask, Reset
        (0x0C2D, 10, 2),  // Read Transmit Power Level
        (0x0C31, 10, 5), (0x0C33, 10, 6), (0x0C35, 10, 7),  // Controller To Host flow control (off only), Host Buffer Size, Host NOCP
        (0x0C63, 22, 2),  // Set Event Mask Page 2
        (0x0C6C, 24, 5), (0x0C6D, 24, 6),  // Read/Write LE Host Support
        (0x1001, 14, 3), (0x1003, 14, 5), (0x1005, 14, 7),  // Read Local Version, Read Local Supported Features, Read Buffer Size
        (0x1009, 15, 1), (0x1405, 15, 5),  // Read BD_ADDR, Read RSSI
        (0x2001, 25, 0), (0x2002, 25, 1), (0x2003, 25, 2),  // LE Set Event Mask, Read Buffer Size, Read Local Features
        (0x2005, 25, 4), (0x2006, 25, 5), (0x2007, 25, 6), (0x2008, 25, 7),  // Random Address, Adv Parameters, Adv Tx Power, Adv Data
        (0x2009, 26, 0), (0x200A, 26, 1), (0x200B, 26, 2), (0x200C, 26, 3),  // Scan Response Data, Adv Enable, Scan Parameters, Scan Enable
        (0x200D, 26, 4), (0x200E, 26, 5),  // Create Connection (Cancel)
        (0x200F, 26, 6), (0x2010, 26, 7), (0x2011, 27, 0), (0x2012, 27, 1),  // Filter Accept List size, clear, add, remove
        (0x2013, 27, 2), (0x2014, 27, 3), (0x2015, 27, 4), (0x2016, 27, 5),  // Conn Update, Host Channel Classification, Channel Map, Remote Features
        (0x2018, 27, 7),  // LE Rand
        (0x201C, 28, 3),  // LE Read Supported States
        (0x201D, 28, 4), (0x201E, 28, 5), (0x201F, 28, 6),  // Receiver Test, Transmitter Test, Test End
        (0x2022, 33, 6), (0x2023, 33, 7), (0x2024, 34, 0),  // Set Data Length, Read/Write Suggested Default Data Length
        (0x202F, 35, 3), (0x2030, 35, 4), (0x2031, 35, 5), (0x2032, 35, 6),  // Read Max Data Length, Read PHY, Set Default PHY, Set PHY
        (0x204B, 38, 7),  // LE Read Transmit Power
        (0x2060, 41, 5),  // LE Read Buffer Size v2
    ]

    /// The extended advertising, scanning and create connection commands (only offered with
    /// ``LEFeatures/extendedAdvertising``).
    public static let extendedCommands: [(opcode: UInt16, octet: Int, bit: Int)] = [
        (0x2035, 36, 1), (0x2036, 36, 2), (0x2037, 36, 3), (0x2038, 36, 4), (0x2039, 36, 5),  // set random address … enable
        (0x203A, 36, 6), (0x203B, 36, 7), (0x203C, 37, 0), (0x203D, 37, 1),  // max data length, number of sets, remove, clear
        (0x2041, 37, 5), (0x2042, 37, 6), (0x2043, 37, 7),  // extended scan parameters, enable, extended create connection
    ]

    /// The encryption commands: LE Encrypt, LE Enable Encryption, LE Long Term Key Request
    /// (Negative) Reply (only offered with ``LEFeatures/encryption``).
    public static let encryptionCommands: [(opcode: UInt16, octet: Int, bit: Int)] = [
        (0x2017, 27, 6), (0x2019, 28, 0), (0x201A, 28, 1), (0x201B, 28, 2),
    ]

    /// Opcodes of ``encryptionCommands``.
    static let encryptionOpcodes = Set(encryptionCommands.map { HCIOpcode(rawValue: $0.opcode) })

    /// The supported commands bitmap (octet, bit) of every command the controller implements
    /// (without the extended ones, which only a controller offering extended advertising has).
    public static var supportedCommandBits: [(octet: Int, bit: Int)] {
        (commands + encryptionCommands).map { ($0.octet, $0.bit) }
    }

    /// The 64-octet bitmap for a controller with these LE features.
    public static func supportedCommands(features: LEFeatures = leFeatures) -> [UInt8] {
        var bitmap = [UInt8](repeating: 0, count: 64)
        let extended = features.contains(.extendedAdvertising) ? extendedCommands : []
        let encryption = features.contains(.encryption) ? encryptionCommands : []
        for command in commands + extended + encryption { bitmap[command.octet] |= 1 << UInt8(command.bit) }
        return bitmap
    }

    /// LE Read Supported States: every state and role combination of Core 5.0 (bits 0-41),
    /// as the virtual link allows any mix of advertising, scanning, initiating and connections.
    public static let supportedStates: UInt64 = (1 << 42) - 1

    /// Entries the Filter Accept List holds.
    public static let acceptListSize: UInt8 = 16

    /// Event code of Read Remote Version Information Complete.
    static let readRemoteVersionCompleteCode: UInt8 = 0x0C
    /// Event code of Data Buffer Overflow (the host sent more ACL than the buffer credits allow).
    static let dataBufferOverflowCode: UInt8 = 0x1A

    /// Air time of an LE 1M packet carrying `octets` payload bytes, µs.
    static func airTime(octets: UInt16) -> UInt16 { (octets &+ 14) &* 8 }
}
