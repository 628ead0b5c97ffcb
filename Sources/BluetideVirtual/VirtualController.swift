import BluetideBase
import BluetideHCI

/// One virtual LE controller on a ``VirtualLink``, speaking HCI to one host.
///
/// The host hands packets in with ``send(_:)``, ``receive(_:)`` or ``receive(batch:)``: each is
/// handled at once, in call order (its immediate answers are queued for the host when the call
/// returns). The host reads the controller's events and ACL data with ``packets`` (one at a
/// time) or ``packetBatches`` (everything queued, at once) — one reader, one of the two. A
/// packet counts as delivered to this host when it is read: only then does the peer's
/// controller report its ACL data completed. All state lives in the link; this is a
/// `Sendable` handle to it, and when the last reference goes the controller leaves the link.
public final class VirtualController: Sendable {
    /// The radio this controller is attached to.
    public let link: VirtualLink
    /// Identifier of the controller on its link (also its attach order, from 1).
    public let id: Int
    /// The controller's public address (unique on its link; Read BD_ADDR returns it).
    public let publicAddress: BluetoothAddress
    /// Controller-to-host packets (events and ACL data), in order. Ends when the host detaches.
    public let packets: AsyncStream<HCIPacket>
    /// Controller-to-host packets in order, as batches: each element is everything queued when
    /// the reader asked (at least one packet). Ends when the host detaches.
    public let packetBatches: AsyncStream<[HCIPacket]>

    init(link: VirtualLink, id: Int, publicAddress: BluetoothAddress) {
        self.link = link
        self.id = id
        self.publicAddress = publicAddress
        // Created once; each element is pulled from the link when the reader asks (no task).
        packets = AsyncStream(unfolding: { await link.nextPacket(for: id) })
        packetBatches = AsyncStream(unfolding: { await link.nextBatch(for: id) })
    }

    /// Attaches a new controller to the link with this name (created on first use): what a
    /// `virtual:NAME` transport opens. `publicAddress` chooses its public address (default
    /// `00:00:00:00:00:NN`), e.g. the one of a captured device it stands in for.
    public static func attach(toLinkNamed name: String = "default", publicAddress: BluetoothAddress? = nil) async -> VirtualController {
        await VirtualLink.named(name).attachController(publicAddress: publicAddress)
    }

    deinit {
        link.release(id)
    }

    /// Hands one host-to-controller packet in; when this returns the controller has handled it
    /// (its immediate answers are already queued in ``packets``).
    public func send(_ packet: HCIPacket) async {
        link.fromHost(id, packet)
    }

    /// Hands one host-to-controller packet in without suspending; packets are handled in the
    /// order of these calls.
    public func receive(_ packet: HCIPacket) {
        link.fromHost(id, packet)
    }

    /// Hands several host-to-controller packets in, handled in order under one turn of the link.
    public func receive(batch packets: [HCIPacket]) {
        link.fromHost(id, batch: packets)
    }

    /// The next controller-to-host packet (what ``packets`` yields); nil once the host detached.
    public func nextPacket() async -> HCIPacket? {
        await link.nextPacket(for: id)
    }

    /// Every controller-to-host packet queued now, waiting for at least one (what
    /// ``packetBatches`` yields); nil once the host detached.
    public func nextBatch() async -> [HCIPacket]? {
        await link.nextBatch(for: id)
    }

    /// The host went away: the controller's connections end as if by supervision timeout (each
    /// peer gets Disconnection Complete with reason 0x08), advertising and scanning stop, the
    /// controller leaves the link and ``packets`` ends.
    public func detachHost() async {
        link.detach(id)
    }

    /// Clears all controller state like HCI Reset (connections end for the peers with 0x08),
    /// without sending anything to the host.
    public func reset() async {
        link.reset(id)
    }
}
