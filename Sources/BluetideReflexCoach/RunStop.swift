import Synchronization

/// A request to end a coached run early, with the reason in words (`SIGINT`, `stopped from the
/// dashboard`, `server stopping (SIGTERM)`), which the session stores as its end reason.
///
/// Before a session exists (scanning, connecting) the run is cancelled and throws
/// ``CoachError/stopped(_:)``; once it exists the trainer is sent `stop`, the session is
/// ended with the reason and ``CoachEvent/ended(_:)`` is reported as for any other ending.
/// The first request counts; later ones are ignored.
public final class RunStop: Sendable {
    private struct State {
        var reason: String?
        var handlers: [@Sendable (String) -> Void] = []
    }

    private let state = Mutex(State())

    /// A stop nobody has requested yet.
    public init() {}

    /// Asks the run to end for `reason`. Only the first request counts.
    public func request(_ reason: String) {
        let handlers: [@Sendable (String) -> Void] = state.withLock { state in
            guard state.reason == nil else { return [] }
            state.reason = reason
            defer { state.handlers = [] }
            return state.handlers
        }
        for handler in handlers { handler(reason) }
    }

    /// The reason, once requested.
    public var reason: String? { state.withLock { $0.reason } }

    /// Calls `handler` with the reason when a stop is requested (at once if it was already).
    func onRequest(_ handler: @escaping @Sendable (String) -> Void) {
        let reason: String? = state.withLock { state in
            if state.reason == nil { state.handlers.append(handler) }
            return state.reason
        }
        if let reason { handler(reason) }
    }
}
