import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import ServiceLifecycle

/// `uart plot`: the numbers a device prints, charted live. `/` is the page, `/live` a WebSocket
/// sending each point as JSON (the kept ones first), `/export.csv` the kept points as CSV. The
/// same shape as the ride's live page server.
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
        var logger = Logger(label: "bluetide.serial.plot")
        logger.logLevel = .warning
        self.logger = logger
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
            let messages = await feed.listen()
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await message in messages {
                        do { try await outbound.write(.text(message)) } catch { return }
                    }
                }
                group.addTask {
                    do { for try await _ in inbound {} } catch {}
                }
                await group.next()
                group.cancelAll()
            }
        }
        return router
    }

    /// Binds `host:port` (0: a free port) and serves until ``RunningPlotWeb/stop()``. Throws when
    /// the address cannot be bound.
    public func start(host: String, port: Int) async throws -> RunningPlotWeb {
        let (ports, portContinuation) = AsyncStream<Int>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let application = Application(
            router: router(), server: .http1WebSocketUpgrade(webSocketRouter: webSocketRouter()),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "bluetide-plot"),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? port)
                portContinuation.finish()
            },
            logger: logger)
        let group = ServiceGroup(configuration: .init(services: [application], gracefulShutdownSignals: [], logger: logger))
        let serving = Task {
            defer { portContinuation.finish() }
            try await group.run()
        }
        for await bound in ports {
            return RunningPlotWeb(host: host, port: bound, group: group, serving: serving, feed: feed)
        }
        try await serving.value
        throw PlotWebError(message: "the web server stopped before it listened on \(host):\(port)")
    }

    static func text(_ text: String, type: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: type, .cacheControl: "no-store"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}

/// The web server could not start.
public struct PlotWebError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public var message: String
    public var description: String { message }
}

/// A plot page that is serving.
public struct RunningPlotWeb: Sendable {
    /// The address it was asked to bind.
    public let host: String
    /// The port it listens on.
    public let port: Int
    let group: ServiceGroup
    let serving: Task<Void, any Error>
    let feed: PlotFeed

    /// `http://127.0.0.1:PORT`.
    public var localURL: String { "http://127.0.0.1:\(port)" }

    /// Ends the pages' streams and stops serving.
    public func stop() async {
        await feed.finish()
        await group.triggerGracefulShutdown()
        _ = try? await serving.value
    }
}
