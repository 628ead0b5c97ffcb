import BluetideLiveWeb
import BluetideRide
import Foundation

/// The ride's samples for the live page: each as one JSON text message (the `sample` record of
/// `bluetide`'s JSON schema, ``RideView/json(_:startedAt:)``), the last few minutes kept so a page that connects late draws its chart at once.
public actor RideLiveFeed {
    /// How many samples a page that connects gets first (one a second: five minutes).
    public nonisolated let historyLength: Int
    /// The wall clock at ride time 0 (the samples' `time.utc`).
    public nonisolated let startedAt: Date
    private var history: [String] = []
    private var listeners = LiveListeners()

    /// A feed keeping the last `historyLength` samples of a ride that started at `startedAt`.
    public init(historyLength: Int = 300, startedAt: Date = Date()) {
        self.historyLength = max(historyLength, 1)
        self.startedAt = startedAt
    }

    /// Sends `sample` to every page (once-a-second samples only: the page's chart has one point
    /// a second).
    public func publish(_ sample: RideSample) {
        guard sample.trigger == .tick, !listeners.isFinished else { return }
        let message = RideView.json(sample, startedAt: startedAt)
        history.append(message)
        if history.count > historyLength { history.removeFirst(history.count - historyLength) }
        listeners.broadcast(message)
    }

    /// The kept samples, then every new one, until ``finish()``.
    public func listen() -> AsyncStream<String> {
        listeners.listen(history: history, buffer: historyLength + 64) { [weak self] id in Task { await self?.forget(id) } }
    }

    /// The latest sample's JSON, when there is one.
    public var latest: String? { history.last }

    /// Ends every page's stream (the ride is over).
    public func finish() { listeners.finish() }

    private func forget(_ id: Int) { listeners.forget(id) }
}
