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
    /// This link, as distinct from a later link that reuses its handle.
    let link: HostLinkToken

    init(stack: HostStack, info: HostLinkInfo) {
        self.stack = stack
        self.handle = info.handle
        self.peer = info.peer
        self.role = info.role
        self.link = HostLinkToken(handle: info.handle)
        self.gatt = GATTClient(stack: stack, link: link)
    }

    /// The same link: a later link that reuses the handle is another connection.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.link === rhs.link }
    public func hash(into hasher: inout Hasher) { hasher.combine(handle) }

    public var description: String {
        HostLinkInfo.describe(handle: handle, peer: peer, role: role)
    }

    /// Whether the link is still up.
    public func isOpen() async -> Bool { await stack.isOpen(link) }

    /// The reason the link closed, once it has.
    public var closeReason: HCIStatus? { link.reason }

    /// The effective ATT MTU, octets.
    public func mtu() async -> Int { await stack.attMTU(on: link) }

    /// Connection interval, latency and supervision timeout.
    public func parameters() async -> Parameters? { await stack.parameters(of: link) }

    /// Reads the link's RSSI from the controller, dBm.
    public func rssi() async throws -> Int8 {
        try await stack.readRSSI(of: link)
    }

    /// Disconnects with `reason` (0x13, remote user terminated, by default) and waits until the
    /// controller confirms, at most `timeout` seconds; returns the reason it reported.
    @discardableResult
    public func disconnect(reason: HCIStatus = .remoteUserTerminated, timeout: Double = 5) async throws -> HCIStatus {
        // The stack's core sends HCI Disconnect and times the wait for Disconnection Complete
        // (nil: this link had already closed).
        if let reason = try await stack.disconnect(link, reason: reason, timeout: timeout) { return reason }
        return link.reason ?? .unknownConnectionIdentifier
    }

    /// Waits until the link closes and returns the reason.
    public func waitForDisconnection() async -> HCIStatus {
        if let reason = link.reason { return reason }
        if let reason = await stack.waitForDisconnection(of: link) { return reason }
        return link.reason ?? .unknownConnectionIdentifier
    }

    func closed(reason: HCIStatus) { link.set(reason) }
}

/// One link of a ``HostStack``, shared by every copy of its ``HostConnection`` and its GATT
/// client: a controller may give a new link the handle of one that just closed, so the stack
/// acts for a caller only while the caller's token is the current link's (a late unsubscribe
/// of a closed link must not write on the new one). It also holds the close reason.
final class HostLinkToken: Sendable {
    /// The HCI connection handle.
    let handle: UInt16
    private let closeReason = Mutex<HCIStatus?>(nil)

    init(handle: UInt16) { self.handle = handle }

    /// The controller's reason, once the link has closed.
    var reason: HCIStatus? { closeReason.withLock { $0 } }
    func set(_ reason: HCIStatus) { closeReason.withLock { if $0 == nil { $0 = reason } } }
}

extension HostConnection {
    /// Notified and indicated values this link's subscription streams dropped because their
    /// reader fell behind by more than ``HostStack/subscriptionBuffer`` values (the newest are
    /// kept).
    public var droppedValues: Int {
        get async { await stack.droppedValues(on: link) }
    }
}

extension HostStack {
    /// Opens the stream of `characteristic`'s values on `link`, then subscribes (the core
    /// discovers the CCCD and writes it); the stream ends when that fails.
    func subscribe(
        to characteristic: GATTCharacteristic, preferIndications: Bool, on link: HostLinkToken
    ) async throws -> AsyncStream<[UInt8]> {
        let subscription = openSubscription(on: link, valueHandle: characteristic.valueHandle)
        do {
            _ = try await runGATTProcedure(.changeSubscription(.subscribe(preferIndications: preferIndications), of: characteristic), on: link)
        } catch {
            subscription.end()
            throw error
        }
        return subscription.values
    }

    /// Writes 0x0000 to `characteristic`'s CCCD on `link`, then ends its streams.
    func unsubscribe(from characteristic: GATTCharacteristic, on link: HostLinkToken) async throws {
        _ = try await runGATTProcedure(.changeSubscription(.unsubscribe, of: characteristic), on: link)
        endSubscriptions(on: link, valueHandle: characteristic.valueHandle)
    }
}
