import BluetideRing
import Foundation
import Hummingbird
import Logging
import NIOCore

/// `ring serve`: the ring's synced history as web pages (Hummingbird). `/` is the overview
/// (`?day=YYYY-MM-DD` picks the heart-rate day); `/samples.csv` is the tidy export.
public struct RingWebServer: Sendable {
    /// The pages.
    public let dashboard: RingDashboard
    /// Hummingbird's logger (warnings and errors).
    public var logger: Logger

    public init(dashboard: RingDashboard) {
        self.dashboard = dashboard
        var logger = Logger(label: "bluetide.ring.web")
        logger.logLevel = .warning
        self.logger = logger
    }

    /// The routes.
    public func router() -> Router<BasicRequestContext> {
        let router = Router()
        let dashboard = self.dashboard
        router.get("/") { request, _ -> Response in
            let day = request.uri.queryParameters.get("day")
            do {
                return Self.text(try dashboard.page(day: day), type: "text/html; charset=utf-8")
            } catch let error as RingDashboard.PageError {
                return Self.text(RingDashboard.layout(title: "Bad request", body: "<p>\(error.description)</p>\n"), type: "text/html; charset=utf-8", status: .badRequest)
            } catch {
                return Self.text(RingDashboard.layout(title: "Error", body: "<p>\(error)</p>\n"), type: "text/html; charset=utf-8", status: .internalServerError)
            }
        }
        router.get("/samples.csv") { _, _ -> Response in
            do {
                return Self.text(RingExport.render(try dashboard.store.samples(), format: .csv), type: "text/csv; charset=utf-8")
            } catch {
                return Self.text("\(error)\n", type: "text/plain; charset=utf-8", status: .internalServerError)
            }
        }
        return router
    }

    /// The application on `host:port` (port 0: any free port, reported to `onServerRunning`).
    public func application(
        host: String, port: Int, onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        Application(
            router: router(), configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "bluetide-ring"),
            onServerRunning: onServerRunning, logger: logger)
    }

    static func text(_ text: String, type: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: type, .cacheControl: "no-store"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}

extension RingWebServer {
    /// Serves on `host:port` until SIGINT or SIGTERM (a graceful shutdown); `onListening` gets the
    /// bound port. Throws when the address cannot be bound.
    public func serve(host: String, port: Int, onListening: @escaping @Sendable (Int) -> Void) async throws {
        let app = application(host: host, port: port) { channel in onListening(channel.localAddress?.port ?? port) }
        try await app.runService()
    }
}
