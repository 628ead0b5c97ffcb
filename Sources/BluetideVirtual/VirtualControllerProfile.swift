import BluetideCore
import BluetideHCI

/// What every virtual controller reports about itself.
public enum VirtualControllerProfile {
    /// LE ACL payload per packet, bytes, both directions (controller-to-host data is split to it).
    public static let aclDataPacketLength: UInt16 = 251
    /// LE ACL packets the controller buffers (not enforced: every packet is completed at once).
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

    /// Bits of the extended advertising, scanning and create connection commands.
    static let extendedCommandBits: [(octet: Int, bit: Int)] = [
        (36, 1), (36, 2), (36, 3), (36, 4), (36, 5), (36, 6), (36, 7),  // advertising sets ... number of sets
        (37, 0), (37, 1), (37, 5), (37, 6), (37, 7),  // remove/clear sets, extended scan, extended create connection
    ]

    /// Opcodes of the extended advertising, scanning and create connection commands.
    static let extendedOpcodes: Set<HCIOpcode> = [
        LESetAdvertisingSetRandomAddress.opcode, LESetExtendedAdvertisingParameters.opcode,
        LESetExtendedAdvertisingData.opcode, LESetExtendedScanResponseData.opcode,
        LESetExtendedAdvertisingEnable.opcode, LEReadMaximumAdvertisingDataLength.opcode,
        LEReadNumberOfSupportedAdvertisingSets.opcode, LERemoveAdvertisingSet.opcode, LEClearAdvertisingSets.opcode,
        LESetExtendedScanParameters.opcode, LESetExtendedScanEnable.opcode, LEExtendedCreateConnection.opcode,
    ]

    /// The supported commands bitmap (octet, bit) of every command the controller implements
    /// (the extended ones only when the controller offers extended advertising).
    public static let supportedCommandBits: [(octet: Int, bit: Int)] = [
        (0, 5),  // Disconnect
        (5, 6), (5, 7),  // Set Event Mask, Reset
        (14, 3), (14, 5), (14, 7),  // Read Local Version, Read Local Supported Features, Read Buffer Size
        (15, 1), (15, 5),  // Read BD_ADDR, Read RSSI
        (22, 2),  // Set Event Mask Page 2
        (24, 6),  // Write LE Host Support
        (25, 0), (25, 1), (25, 2), (25, 4), (25, 5), (25, 7),  // LE Set Event Mask ... LE Set Advertising Data
        (26, 0), (26, 1), (26, 2), (26, 3), (26, 4), (26, 5),  // LE Set Scan Response Data ... LE Create Connection Cancel
        (27, 2), (27, 5),  // LE Connection Update, LE Read Remote Features
        (28, 0), (28, 1), (28, 2),  // LE Enable Encryption, LE Long Term Key Request (Negative) Reply
        (33, 6), (33, 7), (34, 0),  // LE Set Data Length, LE Read/Write Suggested Default Data Length
        (35, 3), (35, 4), (35, 5), (35, 6),  // LE Read Maximum Data Length, Read PHY, Set Default PHY, Set PHY
        (41, 5),  // LE Read Buffer Size v2
    ]

    /// The 64-octet bitmap for a controller with these LE features.
    public static func supportedCommands(features: LEFeatures = leFeatures) -> [UInt8] {
        var bitmap = [UInt8](repeating: 0, count: 64)
        let extended = features.contains(.extendedAdvertising) ? extendedCommandBits : []
        for (octet, bit) in supportedCommandBits + extended { bitmap[octet] |= 1 << UInt8(bit) }
        return bitmap
    }

    /// Air time of an LE 1M packet carrying `octets` payload bytes, µs.
    static func airTime(octets: UInt16) -> UInt16 { (octets &+ 14) &* 8 }
}
