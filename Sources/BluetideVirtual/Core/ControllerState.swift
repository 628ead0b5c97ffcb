import BluetideBase
import BluetideHCI

/// Everything one virtual controller remembers between HCI packets (HCI Reset forgets it all).
/// Part of the link's core (``LinkCore``).
struct ControllerState: Sendable {
    let id: Int
    let publicAddress: BluetoothAddress
    /// The LE features this controller offers (and answers Read Remote Features with).
    let leFeatures: LEFeatures

    var randomAddress: BluetoothAddress?
    var eventMask = HCISetEventMask.defaultMask
    var leEventMask = LESetEventMask.defaultMask

    /// Advertising sets by handle; the legacy commands drive the set ``legacySet``.
    var sets: [UInt8: AdvertisingSet] = [legacySet: AdvertisingSet(legacy: LESetAdvertisingParameters())]
    /// Source of advertising generations, so an old advertising timer stops itself.
    var generationCounter = 0
    /// Legacy and extended advertising/scanning commands may not be mixed until Reset.
    var commandMode: CommandMode = .unset

    var scanParameters = LESetScanParameters(active: false)
    var scanning = false
    /// Scanning was enabled with the extended command: reports are Extended Advertising Reports.
    var extendedScanning = false
    var filterDuplicates = false
    /// When the current scan was enabled (link time): the scanner reports nothing before it has
    /// listened for ``LinkCore/scanWarmUp``.
    var scanStartedAt: LinkTime = .zero
    /// Reports sent in this scan while filtering duplicates, with when each was last sent; a
    /// report is a duplicate for ``LinkCore/duplicateFilterMemory`` after that.
    var reportedThisScan: [ReportKey: LinkTime] = [:]

    /// A pending LE Create Connection (at most one).
    var initiating: LECreateConnection?

    /// Connection handle → connection on the link.
    var connections: [UInt16: Int] = [:]

    /// ACL packets taken from the host and not yet reported completed, by handle (at most
    /// ``VirtualControllerProfile/totalNumACLDataPackets`` together: ``aclInFlightTotal``).
    var aclInFlight: [UInt16: Int] = [:]
    /// The sum of ``aclInFlight``.
    var aclInFlightTotal = 0

    /// The Filter Accept List (at most ``VirtualControllerProfile/acceptListSize`` entries).
    var acceptList: Set<BluetoothAddress> = []
    /// Packets received in the current LE Receiver Test (always 0: nothing transmits test packets).
    var testMode = false

    init(id: Int, publicAddress: BluetoothAddress, leFeatures: LEFeatures) {
        self.id = id
        self.publicAddress = publicAddress
        self.leFeatures = leFeatures
    }

    /// Key of the set the legacy advertising commands use (not a valid extended handle).
    static let legacySet: UInt8 = 0xFF
    /// Most extended advertising sets a controller keeps.
    static let maximumSets = 4

    /// Whether any advertising set is on.
    var isAdvertising: Bool { sets.values.contains { $0.enabled } }

    /// The address a set advertises from: public, or its random address (the controller's
    /// random address for the legacy set); nil when that random address was never set.
    func address(ofSet key: UInt8) -> BluetoothAddress? {
        guard let set = sets[key] else { return nil }
        guard set.ownAddressType.addressType == .random else { return publicAddress }
        return key == Self.legacySet ? randomAddress : set.randomAddress
    }

    /// The address used for an own address type (2/3, "RPA else …", fall back to 0/1), or nil
    /// when random was asked for and no random address was set.
    func ownAddress(_ type: LEAddressType) -> BluetoothAddress? {
        type.addressType == .random ? randomAddress : publicAddress
    }

    /// The lowest connection handle not in use (from 0x0001).
    func freeHandle() -> UInt16 {
        var handle: UInt16 = 1
        while connections[handle] != nil { handle += 1 }
        return handle
    }

    /// Whether the host lets this event through its event masks. Command Complete, Command
    /// Status and Number Of Completed Packets cannot be masked.
    func allows(eventCode: UInt8, parameters: [UInt8]) -> Bool {
        switch eventCode {
        case HCIEvent.leMetaCode:
            guard eventMask & (1 << 61) != 0, let sub = parameters.first, sub >= 1, sub <= 64 else { return false }
            return leEventMask & (1 << UInt64(sub - 1)) != 0
        case HCIEvent.commandCompleteCode, HCIEvent.commandStatusCode, HCIEvent.numberOfCompletedPacketsCode:
            return true
        case 1...64:
            return eventMask & (1 << UInt64(eventCode - 1)) != 0
        default:
            return true
        }
    }
}

