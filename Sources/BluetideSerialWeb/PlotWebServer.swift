import BluetideLiveWeb
import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging

/// `uart plot`: the numbers a device prints, charted live. `/` is the page, `/live` a WebSocket
/// sending each point as JSON (the kept ones first), `/export.csv` the kept points as CSV. Served
/// by the live pages' kernel (``LiveWebServer``), as the ride's page is.
public struct PlotWebServer: Sendable {
    /// The points.
    public let feed: PlotFeed
    /// The page's title (the device).
    public var title: String
    /// Hummingbird's logger (warnings and errors).
    public var logger: Logger

    /// A server for `feed`'s points.
    public init(feed: PlotFeed, title: String = "Bluetide plot") {
        self.feed = feed
        self.title = title
        logger = LiveWebServer.logger(label: "bluetide.serial.plot")
    }

    /// The HTTP routes.
    public func router() -> Router<BasicRequestContext> {
        let router = Router()
        let page = PlotPage.html(title: title)
        let feed = feed
        router.get("/") { _, _ -> Response in Self.text(page, type: "text/html; charset=utf-8") }
        router.get("/export.csv") { _, _ -> Response in
            var response = Self.text(await feed.csv(), type: "text/csv; charset=utf-8")
            response.headers[.contentDisposition] = "attachment; filename=\"plot.csv\""
            return response
        }
        return router
    }

    /// The `/live` WebSocket: the kept points, then each new one, until the page closes it or
    /// the plot ends.
    public func webSocketRouter() -> Router<BasicWebSocketRequestContext> {
        let router = Router(context: BasicWebSocketRequestContext.self)
        let feed = feed
        router.ws("/live") { inbound, outbound, _ in
            await LiveWebServer.stream(await feed.listen(), to: outbound, from: inbound)
        }
        return router
    }

    /// Binds `host:port` (0: a free port) and serves until ``RunningPlotWeb/stop()``. Throws when
    /// the address cannot be bound.
    public func start(host: String, port: Int) async throws -> RunningPlotWeb {
        let feed = feed
        return try await LiveWebServer.start(
            router: router(), webSocketRouter: webSocketRouter(), host: host, port: port, serverName: "bluetide-plot", logger: logger,
            onStop: { await feed.finish() }, failure: { PlotWebError(message: $0) })
    }

    static func text(_ text: String, type: String, status: HTTPResponse.Status = .ok) -> Response {
        LiveWebServer.text(text, type: type, status: status)
    }
}

/// The web server could not start.
public struct PlotWebError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public var message: String
    public var description: String { message }
}

/// A plot page that is serving (``RunningLiveWeb``: its port, ``RunningLiveWeb/stop()``).
public typealias RunningPlotWeb = RunningLiveWeb
