import BluetideHost

/// A connected central asking to read or write a characteristic declared
/// `security: .authorized` that it is not authorised for (``Peripheral/authorizationRequests``).
///
/// The central's request waits for the answer: ``allow()`` lets it through (and later ones
/// for the same characteristic and access), ``deny()`` refuses it with Insufficient
/// Authorization (0x08), ``ConnectedCentral/authorize()`` allows the central everything.
/// Unanswered, it is refused after 20 s (before the central's 30 s ATT timeout). What is
/// allowed lasts until the central disconnects; it is not bonded.
///
/// ```swift
/// for await request in peripheral.authorizationRequests {
///     if trusted.contains(request.central.address) { await request.allow() } else { await request.deny() }
/// }
/// ```
public struct AuthorizationRequest: Sendable, CustomStringConvertible {
    /// Reading (`.read`) or writing (`.write`; a write without response cannot wait: it was
    /// dropped, and an ``allow()`` lets the next ones through).
    public typealias Access = GATTAuthorizationRequest.Access

    /// Who asks.
    public let central: ConnectedCentral
    /// The characteristic's type UUID.
    public let characteristic: BluetoothUUID
    /// The value's handle in this peripheral's server.
    public let value: ServedValue
    /// Reading or writing.
    public let access: Access

    /// The server's request (the package's layers only).
    package let request: GATTAuthorizationRequest

    init(_ request: GATTAuthorizationRequest, central: ConnectedCentral) {
        self.request = request
        self.central = central
        characteristic = request.uuid
        value = ServedValue(valueHandle: request.handle)
        access = request.access
    }

    /// Lets the central read (or write, as asked) this characteristic until it disconnects;
    /// the waiting request goes through.
    public func allow() async { await central.stack?.authorize(.allow(request)) }

    /// Refuses: the waiting request gets Insufficient Authorization (0x08). The central may
    /// ask again later.
    public func deny() async { await central.stack?.authorize(.deny(request)) }

    /// "central … asks to read 2A37 (0x000C)", for logs and prompts.
    public var description: String {
        "\(central) asks to \(access == .read ? "read" : "write") \(characteristic) (\(value))"
    }
}
