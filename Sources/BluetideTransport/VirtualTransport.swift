import BluetideHCI
import BluetideVirtual
import Synchronization

/// A transport to an in-process ``VirtualController`` on a named ``VirtualLink``: what the
/// `virtual` and `virtual:NAME` specs open. Hosts in one process that open the same name share
/// one radio; closing the transport detaches the controller (its peers see a supervision
/// timeout, reason 0x08).
public final class VirtualTransport: HCITransport {
    /// The controller this transport talks to (for fault injection in tests: `controller.link`).
    public let controller: VirtualController
    public let packets: AsyncThrowingStream<HCIPacket, any Error>
    private let closed = Mutex(false)
    private let finish: AsyncThrowingStream<HCIPacket, any Error>.Continuation
    private let pump: Task<Void, Never>

    /// Attaches a new controller to the link named `linkName`.
    public static func attach(toLinkNamed linkName: String = "default") async -> VirtualTransport {
        VirtualTransport(controller: await VirtualController.attach(toLinkNamed: linkName))
    }

    /// A transport to an existing controller.
    public init(controller: VirtualController) {
        self.controller = controller
        let (stream, continuation) = AsyncThrowingStream<HCIPacket, any Error>.makeStream()
        packets = stream
        finish = continuation
        let source = controller.packets
        pump = Task {
            for await packet in source { continuation.yield(packet) }
            continuation.finish()
        }
    }

    public func send(_ packet: HCIPacket) async throws {
        guard !closed.withLock({ $0 }) else { throw TransportError.closed("virtual controller \(controller.id)") }
        controller.receive(packet)
    }

    public func close() async {
        let wasClosed = closed.withLock { value in
            defer { value = true }
            return value
        }
        guard !wasClosed else { return }
        await controller.detachHost()
        pump.cancel()
        finish.finish()
    }
}
