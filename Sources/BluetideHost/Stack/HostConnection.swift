import BluetideBase
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

    init(stack: HostStack, info: HostLinkInfo) {
        self.stack = stack
        self.handle = info.handle
        self.peer = info.peer
        self.role = info.role
        self.gatt = GATTClient(stack: stack, handle: info.handle)
        self.state = ClosedState()
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.handle == rhs.handle && lhs.stack === rhs.stack }
    public func hash(into hasher: inout Hasher) { hasher.combine(handle) }

    public var description: String {
        HostLinkInfo.describe(handle: handle, peer: peer, role: role)
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
        // The stack's core sends HCI Disconnect and times the wait for Disconnection Complete.
        if let reason = try await stack.disconnect(handle, reason: reason, timeout: timeout) { return reason }
        return state.reason ?? .unknownConnectionIdentifier
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

extension HostConnection {
    /// Notified and indicated values this link's subscription streams dropped because their
    /// reader fell behind by more than ``HostStack/subscriptionBuffer`` values (the newest are
    /// kept).
    public var droppedValues: Int {
        get async { await stack.droppedValues(on: handle) }
    }
}

extension HostStack {
    /// Opens the stream of `characteristic`'s values on link `handle`, then subscribes (the
    /// core discovers the CCCD and writes it); the stream ends when that fails.
    func subscribe(
        to characteristic: GATTCharacteristic, preferIndications: Bool, on handle: UInt16
    ) async throws -> AsyncStream<[UInt8]> {
        let subscription = openSubscription(on: handle, valueHandle: characteristic.valueHandle)
        do {
            _ = try await runGATTProcedure(.changeSubscription(.subscribe(preferIndications: preferIndications), of: characteristic), on: handle)
        } catch {
            subscription.end()
            throw error
        }
        return subscription.values
    }

    /// Writes 0x0000 to `characteristic`'s CCCD on link `handle`, then ends its streams.
    func unsubscribe(from characteristic: GATTCharacteristic, on handle: UInt16) async throws {
        _ = try await runGATTProcedure(.changeSubscription(.unsubscribe, of: characteristic), on: handle)
        endSubscriptions(on: handle, valueHandle: characteristic.valueHandle)
    }
}
