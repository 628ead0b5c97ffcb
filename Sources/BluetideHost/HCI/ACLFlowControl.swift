import BluetideHCI
import BluetideSupport

/// Host-to-controller ACL flow control, as a pure state machine: fragments L2CAP PDUs to the
/// controller's buffer length and sends no more packets than the controller has buffers.
///
/// - Credits (the controller's ACL buffer count) and the fragment length come from LE Read
///   Buffer Size, or from Read Buffer Size when LE reports 0 (shared buffers): see ``ACLBufferSize``.
/// - Each ACL packet sent takes a credit; Number Of Completed Packets gives credits back
///   (never more than that handle has outstanding, so a bogus event cannot inflate them).
/// - Disconnection Complete gives back every credit of its handle (the controller drops ACL for
///   a dead handle without reporting it completed) and drops that handle's queued fragments.
/// - Out of credits, fragments wait in a queue per handle, in order; handles with waiting data
///   are served in turn, so one busy link cannot starve another.
///
/// First fragments use PB 0b00 (first non-automatically-flushable), the only start flag the Core
/// specification allows from host to controller on an LE-U link (0b10 is for BR/EDR or for
/// controller-to-host); continuations use 0b01. Bumble accepts either start flag.
public struct ACLFlowControl: Sendable {
    /// Maximum data bytes per ACL packet (the controller's buffer length).
    public let bufferLength: Int
    /// The controller's buffer count: credits when nothing is outstanding.
    public let totalCredits: Int
    /// Packets the host may send now.
    public private(set) var availableCredits: Int
    private var outstanding: [UInt16: Int] = [:]
    /// Fragments waiting per handle. A handle's queue keeps its storage while the link lives, so
    /// a steady stream queues and sends without allocating.
    private var queues: [UInt16: FragmentQueue] = [:]
    /// Handles with queued fragments, in service order.
    private var rotation: [UInt16] = []

    /// A flow controller for `bufferSize` (length clamped to 1...65535, count to at least 1).
    public init(bufferSize: ACLBufferSize) {
        bufferLength = min(max(bufferSize.packetLength, 1), 0xFFFF)
        totalCredits = max(bufferSize.packetCount, 1)
        availableCredits = totalCredits
    }

    /// Packets sent on `handle` and not yet reported completed.
    public func outstandingPackets(on handle: UInt16) -> Int { outstanding[handle & 0x0FFF] ?? 0 }
    /// Fragments waiting for a credit on `handle`.
    public func queuedFragments(on handle: UInt16) -> Int { queues[handle & 0x0FFF]?.count ?? 0 }

    /// A first-in first-out queue of fragments: an array read from a moving head, so taking the
    /// first is O(1) and in place; the array is reset (keeping its capacity) when it empties and
    /// compacted when the taken part outweighs the rest.
    private struct FragmentQueue: Sendable {
        private var items: [HCIPacket] = []
        private var head = 0

        var count: Int { items.count - head }
        var isEmpty: Bool { head == items.count }

        mutating func append(_ packet: HCIPacket) { items.append(packet) }

        /// Takes the first fragment, or nil when the queue is empty.
        mutating func removeFirstIfAny() -> HCIPacket? {
            guard head < items.count else { return nil }
            let packet = items[head]
            head += 1
            if head == items.count {
                items.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 64, head * 2 >= items.count {
                items.removeFirst(head)
                head = 0
            }
            return packet
        }
    }

    /// Splits `pdu` (a whole L2CAP PDU, basic header included) into ACL packets for `handle`.
    /// Pure: no credits are taken.
    public func fragments(of pdu: [UInt8], handle: UInt16) -> [HCIPacket] {
        var packets: [HCIPacket] = []
        packets.reserveCapacity((pdu.count + bufferLength - 1) / bufferLength)
        Self.forEachFragment(of: pdu, handle: handle & 0x0FFF, length: bufferLength) { packets.append($0) }
        return packets
    }

