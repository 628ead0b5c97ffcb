import BluetideCore
import BluetideHCI
import Synchronization

/// One LE connection of a ``HostStack``: a `Sendable` handle whose operations run inside the
/// stack actor. Its ``gatt`` client talks to the peer's GATT server.
public struct HostConnection: Sendable, Hashable, CustomStringConvertible {
    /// Connection parameters as the controller reports them.
    public struct Parameters: Sendable, Equatable {
        /// Connection interval, ms (1.25 ms steps).
        public var intervalMilliseconds: Double
        /// Peripheral latency, connection events the peripheral may skip.
        public var latency: UInt16
        /// Supervision timeout, ms (10 ms steps).
        public var supervisionTimeoutMilliseconds: Double
    }

    /// The HCI connection handle.
    public let handle: UInt16
    /// The peer's address.
    public let peer: BluetoothAddress
    /// Our role on this link.
    public let role: LinkRole
    /// GATT client for the peer's server, over this connection's ATT bearer.
    public let gatt: GATTClient
    let stack: HostStack
    private let state: ClosedState

    init(stack: HostStack, handle: UInt16, peer: BluetoothAddress, role: LinkRole) {
        self.stack = stack
        self.handle = handle
        self.peer = peer
        self.role = role
        self.gatt = GATTClient(channel: LinkATTChannel(stack: stack, handle: handle))
        self.state = ClosedState()
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.handle == rhs.handle && lhs.stack === rhs.stack }
    public func hash(into hasher: inout Hasher) { hasher.combine(handle) }

    public var description: String {
        "connection 0x\(String(handle, radix: 16)) to \(peer) (\(role == .central ? "we are central" : "we are peripheral"))"
    }

    /// Whether the link is still up.
    public func isOpen() async -> Bool { await stack.isOpen(handle) }

    /// The reason the link closed, once it has.
    public var closeReason: HCIStatus? { state.reason }

    /// The effective ATT MTU, octets.
    public func mtu() async -> Int { await stack.attMTU(on: handle) }

    /// Connection interval, latency and supervision timeout.
    public func parameters() async -> Parameters? { await stack.parameters(of: handle) }

    /// Reads the link's RSSI from the controller, dBm.
    public func rssi() async throws -> Int8 {
        try await stack.run(HCIReadRSSI(handle: handle), timeout: 5).rssi
    }

    /// Disconnects with `reason` (0x13, remote user terminated, by default) and waits until the
    /// controller confirms, at most `timeout` seconds; returns the reason it reported.
    @discardableResult
    public func disconnect(reason: HCIStatus = .remoteUserTerminated, timeout: Double = 5) async throws -> HCIStatus {
        guard await stack.isOpen(handle) else { return state.reason ?? .unknownConnectionIdentifier }
        try await stack.execute(HCIDisconnect(handle: handle, reason: reason), timeout: timeout)
        let connection = self
        return try await withThrowingTaskGroup(of: HCIStatus?.self) { group in
            group.addTask { await connection.waitForDisconnection() }
            group.addTask {
                try await Task.sleep(for: .seconds(timeout))
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let reason = first else {
                throw HostError.timedOut("disconnect of \(self)", seconds: timeout)
            }
            return reason
        }
    }

    /// Waits until the link closes and returns the reason.
    public func waitForDisconnection() async -> HCIStatus {
        if let reason = state.reason { return reason }
        if let reason = await stack.waitForDisconnection(of: handle) { return reason }
        return state.reason ?? .unknownConnectionIdentifier
    }

    func closed(reason: HCIStatus) { state.set(reason) }

    /// The close reason, shared by all copies of this handle.
    private final class ClosedState: Sendable {
        private let value = Mutex<HCIStatus?>(nil)
        var reason: HCIStatus? { value.withLock { $0 } }
        func set(_ reason: HCIStatus) { value.withLock { if $0 == nil { $0 = reason } } }
    }
}

/// The ATT request channel of one connection, for its ``GATTClient``.
struct LinkATTChannel: ATTRequestChannel {
    let stack: HostStack
    let handle: UInt16
    func request(_ pdu: ATTPDU) async throws -> ATTPDU { try await stack.attRequest(pdu, on: handle) }
    func send(command: ATTPDU) async throws { try await stack.attCommand(command, on: handle) }
    func currentMTU() async -> Int { await stack.attMTU(on: handle) }
}
