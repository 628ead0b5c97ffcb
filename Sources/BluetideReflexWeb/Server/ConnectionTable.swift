/// Which connections the dashboard holds and, when it is full, which one gives way: the protocol
/// logic of the connection cap, without I/O (``ConnectionGate`` applies its decisions to sockets).
///
/// A connection that has not sent a byte yet (*silent*) is the cheapest to drop: nobody is waiting
/// for an answer on it. Next comes one that is still sending its request's header (*partial*):
/// browsers send a header in one piece, so a header that trickles in is a slow or hostile client
/// (and ``ConnectionLimits/headerTimeout`` ends it anyway). So when the table is full, a new
/// connection takes the place of the oldest silent one, else of the oldest partial one; only when
/// every held connection is in use (requests being answered, kept-alive connections between
/// requests, live pages) is the new one refused. Thousands of idle connections, or hundreds that
/// trickle a byte at a time, therefore never lock the coach out, and a flood of real requests
/// gets a clear refusal rather than a hang.
struct ConnectionTable: Sendable {
    /// What to do with a connection that has just been accepted.
    enum Admission: Hashable, Sendable {
        /// Serve it.
        case accept
        /// Serve it, and close connection `id` (the oldest silent, else partial, one) to make room.
        case acceptEvicting(id: Int)
        /// Answer `503 Service Unavailable` and close it: every held connection is in use.
        case refuse
    }

    /// Where a held connection is, from the cap's point of view.
    enum Use: Hashable, Sendable {
        /// No byte received yet.
        case silent
        /// Sending a request's header, not all of it received yet.
        case partial
        /// A whole header received (a request being answered, a kept-alive connection, a live page).
        case inUse
    }

    private struct Entry: Sendable {
        /// Order of acceptance (smaller = older).
        var order: UInt64
        var use: Use
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
    var silentCount: Int { entries.values.filter { $0.use == .silent }.count }

    /// Connections held that are part-way through a request's header.
    var partialCount: Int { entries.values.filter { $0.use == .partial }.count }

    /// Decides on newly accepted connection `id` (and records it unless refused).
    mutating func admit(_ id: Int) -> Admission {
        accepted += 1
        var decision = Admission.accept
        if entries.count >= capacity {
            guard let victim = oldest(.silent) ?? oldest(.partial) else { return .refuse }
            entries[victim] = nil
            decision = .acceptEvicting(id: victim)
        }
        entries[id] = Entry(order: accepted, use: .silent)
        return decision
    }

    private func oldest(_ use: Use) -> Int? {
        entries.filter { $0.value.use == use }.min(by: { $0.value.order < $1.value.order })?.key
    }

    /// Connection `id` sent its first byte (of a request's header): it gives way only after the silent ones.
    mutating func spoke(_ id: Int) {
        if entries[id]?.use == .silent { entries[id]?.use = .partial }
    }

    /// Connection `id` started another request's header on a kept-alive connection.
    mutating func startedHeader(_ id: Int) {
        if entries[id] != nil { entries[id]?.use = .partial }
    }

    /// Connection `id` has sent a whole header: it is in use, never given way for newcomers.
    mutating func headerComplete(_ id: Int) {
        if entries[id] != nil { entries[id]?.use = .inUse }
    }

    /// What connection `id` is doing (nil when not held).
    func use(of id: Int) -> Use? { entries[id]?.use }

    /// Connection `id` closed (or was evicted earlier: nothing to do).
    mutating func closed(_ id: Int) {
        entries[id] = nil
    }
}
