import BluetideHCI

/// A link to an HCI controller that carries whole HCI packets both ways (H4 framing underneath).
///
/// `packets` is the single stream of packets from the controller. It finishes normally after
/// ``close()`` and finishes *with an error* when the transport fails: the peer went away
/// (``TransportError/closedByPeer(_:)``), an I/O error, or bytes that cannot be framed
/// (`H4FramingError`). Iterate it from one task only.
public protocol HCITransport: Sendable {
    /// Packets from the controller, in arrival order.
    var packets: AsyncThrowingStream<HCIPacket, any Error> { get }
    /// Sends one packet to the controller. Throws ``TransportError`` once the transport is closed
    /// or has failed.
    func send(_ packet: HCIPacket) async throws
    /// Closes the link and finishes `packets`. Safe to call more than once.
    func close() async
}

/// Why a transport could not be opened or stopped working.
public enum TransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The transport is closed (by ``HCITransport/close()``) or has failed; nothing more can be sent.
    case closed(String)
    /// The other side closed the connection (TCP peer gone, serial device unplugged).
    case closedByPeer(String)
    /// Opening failed; the text says what was tried, why it failed and what to do.
    case openFailed(String)
    /// A read or write failed after opening.
    case ioFailed(String)
    /// This kind of transport cannot be used here (platform, or not built yet).
    case unavailable(String)

    public var description: String {
        switch self {
        case let .closed(what): "\(what): transport is closed"
        case let .closedByPeer(what): "\(what): closed by the other side"
        case let .openFailed(text), let .ioFailed(text), let .unavailable(text): text
        }
    }
}
