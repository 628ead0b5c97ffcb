import Synchronization

/// Fans a connection's events out to every ``Connection/events`` sequence. Each new sequence
/// starts with the connection's current status, so a late subscriber knows where things stand.
final class EventHub: Sendable {
    private struct State {
        var status: ConnectionEvent = .connected
        var subscribers: [Int: AsyncStream<ConnectionEvent>.Continuation] = [:]
        var nextID = 0
        var finished = false
    }

    private let state = Mutex(State())

    /// A new sequence: the current status first, then every later event; it ends when the
    /// connection is closed for good.
    func stream() -> AsyncStream<ConnectionEvent> {
        let (stream, continuation) = AsyncStream<ConnectionEvent>.makeStream(bufferingPolicy: .unbounded)
        let id: Int? = state.withLock { state in
            continuation.yield(state.status)
            if state.finished {
                continuation.finish()
                return nil
            }
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = continuation
            return id
        }
        if let id {
            continuation.onTermination = { [weak self] _ in
                _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
            }
        }
        return stream
    }

    /// Sends `event` to every sequence and records the status it implies.
    func emit(_ event: ConnectionEvent) {
        state.withLock { state in
            guard !state.finished else { return }
            switch event {
            case .connected, .reconnected: state.status = .connected
            default: state.status = event
            }
            for continuation in state.subscribers.values { continuation.yield(event) }
        }
    }

    /// Ends every sequence (the connection is closed for good).
    func finish() {
        let ended = state.withLock { state -> [AsyncStream<ConnectionEvent>.Continuation] in
            state.finished = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for continuation in ended { continuation.finish() }
    }
}
