import BluetideReflex
import BluetideReflexCoach
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// The coach's web dashboard: server-rendered pages over the coach's store, JSON endpoints, and
/// live run results over a WebSocket (`/live`), served by Hummingbird.
///
/// The server owns one ``RunController`` (one trainer, one run at a time). Start it with
/// ``start(host:port:)``; port 0 picks a free port (see ``RunningDashboard/port``).
public struct DashboardServer: Sendable {
    /// The pages (and the store they read).
    public let pages: DashboardPages
    /// The runs.
    public let runs: RunController
    /// Hummingbird's logger (warnings and errors only by default).
    public var logger: Logger
    /// Sessions, CSRF tokens and (with a password) the login.
    public let access: DashboardAccess
    /// The connection cap and the idle timeouts (``ConnectionLimits``).
    public var connectionLimits = ConnectionLimits()

    /// A dashboard over `runs.store`, rendering with `display`, taking dates from `now`.
    public init(runs: RunController, access: DashboardAccess = DashboardAccess(), display: DisplayText = DisplayText(),
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.runs = runs
        self.access = access
        pages = DashboardPages(store: runs.store, display: display, now: now)
        var logger = Logger(label: "bluetide.reflex.dashboard")
        logger.logLevel = .warning
        self.logger = logger
    }

    /// The store.
    public var store: CoachStore { pages.store }

    /// The Hummingbird application serving the dashboard on `host:port` (HTTP/1.1 with the
    /// WebSocket upgrade for `/live`) behind the connection cap and the idle timeouts of
    /// ``connectionLimits``; ``start(host:port:)`` runs it. Tests drive it directly.
    public func application(
        host: String = "0.0.0.0", port: Int = 8080, onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        application(host: host, port: port, gate: ConnectionGate(limits: connectionLimits), onServerRunning: onServerRunning)
    }

    func application(
        host: String, port: Int, gate: ConnectionGate, onServerRunning: @escaping @Sendable (any Channel) async -> Void
    ) -> some ApplicationProtocol {
        let webSocketResponder = webSocketRoutes().buildResponder()
        var webSocket = WebSocketServerConfiguration()
        webSocket.autoPing = .enabled(timePeriod: .nanoseconds(Int64(connectionLimits.webSocketPingInterval * 1e9)))
        let configuration = HTTP1WebSocketUpgradeChannel.Configuration(ws: webSocket)
        let logger = self.logger
        let server = HTTPServerBuilder { responder in
            GatedChildChannel(
                base: HTTP1WebSocketUpgradeChannel(responder: responder, webSocketResponder: webSocketResponder, configuration: configuration),
                gate: gate, logger: logger)
        }
        return Application(
            router: GuardedRouter(inner: routes(), access: access),
            server: server,
            configuration: ApplicationConfiguration(
                address: .hostname(host, port: port), serverName: "bluetide-reflex", backlog: 1024),
            onServerRunning: onServerRunning,
            logger: logger)
    }

    /// Binds `host:port` and serves until ``RunningDashboard/stop()``. Throws when the address
    /// cannot be bound.
    public func start(host: String = "0.0.0.0", port: Int = 8080) async throws -> RunningDashboard {
        let bound = BoundPort()
        let gate = ConnectionGate(limits: connectionLimits)
        let application = application(host: host, port: port, gate: gate) { channel in
            bound.resolve(.success(channel.localAddress?.port ?? port))
        }
        // Our own group, so that stopping is a graceful shutdown (requests in flight finish).
        let group = ServiceGroup(configuration: .init(services: [application], gracefulShutdownSignals: [], logger: logger))
        let serving = Task {
            do {
                try await group.run()
                bound.resolve(.failure(CancellationError()))
            } catch {
                bound.resolve(.failure(error))
                throw error
            }
        }
        do {
            let port = try await bound.value()
            return RunningDashboard(host: host, port: port, group: group, serving: serving, runs: runs, gate: gate)
        } catch {
            serving.cancel()
            throw error
        }
    }
}

/// The port the server bound, handed from Hummingbird's "running" callback to ``DashboardServer/start(host:port:)``
/// (whichever comes first: the port, or the error that stopped the server).
final class BoundPort: Sendable {
    private struct State {
        var result: Result<Int, any Error>?
        var waiter: CheckedContinuation<Int, any Error>?
    }

    private let state = Mutex(State())

    /// Records the outcome (the first one counts) and wakes the waiter.
    func resolve(_ result: Result<Int, any Error>) {
        state.withLock { state in
            guard state.result == nil else { return }
            state.result = result
            state.waiter?.resume(with: result)
            state.waiter = nil
        }
    }

    /// The port, once bound.
    func value() async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            state.withLock { state in
                if let result = state.result { continuation.resume(with: result) } else { state.waiter = continuation }
            }
        }
    }
}

/// A dashboard that is serving.
public struct RunningDashboard: Sendable {
    /// The address it was asked to bind (`0.0.0.0` = every interface).
    public let host: String
    /// The port it listens on.
    public let port: Int
    let group: ServiceGroup
    let serving: Task<Void, any Error>
    let runs: RunController
    let gate: ConnectionGate

    /// What the connection cap has done so far.
    public var connections: ConnectionFigures { gate.figures }

    /// `http://127.0.0.1:PORT` — for tests and the local browser.
    public var localURL: String { "http://127.0.0.1:\(port)" }

    /// Stops serving: the current run is stopped for `reason` (stored as the session's end
    /// reason), live pages are closed, the port is released.
    public func stop(reason: String = "the dashboard stopped") async {
        await runs.stop(reason: reason)
        await runs.waitUntilIdle()
        await runs.finishListeners()
        await group.triggerGracefulShutdown()
        _ = try? await serving.value
    }

    /// Waits until the server ends on its own (it only does on an error).
    public func wait() async throws { try await serving.value }
}
