import BluetideCore
import BluetideHCI

/// Everything one virtual controller remembers between HCI packets. Owned by the link's actor.
struct ControllerState {
    let id: Int
    let publicAddress: BluetoothAddress
    let output: AsyncStream<HCIPacket>.Continuation

    var randomAddress: BluetoothAddress?
    var eventMask = HCISetEventMask.defaultMask
    var leEventMask = LESetEventMask.defaultMask

    var advertisingParameters = LESetAdvertisingParameters()
    var advertisingData: [UInt8] = []
    var scanResponseData: [UInt8] = []
    var advertising = false
    /// Bumped whenever advertising starts or stops, so an old advertising timer stops itself.
    var advertisingGeneration = 0

    var scanParameters = LESetScanParameters(active: false)
    var scanning = false
    var filterDuplicates = false
    /// Reports already sent in this scan when filtering duplicates.
    var reportedThisScan: Set<ReportKey> = []

    /// A pending LE Create Connection (at most one).
    var initiating: LECreateConnection?

    /// Connection handle → connection on the link.
    var connections: [UInt16: Int] = [:]

    /// Packets waiting for the link's added latency, oldest first.
    var delayed: [(due: ContinuousClock.Instant, packet: HCIPacket)] = []
    var delayPumpRunning = false

    init(id: Int, publicAddress: BluetoothAddress, output: AsyncStream<HCIPacket>.Continuation) {
        self.id = id
        self.publicAddress = publicAddress
        self.output = output
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

/// Identifies one advertising report for duplicate filtering.
struct ReportKey: Hashable {
    let address: BluetoothAddress
    let eventType: UInt8
}

/// One LE connection between two controllers of the link.
struct LinkConnection {
    /// One side of the connection.
    struct End {
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
    /// Whether LE Enable Encryption succeeded (keys matched).
    var encrypted = false
    /// The key the central started encryption with, until the peripheral's host answers.
    var pendingKey: HCIKey128?

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

/// A small deterministic random generator for the link's fault injection.
struct LinkRandom: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
