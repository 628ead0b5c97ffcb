/// Which connections the dashboard holds and, when it is full, which one gives way: the protocol
/// logic of the connection cap, without I/O (``ConnectionGate`` applies its decisions to sockets).
///
/// A connection that has not sent a byte yet (*silent*) is the cheapest to drop: nobody is waiting
/// for an answer on it. So when the table is full, a new connection takes the place of the oldest
/// silent one; only when every held connection has spoken (requests in flight, keep-alive
/// connections, live pages) is the new one refused. Thousands of idle connections therefore never
/// lock the coach out, and a flood of requests gets a clear refusal rather than a hang.
struct ConnectionTable: Sendable {
    /// What to do with a connection that has just been accepted.
    enum Admission: Hashable, Sendable {
        /// Serve it.
        case accept
        /// Serve it, and close connection `id` (the oldest silent one) to make room.
        case acceptEvicting(id: Int)
        /// Answer `503 Service Unavailable` and close it: every held connection is in use.
        case refuse
    }

    private struct Entry: Sendable {
        /// Order of acceptance (smaller = older).
        var order: UInt64
        /// True once the peer sent a byte.
        var spoke: Bool
    }

    /// Connections held at most.
    let capacity: Int
    private var entries: [Int: Entry] = [:]
    private var accepted: UInt64 = 0

    /// A table holding at most `capacity` (≥ 1) connections.
    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Connections held now.
    var count: Int { entries.count }

    /// Connections held that have not sent a byte.
    var silentCount: Int { entries.values.filter { !$0.spoke }.count }

    /// Decides on newly accepted connection `id` (and records it unless refused).
    mutating func admit(_ id: Int) -> Admission {
        accepted += 1
        var decision = Admission.accept
        if entries.count >= capacity {
            guard let oldest = entries.filter({ !$0.value.spoke }).min(by: { $0.value.order < $1.value.order })?.key else {
                return .refuse
            }
            entries[oldest] = nil
            decision = .acceptEvicting(id: oldest)
        }
        entries[id] = Entry(order: accepted, spoke: false)
        return decision
    }

    /// Connection `id` sent its first byte: it is no longer given way for newcomers.
    mutating func spoke(_ id: Int) {
        entries[id]?.spoke = true
    }

    /// Connection `id` closed (or was evicted earlier: nothing to do).
    mutating func closed(_ id: Int) {
        entries[id] = nil
    }
}
