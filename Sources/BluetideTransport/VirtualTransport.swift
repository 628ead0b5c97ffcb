import BluetideBase
import BluetideHCI
import BluetideVirtual
import Synchronization

/// A transport to an in-process ``VirtualController`` on a named ``VirtualLink``: what the
/// `virtual` and `virtual:NAME` specs open. Hosts in one process that open the same name share
/// one radio; closing the transport detaches the controller (its peers see a supervision
/// timeout, reason 0x08).
///
/// Nothing runs per packet: sending hands the packets to the link, which handles them at once;
/// reading pulls from the controller (``packetBatches`` takes everything queued in one go).
public final class VirtualTransport: HCITransport {
    /// The controller this transport talks to (for fault injection in tests: `controller.link`).
    public let controller: VirtualController
    public let packets: AsyncThrowingStream<HCIPacket, any Error>
    public let packetBatches: AsyncThrowingStream<[HCIPacket], any Error>
    private let closed = Mutex(false)

    /// Attaches a new controller to the link named `linkName`, with `publicAddress` as its
    /// public address when given (see ``VirtualController/attach(toLinkNamed:publicAddress:)``).
    public static func attach(toLinkNamed linkName: String = "default", publicAddress: BluetoothAddress? = nil) async -> VirtualTransport {
        VirtualTransport(controller: await VirtualController.attach(toLinkNamed: linkName, publicAddress: publicAddress))
    }

    /// A transport to an existing controller.
    public init(controller: VirtualController) {
        self.controller = controller
        packets = AsyncThrowingStream(unfolding: { await controller.nextPacket() })
        packetBatches = AsyncThrowingStream(unfolding: { await controller.nextBatch() })
    }

    public func send(_ packet: HCIPacket) async throws {
        try checkOpen()
        controller.receive(packet)
    }

    public func send(batch packets: [HCIPacket]) async throws {
        try sendImmediately(batch: packets)
    }

    /// True: the link handles a batch where it is handed in.
    public var sendsImmediately: Bool { true }

    public func sendImmediately(batch packets: [HCIPacket]) throws(TransportError) {
        try checkOpen()
        controller.receive(batch: packets)
    }

    private func checkOpen() throws(TransportError) {
        guard !closed.withLock({ $0 }) else { throw TransportError.closed("virtual controller \(controller.id)") }
    }

    public func close() async {
        let wasClosed = closed.withLock { value in
            defer { value = true }
            return value
        }
        guard !wasClosed else { return }
        await controller.detachHost()
    }
}
