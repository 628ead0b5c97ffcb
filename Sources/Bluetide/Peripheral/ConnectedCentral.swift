import BluetideHost

/// A central connected to a ``Peripheral``.
public struct ConnectedCentral: Sendable, Hashable, CustomStringConvertible {
    /// The backend's link to the central (``PeripheralCentralLink``).
    public let link: any PeripheralCentralLink

    /// A central on a backend's link (backends other than the own host make theirs this way).
    public init(_ link: any PeripheralCentralLink) { self.link = link }

    /// The own host's link, when the central is connected to it (the package's layers only).
    package var connection: HostConnection? { (link as? HostCentralPeer)?.connection }

    /// The own host, when the central is connected to it.
    var stack: HostStack? { (link as? HostCentralPeer)?.stack }

    /// The same link.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.link.identity == rhs.link.identity }
    /// Hashes the link.
    public func hash(into hasher: inout Hasher) { hasher.combine(link.identity) }

    /// The central's address.
    public var address: BluetoothAddress { link.address }

    /// The connection's handle: the HCI connection handle on the own host; on a backend
    /// without HCI handles (BlueZ) a number it gives each connected central.
    public var handle: UInt16 { link.handle }

    /// The effective ATT MTU, octets: notifications carry at most MTU − 3 bytes of value.
    public func mtu() async -> Int { await link.mtu() }

    /// Disconnects the central (reason 0x13, remote user terminated) and waits until the
    /// controller confirms, at most `timeout` seconds.
    public func disconnect(timeout: Double = 5) async throws {
        do { try await link.disconnect(timeout: timeout) } catch {
            throw BluetideError.from(error, operation: "disconnect")
        }
    }

    /// Waits until the link closes and returns the reason.
    public func waitForDisconnection() async -> DisconnectReason { await link.waitForDisconnection() }

    /// The link's security level now (``SecurityLevel/none`` while not encrypted).
    public func securityLevel() async -> SecurityLevel { await link.securityLevel() }

    /// Asks the central to secure the link (a Security Request; a bonded central encrypts, a
    /// new one pairs, with prompts on ``Bluetooth/pairingPrompts``) and returns the level
    /// reached. Throws ``BluetideError/pairingFailed(_:)`` when pairing fails or times out.
    @discardableResult
    public func requestSecurity() async throws -> SecurityLevel {
        do { return try await link.requestSecurity() } catch {
            throw BluetideError.from(error, operation: "pairing")
        }
    }

    /// Authorises this central for every characteristic declared `security: .authorized`, both
    /// ways, until it disconnects (not bonded: a new connection starts unauthorised). A request
    /// of it waiting on ``Peripheral/authorizationRequests`` goes through. Call it ahead, e.g. for
    /// a known address on ``Peripheral/connections``, and no request is asked.
    public func authorize() async { await link.authorize() }

    /// Waits until the link's queue of data for the controller is short again (the host's ACL
    /// flow control), so a peripheral notifying in a loop (``Peripheral/notify(_:of:)``) goes at
    /// the link's pace. Throws when the link is closed, or when the controller returns no buffers
    /// within the ATT transaction timeout (30 s).
    public func waitForRoom() async throws {
        do { try await link.waitForRoom() } catch {
            throw BluetideError.from(error, operation: "notify")
        }
    }

    /// Whether the link is still open.
    public func isConnected() async -> Bool { await link.isConnected() }

    /// "central ADDRESS (connection 0xHANDLE)", for logs.
    public var description: String { "central \(address) (connection 0x\(String(handle, radix: 16)))" }
}
