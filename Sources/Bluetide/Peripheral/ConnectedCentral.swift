import BluetideHost

/// A central connected to a ``Peripheral``.
public struct ConnectedCentral: Sendable, Hashable, CustomStringConvertible {
    /// The host's link (the package's layers only).
    package let connection: HostConnection

    let stack: HostStack

    /// Wraps an incoming link of `stack`.
    init(_ connection: HostConnection, stack: HostStack) {
        self.connection = connection
        self.stack = stack
    }

    /// The same link (handle on the same host).
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.connection == rhs.connection }
    /// Hashes the link.
    public func hash(into hasher: inout Hasher) { hasher.combine(connection) }

    /// The central's address.
    public var address: BluetoothAddress { connection.peer }

    /// The HCI connection handle.
    public var handle: UInt16 { connection.handle }

    /// The effective ATT MTU, octets: notifications carry at most MTU − 3 bytes of value.
    public func mtu() async -> Int { await connection.mtu() }

    /// Disconnects the central (reason 0x13, remote user terminated) and waits until the
    /// controller confirms, at most `timeout` seconds.
    public func disconnect(timeout: Double = 5) async throws {
        do { _ = try await connection.disconnect(timeout: timeout) } catch {
            throw BluetideError.from(error, operation: "disconnect")
        }
    }

    /// Waits until the link closes and returns the reason.
    public func waitForDisconnection() async -> DisconnectReason {
        DisconnectReason(await connection.waitForDisconnection())
    }

    /// The link's security level now (``SecurityLevel/none`` while not encrypted).
    public func securityLevel() async -> SecurityLevel {
        await stack.securityLevel(of: handle)
    }

    /// Asks the central to secure the link (a Security Request; a bonded central encrypts, a
    /// new one pairs, with prompts on ``Bluetooth/pairingPrompts``) and returns the level
    /// reached. Throws ``BluetideError/pairingFailed(_:)`` when pairing fails or times out.
    @discardableResult
    public func requestSecurity() async throws -> SecurityLevel {
        do { return try await stack.pair(handle) } catch {
            throw BluetideError.from(error, operation: "pairing")
        }
    }

    /// Authorises this central for every characteristic declared `security: .authorized`, both
    /// ways, until it disconnects (not bonded: a new connection starts unauthorised). A request
    /// of it waiting on ``Peripheral/authorizationRequests`` goes through. Call it ahead, e.g. for
    /// a known address on ``Peripheral/connections``, and no request is asked.
    public func authorize() async {
        await stack.authorize(.allowAll(connection: handle))
    }

    /// Waits until the link's queue of data for the controller is short again (the host's ACL
    /// flow control), so a peripheral notifying in a loop (``Peripheral/notify(_:of:)``) goes at
    /// the link's pace. Throws when the link is closed, or when the controller returns no buffers
    /// within the ATT transaction timeout (30 s).
    public func waitForRoom() async throws {
        do { try await stack.waitForBuffers(on: handle) } catch {
            throw BluetideError.from(error, operation: "notify")
        }
    }

    /// Whether the link is still open.
    public func isConnected() async -> Bool { await connection.isOpen() }

    /// "central ADDRESS (connection 0xHANDLE)", for logs.
    public var description: String { "central \(address) (connection 0x\(String(handle, radix: 16)))" }
}
