import BluetideCore
import BluetideHCI

/// Something the link does later: an over-the-air delivery held back by the link's latency, the
/// completion that follows it, a repeat of an advertising set, or the end of a link-layer
/// procedure that takes connection intervals on a real radio.
enum LinkAction: Sendable, Equatable {
    /// A packet arrives at a controller's host (ACL only while its connection still exists).
    case deliver(controller: Int, packet: HCIPacket)
    /// The sender's controller reports a packet on `handle` as completed (its buffer is free).
    case completed(controller: Int, handle: UInt16)
    /// One advertising event of a set, while the set is still in the same generation.
    case advertise(controller: Int, set: UInt8, generation: Int)
    /// A link-layer procedure of a connection ends.
    case procedure(connection: Int, LinkProcedure)
}

/// A link-layer procedure started by a host command; its completion event comes at least one
/// connection interval after the command's Command Status (or Command Complete).
enum LinkProcedure: Sendable, Equatable {
    /// LE Read Remote Features: the requester's host gets the peer's LE features.
    case remoteFeatures(requester: Int)
    /// Read Remote Version Information: the requester's host gets the peer's version.
    case remoteVersion(requester: Int)
    /// LE Connection Update: both hosts get the new parameters.
    case connectionUpdate(interval: UInt16, latency: UInt16, supervisionTimeout: UInt16)
    /// LE Set PHY: the requester (and the peer, when anything changed) get the PHYs.
    case phyUpdate(requester: Int, tx: LEPHY, rx: LEPHY)
    /// LE Set Data Length: both hosts get Data Length Change with the octets each side sends.
    case dataLength(requester: Int, octets: UInt16)
}

/// The link's timeline: actions in the order they fall due (equal times keep the order they
/// were added in). Pure state: the link's driver asks for ``nextDeadline``, sleeps until then,
/// and takes what is due with ``takeDue(now:)``.
struct LinkSchedule: Sendable {
    struct Item: Sendable {
        let due: ContinuousClock.Instant
        let order: UInt64
        let action: LinkAction
    }

    private(set) var items: [Item] = []
    private var added: UInt64 = 0

    /// When the earliest action falls due, nil when nothing is scheduled.
    var nextDeadline: ContinuousClock.Instant? { items.first?.due }

    /// Number of actions waiting.
    var count: Int { items.count }

    /// Adds an action due at `due` (after every action already due at or before that time).
    mutating func add(_ action: LinkAction, at due: ContinuousClock.Instant) {
        added &+= 1
        let item = Item(due: due, order: added, action: action)
        // Binary search for the first item due later than `due`.
        var low = 0
        var high = items.count
        while low < high {
            let middle = (low + high) / 2
            if items[middle].due <= due { low = middle + 1 } else { high = middle }
        }
        items.insert(item, at: low)
    }

    /// Removes and returns, in order, every action due at or before `now`.
    mutating func takeDue(now: ContinuousClock.Instant) -> [LinkAction] {
        var end = 0
        while end < items.count, items[end].due <= now { end += 1 }
        guard end > 0 else { return [] }
        let due = items[0..<end].map(\.action)
        items.removeFirst(end)
        return due
    }

    /// The latest time an action matching `predicate` is due, if any.
    func lastDue(where predicate: (LinkAction) -> Bool) -> ContinuousClock.Instant? {
        items.last { predicate($0.action) }?.due
    }

    /// Drops every action matching `predicate`.
    mutating func removeAll(where predicate: (LinkAction) -> Bool) {
        items.removeAll { predicate($0.action) }
    }
}
