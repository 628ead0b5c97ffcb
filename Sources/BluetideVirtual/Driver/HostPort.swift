import BluetideHCI

/// The way from one controller to its host: the packets the link's core emitted for that host
/// and the host has not taken yet, and the reader waiting for them. Part of the link driver's
/// locked state; a reader takes one packet or everything queued at once (a batch).
struct HostPort: Sendable {
    /// What a waiting reader gets.
    enum Delivery: Sendable {
        case packet(HCIPacket)
        case batch([HCIPacket])
        /// The controller left: nothing more comes.
        case end
    }

    /// A reader waiting for packets.
    struct Waiter: Sendable {
        let token: UInt64
        let wantsBatch: Bool
        let continuation: CheckedContinuation<Delivery, Never>
    }

    private var queue: [HCIPacket] = []
    private var head = 0
    /// The controller left the link: after the queued packets, readers get ``Delivery/end``.
    var finished = false
    var waiter: Waiter?
    /// The reader cancelled before it could wait (one reader at a time: only the latest counts).
    var cancelledToken: UInt64?

    var isEmpty: Bool { head == queue.count }

    mutating func append(_ packet: HCIPacket) {
        queue.append(packet)
    }

    /// Takes the oldest packet (nil when empty).
    mutating func takeOne() -> HCIPacket? {
        guard head < queue.count else { return nil }
        let packet = queue[head]
        head += 1
        if head == queue.count {
            queue.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= queue.count {
            queue.removeSubrange(..<head)
            head = 0
        }
        return packet
    }

    /// Takes every queued packet, oldest first.
    mutating func takeAll() -> [HCIPacket] {
        defer { head = 0 }
        if head == 0 {
            var all: [HCIPacket] = []
            swap(&all, &queue)
            return all
        }
        let all = Array(queue[head...])
        queue.removeAll(keepingCapacity: true)
        return all
    }

    /// Takes what a reader asks for: one packet, or all of them; nil when there is nothing to
    /// take yet; ``Delivery/end`` once finished and drained.
    mutating func take(batch: Bool) -> Taken? {
        if isEmpty { return finished ? Taken(delivery: .end, count: 0) : nil }
        if batch {
            let all = takeAll()
            return Taken(delivery: .batch(all), count: all.count)
        }
        guard let one = takeOne() else { return nil }
        return Taken(delivery: .packet(one), count: 1)
    }

    /// What a reader took, and how many packets that is.
    struct Taken {
        let delivery: Delivery
        let count: Int
    }
}
