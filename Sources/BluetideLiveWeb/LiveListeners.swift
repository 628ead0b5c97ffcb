/// The pages listening to a live feed (``LiveWebServer/stream(_:to:from:)`` sends each one's
/// stream to its WebSocket): a feed actor keeps one of these and broadcasts its messages. A new
/// page first gets the kept history, then every broadcast; ``finish()`` ends every stream.
public struct LiveListeners: Sendable {
    private var listeners: [Int: AsyncStream<String>.Continuation] = [:]
    private var nextListener = 0
    /// True once ``finish()`` was called: broadcasts are dropped, new streams end after the history.
    public private(set) var isFinished = false

    /// No listeners yet.
    public init() {}

    /// A stream for one page: `history` first, then each broadcast (keeping the newest `buffer`
    /// messages for a page that reads slowly). `forget` is called with the listener's id when
    /// the page's stream ends; the owner then calls ``forget(_:)``.
    public mutating func listen(
        history: [String], buffer: Int, forget: @escaping @Sendable (Int) -> Void
    ) -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingNewest(buffer))
        for message in history { continuation.yield(message) }
        if isFinished {
            continuation.finish()
            return stream
        }
        let id = nextListener
        nextListener += 1
        listeners[id] = continuation
        continuation.onTermination = { _ in forget(id) }
        return stream
    }

    /// Sends `message` to every page listening.
    public func broadcast(_ message: String) {
        for listener in listeners.values { listener.yield(message) }
    }

    /// Ends every page's stream; later broadcasts are dropped.
    public mutating func finish() {
        isFinished = true
        for listener in listeners.values { listener.finish() }
        listeners = [:]
    }

    /// Drops the listener `id` (its stream ended).
    public mutating func forget(_ id: Int) { listeners[id] = nil }
}
