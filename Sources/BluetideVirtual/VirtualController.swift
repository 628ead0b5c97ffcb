import BluetideCore
import BluetideHCI

/// One virtual LE controller on a ``VirtualLink``, speaking HCI to one host.
///
/// The host side hands packets in with ``send(_:)`` (awaits until the controller has handled
/// the packet) or ``receive(_:)`` (returns at once; packets are handled in call order; do not
/// mix the two), and reads the controller's events and ACL data from ``packets``.
/// All state lives in the link's actor; this is a `Sendable` handle to it.
public final class VirtualController: Sendable {
    /// The radio this controller is attached to.
    public let link: VirtualLink
    /// Identifier of the controller on its link (also its attach order, from 1).
    public let id: Int
    /// The controller's public address (unique on its link; Read BD_ADDR returns it).
    public let publicAddress: BluetoothAddress
    /// Controller-to-host packets (events and ACL data), in order. Ends when the host detaches.
    public let packets: AsyncStream<HCIPacket>

    private let input: AsyncStream<HCIPacket>.Continuation

    init(link: VirtualLink, id: Int, publicAddress: BluetoothAddress, packets: AsyncStream<HCIPacket>) {
        self.link = link
        self.id = id
        self.publicAddress = publicAddress
        self.packets = packets
        let (inputStream, input) = AsyncStream<HCIPacket>.makeStream()
        self.input = input
        // The pump keeps the order of packets given to `receive(_:)`. When the handle goes away
        // (or the host detaches), the input ends and the controller is detached from the link.
        Task { [link, id] in
            for await packet in inputStream {
                await link.handleFromHost(id, packet)
            }
            await link.detach(id)
        }
    }

    /// Attaches a new controller to the link with this name (created on first use): what a
    /// `virtual:NAME` transport opens.
    public static func attach(toLinkNamed name: String = "default") async -> VirtualController {
        await VirtualLink.named(name).attachController()
    }

    deinit {
        input.finish()
    }

    /// Hands one host-to-controller packet in and waits until the controller has handled it
    /// (its immediate answers are already in ``packets`` when this returns).
    public func send(_ packet: HCIPacket) async {
        await link.handleFromHost(id, packet)
    }

    /// Hands one host-to-controller packet in without waiting; packets are handled in the order
    /// of these calls.
    public func receive(_ packet: HCIPacket) {
        input.yield(packet)
    }

    /// The host went away: the controller's connections end as if by supervision timeout (each
    /// peer gets Disconnection Complete with reason 0x08), advertising and scanning stop, the
    /// controller leaves the link and ``packets`` ends.
    public func detachHost() async {
        input.finish()
        await link.detach(id)
    }

    /// Clears all controller state like HCI Reset (connections end for the peers with 0x08),
    /// without sending anything to the host.
    public func reset() async {
        await link.resetController(id)
    }
}
