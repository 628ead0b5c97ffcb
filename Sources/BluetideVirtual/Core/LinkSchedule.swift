import BluetideBase
import BluetideHCI

/// Time on a virtual link: how long after the link was created something happens. The core
/// never reads a clock; its driver passes this in with every input.
typealias LinkTime = Duration

/// Something the link does later: an over-the-air delivery held back by the link's latency, the
/// completion of a packet lost in the air, a repeat of an advertising set, or the end of a
/// link-layer procedure that takes connection intervals on a real radio.
enum LinkAction: Sendable, Equatable {
    /// A packet arrives at a controller's host (ACL only while its connection still exists).
    /// `completes` is the sender's packet this delivery finishes, reported completed once the
    /// receiving host has taken it.
    case deliver(controller: Int, packet: HCIPacket, completes: SentPacket? = nil)
    /// The sender's controller reports a packet on `handle` as completed (a packet lost in the
    /// air: its buffer is free although nothing arrived).
    case completed(controller: Int, handle: UInt16)
    /// One advertising event of a set, while the set is still in the same generation.
    case advertise(controller: Int, set: UInt8, generation: Int)
    /// A link-layer procedure of a connection ends.
    case procedure(connection: Int, LinkProcedure)
}

/// One ACL packet a host gave its controller: who sent it on which handle. It is reported with
/// Number Of Completed Packets once the peer's host has taken the data it carried.
struct SentPacket: Sendable, Equatable {
    let sender: Int
    let handle: UInt16
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
    /// LL_ENC_REQ reached the peripheral: its host is asked for the long-term key.
    case keyRequest
    /// The peripheral's host answered; the start (or refresh) of encryption ends as `outcome`.
    case encryptionEnd(EncryptionOutcome)
}

/// How an encryption start or refresh ends on the air.
enum EncryptionOutcome: Sendable, Equatable {
    /// Both sides hold the same key: Encryption Change (or Key Refresh Complete) on both.
    case started
    /// The peripheral's host had no key: LL_REJECT_IND with 0x06 PIN or Key Missing.
    case rejected
    /// The keys differ: the first encrypted PDU fails its MIC and the link drops with 0x3D.
    case keysDiffer
    /// The peer's controller has no LE encryption (LL_UNKNOWN_RSP): 0x1A to the central.
    case unsupportedByPeer
}

/// The link's timeline: actions in the order they fall due (equal times keep the order they
/// were added in). Pure state: the link's driver asks for ``nextDeadline``, sleeps until then,
/// and takes what is due with ``takeDue(now:)``.
struct LinkSchedule: Sendable {
    struct Item: Sendable {
        let due: LinkTime
        let order: UInt64
        let action: LinkAction
    }

    /// Items from `head` on are waiting, sorted by due time then insertion order; the ones
    /// before `head` were taken and are dropped in bulk (no O(n) shift per take).
    private var items: [Item] = []
    private var head = 0
    private var added: UInt64 = 0

    /// When the earliest action falls due, nil when nothing is scheduled.
    var nextDeadline: LinkTime? { head < items.count ? items[head].due : nil }

    /// Number of actions waiting.
    var count: Int { items.count - head }

    /// Adds an action due at `due` (after every action already due at or before that time).
    mutating func add(_ action: LinkAction, at due: LinkTime) {
        added &+= 1
        let item = Item(due: due, order: added, action: action)
        // Most additions are the latest so far (deliveries in order): append without a search.
        if items.last.map({ $0.due <= due }) ?? true {
            items.append(item)
            return
        }
        // Binary search for the first waiting item due later than `due`.
        var low = head
        var high = items.count
        while low < high {
            let middle = (low + high) / 2
            if items[middle].due <= due { low = middle + 1 } else { high = middle }
        }
        items.insert(item, at: low)
    }

    /// Removes and returns, in order, every action due at or before `now`.
    mutating func takeDue(now: LinkTime) -> [LinkAction] {
        var end = head
        while end < items.count, items[end].due <= now { end += 1 }
        guard end > head else { return [] }
        let due = items[head..<end].map(\.action)
        head = end
        compact()
        return due
    }

    /// The latest time an action matching `predicate` is due, if any.
    func lastDue(where predicate: (LinkAction) -> Bool) -> LinkTime? {
        items[head...].last { predicate($0.action) }?.due
    }

    /// Drops every action matching `predicate`.
    mutating func removeAll(where predicate: (LinkAction) -> Bool) {
        items.removeSubrange(..<head)
        head = 0
        items.removeAll { predicate($0.action) }
    }

    /// Frees the taken prefix once it is at least half the storage.
    private mutating func compact() {
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 32, head * 2 >= items.count {
            items.removeSubrange(..<head)
            head = 0
        }
    }
}
