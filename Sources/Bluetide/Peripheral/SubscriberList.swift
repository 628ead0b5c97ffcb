import Synchronization

/// The subscribers of one kind of peripheral event: each ``makeStream()`` registers a new
/// `AsyncStream` that sees every later ``yield(_:)`` (the newest `bufferSize` while not read),
/// and a stream that ends (its consumer stopped, or the task was cancelled) unregisters itself.
/// ``Peripheral/connections``, ``Peripheral/subscriptionChanges``,
/// ``Peripheral/authorizationRequests``, ``Characteristic/writes`` and
/// ``Characteristic/subscriptions`` are each one of these.
final class SubscriberList<Element: Sendable>: Sendable {
    private let bufferSize: Int
    private let state = Mutex<State>(State())

    private struct State {
        var continuations: [Int: AsyncStream<Element>.Continuation] = [:]
        var next = 0
    }

    /// Subscribers whose streams keep the newest `bufferSize` elements not yet read.
    init(bufferSize: Int) { self.bufferSize = bufferSize }

    /// A new subscription: a stream of every element yielded from now on.
    func makeStream() -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: .bufferingNewest(bufferSize))
        let id = state.withLock { state in
            let id = state.next
            state.next += 1
            state.continuations[id] = continuation
            return id
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    /// Whether nobody is subscribed now.
    var isEmpty: Bool { state.withLock { $0.continuations.isEmpty } }

    /// Hands `element` to every current subscriber; returns how many there were.
    @discardableResult
    func yield(_ element: Element) -> Int {
        let continuations = state.withLock { Array($0.continuations.values) }
        for continuation in continuations { continuation.yield(element) }
        return continuations.count
    }

    /// Ends every subscriber's stream.
    func finishAll() {
        let continuations = state.withLock { state in
            defer { state.continuations.removeAll() }
            return Array(state.continuations.values)
        }
        for continuation in continuations { continuation.finish() }
    }
}
