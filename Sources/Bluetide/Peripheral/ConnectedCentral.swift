import BluetideHost

/// A central connected to a ``Peripheral``.
public struct ConnectedCentral: Sendable, Hashable, CustomStringConvertible {
    /// The host's link (the package's layers only).
    package let connection: HostConnection

    /// Wraps an incoming link.
    init(_ connection: HostConnection) { self.connection = connection }

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

    /// Whether the link is still open.
    public func isConnected() async -> Bool { await connection.isOpen() }

    /// "central ADDRESS (connection 0xHANDLE)", for logs.
    public var description: String { "central \(address) (connection 0x\(String(handle, radix: 16)))" }
}
