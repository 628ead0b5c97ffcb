import BluetideBase
import BluetideHCI

/// Names one request a driver gives to ``HostCore``; its answer (``HostEvent/finished(_:_:)``)
/// carries the same ID. The driver picks the IDs (any unique numbers).
public struct HostRequestID: Hashable, Sendable, CustomStringConvertible {
    /// Unique among the requests in flight.
    public let rawValue: UInt64
    /// Wraps a number.
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public var description: String { "request #\(rawValue)" }
}

/// Everything that can happen to a host, as data: packets from the controller, requests from
/// the application, and the passing of time. ``HostCore/handle(_:now:into:)`` takes one.
public enum HostInput: Sendable {
    /// A packet from the controller.
    case received(HCIPacket)
    /// Nothing but time passed (a timer the driver armed at ``HostCore/nextDeadline`` fired).
    case tick
    /// The controller's ACL buffers (from LE Read Buffer Size or Read Buffer Size): ACL data
    /// can flow from now on.
    case configureBuffers(ACLBufferSize)
    /// Send an HCI command; answered with ``HostReply/command(_:)``. `timeout` in seconds
    /// (nil: the configured command timeout).
    case command(HostRequestID, opcode: HCIOpcode, parameters: [UInt8], timeout: Double?)
    /// Send an ATT request on a link; answered with ``HostReply/att(_:)`` (an Error Response is
    /// an answer, not a failure).
    case attRequest(HostRequestID, handle: UInt16, pdu: ATTPDU)
    /// Run a GATT client procedure on a link, after the link's procedures before it (one runs
    /// at a time); answered with ``HostReply/gatt(_:)``, or fails with a ``GATTClientError``, an
    /// ``ATTBearerError`` or the link's ``HostError``.
    case gattProcedure(HostRequestID, handle: UInt16, GATTProcedureRequest)
    /// The caller of a GATT procedure gave up: it fails with `CancellationError` now; a running
    /// one sends nothing more (a long write still cancels the server's queue).
    case cancelGATTProcedure(HostRequestID)
    /// Answered with ``HostReply/done`` once the link's queue of ACL fragments is short, or a
    /// timeout when the controller returns no buffers.
    case waitForBuffers(HostRequestID, handle: UInt16)
    /// Connect to an advertiser; answered with ``HostReply/link(_:)``. `timeout` in seconds; a
    /// timed-out attempt is cancelled and the next connect waits for the cancel to settle.
    case connect(HostRequestID, address: BluetoothAddress, parameters: LEConnectionParameters, timeout: Double)
    /// Disconnect a link and wait (at most `timeout` seconds) for the controller to confirm;
    /// answered with ``HostReply/disconnected(_:)``.
    case disconnect(HostRequestID, handle: UInt16, reason: HCIStatus, timeout: Double)
    /// Join the controller's scan (started for the first scanner); answered with ``HostReply/done``.
    case startScan(HostRequestID, scanner: Int, active: Bool)
    /// Leave the scan (stopped after the last scanner leaves).
    case stopScan(scanner: Int)
    /// Start connectable undirected advertising; answered with ``HostReply/done``.
    case startAdvertising(HostRequestID, data: [UInt8], scanResponse: [UInt8], intervalUnits: UInt16)
    /// Stop advertising; answered with ``HostReply/done``.
    case stopAdvertising(HostRequestID)
    /// Secure a link: pair, or (as central, unless `force`) encrypt with the stored bond; as
    /// peripheral, ask the central with a Security Request. Answered with
    /// ``HostReply/secured(_:)`` or fails with an ``SMPPairingError``.
    case pair(HostRequestID, handle: UInt16, force: Bool)
    /// The user's answer to a pairing prompt on a link.
    case answerPairing(handle: UInt16, PairingAnswer)
    /// Forget the bond with a device (identity or resolvable private address).
    case removeBond(BluetoothAddress)
    /// The transport is gone or the application closed the host: every request fails with it.
    case stop(HostError)
}

/// What a finished request produced.
public enum HostReply: Sendable {
    /// Done, nothing to report.
    case done
    /// An HCI command's answer.
    case command(HCICommandResponse)
    /// An ATT response (or Error Response) to a request.
    case att(ATTPDU)
    /// What a GATT client procedure produced.
    case gatt(GATTProcedureResult)
    /// The link a connect made.
    case link(HostLinkInfo)
    /// The reason a link closed with.
    case disconnected(HCIStatus)
    /// The security level a link has after pairing or encrypting with a bond.
    case secured(SMPSecurityLevel)
}

/// A link as the core knows it.
public struct HostLinkInfo: Sendable, Equatable {
    /// The HCI connection handle (12 bits).
    public var handle: UInt16
    /// The peer's address.
    public var peer: BluetoothAddress
    /// Our role.
    public var role: LinkRole
    /// Interval, latency and supervision timeout as the controller reported them.
    public var parameters: HostConnection.Parameters
}

/// What the core tells its driver, in order.
public enum HostEvent: Sendable {
    /// A request ended.
    case finished(HostRequestID, Result<HostReply, any Error>)
    /// A link opened (reported before the connect that asked for it finishes). Links a peer
    /// made to us have `role == .peripheral`.
    case linkOpened(HostLinkInfo)
    /// A link closed, with the controller's reason; `error` is what its waiters fail with.
    case linkClosed(handle: UInt16, reason: HCIStatus, error: HostError)
    /// The peer's server notified a value.
    case notification(handle: UInt16, valueHandle: UInt16, value: [UInt8])
    /// The peer's server indicated a value (already confirmed).
    case indication(handle: UInt16, valueHandle: UInt16, value: [UInt8])
    /// A remote client wrote to the local server or changed a subscription.
    case server(handle: UInt16, GATTServerEvent)
    /// An advertisement while scanning.
    case advertisement(AdvertisementReport)
    /// A link's encryption changed (Encryption Change or Key Refresh); `status` non-zero when
    /// the controller could not encrypt.
    case encryptionChanged(handle: UInt16, encrypted: Bool, status: HCIStatus)
    /// Pairing prompts and outcomes, security levels, changed bonds (to be saved).
    case security(HostSecurityEvent)
}

/// What one round of the core produced: packets for the controller (write them with one
/// `send(batch:)`, in order) and events for the driver. Reused across rounds: the driver
/// empties it (keeping its storage) after carrying it out.
public struct HostOutputs: Sendable {
    /// Packets for the controller, in order.
    public var packets: [HCIPacket] = []
    /// Events for the driver, in order.
    public var events: [HostEvent] = []

    /// Empty outputs.
    public init() {}

    /// Whether there is nothing to do.
    public var isEmpty: Bool { packets.isEmpty && events.isEmpty }

    /// Forgets everything, keeping the storage for the next round.
    public mutating func removeAll() {
        packets.removeAll(keepingCapacity: true)
        events.removeAll(keepingCapacity: true)
    }
}
