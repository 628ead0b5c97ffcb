import Synchronization

/// The user's sequences of one subscribed characteristic. The pump that reads the link's values
/// yields into them directly (no hop to the connection's actor per value); the connection adds
/// and removes sequences. A mutex guards the list; nothing awaits while holding it.
final class NotificationFanout: Sendable {
    typealias Continuation = AsyncThrowingStream<[UInt8], any Error>.Continuation

    private let streams = Mutex<[Int: Continuation]>([:])

    /// Adds sequence `id`.
    func add(_ continuation: Continuation, id: Int) { streams.withLock { $0[id] = continuation } }

    /// Removes sequence `id`; true when it was there and was the last one.
    func remove(_ id: Int) -> Bool {
        streams.withLock { $0.removeValue(forKey: id) != nil && $0.isEmpty }
    }

    /// Gives `value` to every sequence.
    func yield(_ value: [UInt8]) {
        streams.withLock { for stream in $0.values { stream.yield(value) } }
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