    /// Hands `body` the ACL packets of `pdu`, in order, each at most `length` bytes. One
    /// fragment (the usual case with LE Data Length) is the PDU itself, not a copy.
    private static func forEachFragment(of pdu: [UInt8], handle: UInt16, length: Int, _ body: (HCIPacket) -> Void) {
        guard pdu.count > length else {
            return body(.acl(handle: handle, boundary: .firstNonFlushable, broadcast: 0, data: pdu))
        }
        var start = 0
        while start < pdu.count {
            let end = min(start + length, pdu.count)
            body(.acl(
                handle: handle, boundary: start == 0 ? .firstNonFlushable : .continuing, broadcast: 0,
                data: Array(pdu[start..<end])))
            start = end
        }
    }

    /// Fragments `pdu` and returns the packets that may be sent now; the rest wait for credits.
    public mutating func send(_ pdu: [UInt8], on handle: UInt16) -> [HCIPacket] {
        var sent: [HCIPacket] = []
        send(pdu, on: handle, into: &sent)
        return sent
    }

    /// Fragments `pdu` and appends the packets that may be sent now to `sent` (no array of its
    /// own per PDU); the rest wait for credits.
    public mutating func send(_ pdu: [UInt8], on handle: UInt16, into sent: inout [HCIPacket]) {
        let handle = handle & 0x0FFF
        // The queue is reached in place through its index (`queues[handle, default:]` and
        // `queues[handle]?` allocate an accessor frame per access).
        if queues.index(forKey: handle) == nil { queues[handle] = FragmentQueue() }
        let length = bufferLength
        let wasEmpty = queues.inPlace(handle) { queue -> Bool in
            let wasEmpty = queue.isEmpty
            // Each fragment goes straight into the queue (no array of fragments per PDU).
            Self.forEachFragment(of: pdu, handle: handle, length: length) { queue.append($0) }
            return wasEmpty
        } ?? true
        if wasEmpty { rotation.append(handle) }
        drain(into: &sent)
    }

    /// Feeds a controller event: credits from Number Of Completed Packets, reclaim on a
    /// successful Disconnection Complete. Returns the packets the freed credits let through;
    /// other events change nothing.
    public mutating func handle(_ event: HCIEvent) -> [HCIPacket] {
        var sent: [HCIPacket] = []
        handle(event, into: &sent)
        return sent
    }

    /// Like ``handle(_:)``, appending the packets the freed credits let through to `sent`.
    public mutating func handle(_ event: HCIEvent, into sent: inout [HCIPacket]) {
        switch event {
        case let .numberOfCompletedPackets(completed):
            for entry in completed.entries {
                let handle = entry.handle & 0x0FFF
                let returned = min(Int(entry.completedPackets), outstanding[handle] ?? 0)
                guard returned > 0 else { continue }
                outstanding[handle] = (outstanding[handle] ?? 0) - returned
                if outstanding[handle] == 0 { outstanding[handle] = nil }
                availableCredits = min(availableCredits + returned, totalCredits)
            }
        case let .disconnectionComplete(done):
            guard done.status.isSuccess else { return }
            disconnected(done.handle)
        default:
            return
        }
        drain(into: &sent)
    }

    /// Forgets `handle`: its outstanding packets' credits come back and its queued fragments are
    /// dropped. Returns how many queued fragments were dropped.
    @discardableResult
    public mutating func disconnected(_ handle: UInt16) -> Int {
        let handle = handle & 0x0FFF
        if let count = outstanding.removeValue(forKey: handle) {
            availableCredits = min(availableCredits + count, totalCredits)
        }
        let dropped = queues.removeValue(forKey: handle)?.count ?? 0
        rotation.removeAll { $0 == handle }
        return dropped
    }

    /// Sends what credits allow of the fragments still queued (after ``disconnected(_:)`` freed
    /// credits that other handles can use).
    public mutating func sendQueued() -> [HCIPacket] {
        var sent: [HCIPacket] = []
        drain(into: &sent)
        return sent
    }

    /// Sends queued fragments while credits last, one per handle in turn.
    private mutating func drain(into sent: inout [HCIPacket]) {
        while availableCredits > 0, !rotation.isEmpty {
            let handle = rotation.removeFirst()
            // Reached in place through its index: no copy of the queue, no accessor frame.
            guard let (packet, more) = queues.inPlace(handle, { queue in queue.removeFirstIfAny().map { ($0, !queue.isEmpty) } }) ?? nil
            else { continue }
            sent.append(packet)
            availableCredits -= 1
            outstanding[handle, default: 0] += 1
            if more { rotation.append(handle) }
        }
    }
}
