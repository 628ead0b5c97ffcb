import Synchronization

/// The user's sequences of one subscribed characteristic. The pump that reads the link's values
/// yields into them directly (no hop to the connection's actor per value); the connection adds
/// and removes sequences. A mutex guards the list; nothing awaits while holding it.
final class NotificationFanout: Sendable {
    typealias Continuation = AsyncThrowingStream<[UInt8], any Error>.Continuation

    private let streams = Mutex<[Int: Continuation]>([:])
    /// Counts values a full sequence gave up (the connection's ``Connection/droppedNotifications``).
    private let drops: NotificationDrops

    init(drops: NotificationDrops) {
        self.drops = drops
    }

    /// Adds sequence `id`.
    func add(_ continuation: Continuation, id: Int) { streams.withLock { $0[id] = continuation } }

    /// Removes sequence `id`; true when it was there and was the last one.
    func remove(_ id: Int) -> Bool {
        streams.withLock { $0.removeValue(forKey: id) != nil && $0.isEmpty }
    }

    /// Gives `value` to every sequence; one whose buffer is full gives up a value (which one,
    /// its ``NotificationBuffering`` says), counted.
    func yield(_ value: [UInt8]) {
        let dropped = streams.withLock { streams in
            var dropped = 0
            for stream in streams.values {
                if case .dropped = stream.yield(value) { dropped += 1 }
            }
            return dropped
        }
        if dropped > 0 { drops.add(dropped) }
    }

    /// Ends every sequence: cleanly when `error` is nil.
    func finish(throwing error: (any Error)?) {
        let ended = streams.withLock { streams in
            defer { streams = [:] }
            return Array(streams.values)
        }
        for stream in ended {
            if let error { stream.finish(throwing: error) } else { stream.finish() }
        }
    }
}

/// Values given up by a connection's full notification sequences, since it was made.
final class NotificationDrops: Sendable {
    private let count = Mutex(0)

    func add(_ dropped: Int) { count.withLock { $0 += dropped } }

    var total: Int { count.withLock { $0 } }
}
