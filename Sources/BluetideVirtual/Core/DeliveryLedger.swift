/// What one controller's host has been given and taken, so a sender's packet is reported
/// completed only once the peer's host has taken the data it carried (not when it was queued
/// for that host): the sender's buffer credits then pace it at the receiver's speed, and nothing
/// between the two hosts grows without bound.
///
/// Every packet the core emits to the host gets the next sequence number; the driver reports
/// how many the host took, in order. Survives HCI Reset (the host connection stays).
struct DeliveryLedger: Sendable {
    /// Packets emitted to this host so far.
    private(set) var emitted: UInt64 = 0
    /// Packets this host has taken so far (≤ ``emitted``).
    private(set) var taken: UInt64 = 0
    /// Sender packets finished by a delivery, in emission order. Entries before `head` are gone.
    private var awaiting: [Awaited] = []
    private var head = 0

    /// Counts one packet emitted to the host; returns its sequence number.
    mutating func emit() -> UInt64 {
        defer { emitted &+= 1 }
        return emitted
    }

    /// The packet with sequence `sequence` (just emitted) finishes `packet` of another controller.
    mutating func expect(_ packet: SentPacket, at sequence: UInt64) {
        awaiting.append(Awaited(sequence: sequence, packet: packet))
    }

    /// The host took `count` more packets: returns the sent packets now fully delivered, in order.
    mutating func take(_ count: Int, into completed: inout [SentPacket]) {
        taken = min(taken &+ UInt64(max(count, 0)), emitted)
        while head < awaiting.count, awaiting[head].sequence < taken {
            completed.append(awaiting[head].packet)
            head += 1
        }
        if head == awaiting.count {
            awaiting.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 32, head * 2 >= awaiting.count {
            awaiting.removeSubrange(..<head)
            head = 0
        }
    }

    /// Forgets sent packets matching `predicate` (their connection ended: no completion).
    mutating func forget(where predicate: (SentPacket) -> Bool) {
        awaiting.removeSubrange(..<head)
        head = 0
        awaiting.removeAll { predicate($0.packet) }
    }

    /// Packets emitted to this host and not taken yet.
    var unread: UInt64 { emitted - taken }

    /// A sender's packet and the sequence number of the last packet that carries it.
    struct Awaited: Sendable {
        let sequence: UInt64
        let packet: SentPacket
    }

    /// Number of sent packets still waiting for this host to take their data.
    var waiting: Int { awaiting.count - head }
}
