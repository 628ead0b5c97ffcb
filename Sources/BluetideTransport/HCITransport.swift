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
    /// Packets from the controller in arrival order, grouped as they were read (one element per
    /// read or wake-up), so a reader pays one hand-over per batch rather than one per packet.
    /// A reader uses either this or `packets`, never both. The default wraps `packets`.
    var packetBatches: AsyncThrowingStream<[HCIPacket], any Error> { get }
    /// Sends `packets` in order as one batch: queued at once and flushed once, without waiting
    /// for each packet to be written. Throws ``TransportError`` once the transport is closed or
    /// has failed. The default sends them one by one with ``send(_:)``.
    func send(batch packets: [HCIPacket]) async throws
    /// True when ``sendImmediately(batch:)`` works: the transport queues a batch and returns
    /// without suspending (an in-process link, a NIO channel). A host driver then sends each
    /// round's packets from its own executor: no writer task, no hop per batch. Default false.
    var sendsImmediately: Bool { get }
    /// Queues `packets` in order and returns at once, like ``send(batch:)`` without the wait;
    /// only for transports whose ``sendsImmediately`` is true (the default throws
    /// ``TransportError/unavailable(_:)``). Throws ``TransportError`` once closed or failed.
    func sendImmediately(batch packets: [HCIPacket]) throws(TransportError)
    /// Closes the link and finishes `packets`. Safe to call more than once.
    func close() async
}

extension HCITransport {
    /// The default: each packet of `packets` as a batch of one.
    public var packetBatches: AsyncThrowingStream<[HCIPacket], any Error> {
        let source = packets
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    for try await packet in source { continuation.yield([packet]) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// The default: this transport's sends must be awaited.
    public var sendsImmediately: Bool { false }

    /// The default: refused (the transport's sends must be awaited with ``send(batch:)``).
    public func sendImmediately(batch packets: [HCIPacket]) throws(TransportError) {
        throw .unavailable("\(Self.self) cannot send without waiting; use send(batch:)")
    }

    /// The default: one ``send(_:)`` per packet, in order.
    public func send(batch packets: [HCIPacket]) async throws {
        for packet in packets { try await send(packet) }
    }
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