/// Which family of advertising commands a host has used since Reset.
enum CommandMode: Sendable {
    case unset, legacy, extended
}

/// One advertising set: what it sends and whether it is on.
struct AdvertisingSet: Sendable {
    var properties: LEAdvertisingEventProperties
    /// Advertising interval, 0.625 ms units.
    var intervalUnits: UInt32
    var ownAddressType: LEAddressType
    /// The target of directed advertising.
    var peerAddress: BluetoothAddress
    var primaryPHY: LEPHY = .le1M
    var secondaryPHY: LEPHY = .le1M
    var sid: UInt8 = 0
    /// The set's own random address (extended sets only).
    var randomAddress: BluetoothAddress?
    var data: [UInt8] = []
    var scanResponseData: [UInt8] = []
    var enabled = false
    var generation = 0

    init(legacy parameters: LESetAdvertisingParameters) {
        properties = Self.properties(of: parameters.advertisingType)
        intervalUnits = UInt32(parameters.intervalMin)
        ownAddressType = parameters.ownAddressType
        peerAddress = parameters.peerAddress
    }

    init(extended parameters: LESetExtendedAdvertisingParameters) {
        properties = parameters.properties
        intervalUnits = parameters.primaryIntervalMin
        ownAddressType = parameters.ownAddressType
        peerAddress = parameters.peerAddress
        primaryPHY = parameters.primaryPHY
        secondaryPHY = parameters.secondaryPHY
        sid = parameters.sid
    }

    /// The event properties matching a legacy advertising type.
    static func properties(of type: LEAdvertisingType) -> LEAdvertisingEventProperties {
        switch type {
        case .connectableUndirected: [.connectable, .scannable, .legacy]
        case .connectableDirectedHighDuty: [.connectable, .directed, .highDutyCycleDirected, .legacy]
        case .scannableUndirected: [.scannable, .legacy]
        case .connectableDirectedLowDuty: [.connectable, .directed, .legacy]
        default: [.legacy]
        }
    }

    var isLegacy: Bool { properties.contains(.legacy) }
    var isConnectable: Bool { properties.contains(.connectable) }
    var isScannable: Bool { properties.contains(.scannable) }
    var isDirected: Bool { properties.contains(.directed) }

    /// The legacy report type of this set's PDUs.
    var legacyReportType: LEAdvertisingReportType {
        if isConnectable { return isDirected ? .advDirectInd : .advInd }
        return isScannable ? .advScanInd : .advNonconnInd
    }
}

/// Identifies one advertising report for duplicate filtering.
struct ReportKey: Hashable, Sendable {
    let address: BluetoothAddress
    let eventType: UInt16
}

/// One LE connection between two controllers of the link.
struct LinkConnection: Sendable {
    /// One side of the connection.
    struct End: Sendable {
        let controller: Int
        let handle: UInt16
        /// This side's address as the other side sees it.
        let address: BluetoothAddress
        /// Octets per LL packet this side sends (27-251).
        var txOctets: UInt16 = 27
        var txPHY: LEPHY = .le1M
    }

    var central: End
    var peripheral: End
    var interval: UInt16
    var latency: UInt16
    var supervisionTimeout: UInt16
    /// Whether LE Enable Encryption succeeded (keys matched). The bytes are not ciphered.
    var encrypted = false
    /// The encryption start or refresh in progress (at most one).
    var encryption: EncryptionProcedure?

    /// The end belonging to `controller`, and the other one.
    func ends(from controller: Int) -> (local: End, remote: End)? {
        if central.controller == controller { return (central, peripheral) }
        if peripheral.controller == controller { return (peripheral, central) }
        return nil
    }

    mutating func update(_ controller: Int, _ change: (inout End) -> Void) {
        if central.controller == controller { change(&central) } else if peripheral.controller == controller { change(&peripheral) }
    }
}

/// An encryption start (or, on an encrypted link, a key refresh) between LE Enable Encryption
/// and its end on the air.
struct EncryptionProcedure: Sendable {
    /// Where the procedure is.
    enum Stage: Sendable {
        /// LL_ENC_REQ is on its way to the peripheral.
        case requesting
        /// The peripheral's host was asked for the key (LE Long Term Key Request).
        case awaitingKey
        /// The host answered; the outcome is on its way.
        case ending
    }

    /// The key the central's host gave.
    let key: HCIKey128
    let randomNumber: UInt64
    let encryptedDiversifier: UInt16
    /// The link was encrypted already: a key refresh (Encryption Key Refresh Complete at the end).
    let refresh: Bool
    var stage: Stage = .requesting
}
