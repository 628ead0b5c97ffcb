import BluetideLiveWeb
import BluetideRide
import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging

/// `ride serve`: the ride live on a web page for a tablet on the handlebars. `/` is the page (big
/// numbers and a rolling five-minute chart of power, heart rate and cadence), `/live` a WebSocket
/// sending each second's sample as JSON (the kept history first), `/latest.json` the last sample.
/// With `control`, the page also has buttons (target power, grade, pause, start, lap, workout,
/// free) and `/control?token=…` is a WebSocket taking commands (``RideWebControl``), guarded by
/// ``RideWebAccess`` (own-origin pages addressed by IP or localhost, with the page's token).
public struct RideWebServer: Sendable {
    /// The samples.
    public let feed: RideLiveFeed
    /// The page's title (the ride's devices).
    public var title: String
    /// What the page's controls do; nil: the page only shows numbers.
    public var control: RideWebControl?
    /// Who may control the ride (the token the page carries).
    public let access: RideWebAccess
    /// Hummingbird's logger (warnings and errors).
    public var logger: Logger

    /// A server for `feed`'s samples, with the page's controls carried out by `control`.
    public init(feed: RideLiveFeed, title: String = "Bluetide ride", control: RideWebControl? = nil, access: RideWebAccess = RideWebAccess()) {
        self.feed = feed
        self.title = title
        self.control = control
        self.access = access
        logger = LiveWebServer.logger(label: "bluetide.ride.web")
    }

    /// The HTTP routes.
    public func router() -> Router<BasicRequestContext> {
        let router = Router()
        let page = RidePage.html(title: title, controlToken: control == nil ? nil : access.token)
        let feed = feed
        router.get("/") { request, _ -> Response in
            if let refusal = RideWebAccess.refusal(host: request.head.authority ?? request.headers[HTTPFields.Element.Name("Host")!], origin: nil) {
                return Self.text("refused: \(refusal)\n", type: "text/plain; charset=utf-8", status: .misdirectedRequest)
            }
            var response = Self.text(page, type: "text/html; charset=utf-8")
            // The buttons act: no other site may frame the page (clickjacking) or sniff its type.
            response.headers[HTTPFields.Element.Name("X-Frame-Options")!] = "DENY"
            response.headers[.xContentTypeOptions] = "nosniff"
            response.headers[HTTPFields.Element.Name("Referrer-Policy")!] = "same-origin"
            return response
        }
        router.get("/latest.json") { _, _ -> Response in
            guard let latest = await feed.latest else {
                return Self.text("{\"error\":\"no sample yet\"}\n", type: "application/json", status: .notFound)
            }
            return Self.text(latest + "\n", type: "application/json")
        }
        return router
    }

    /// The `/live` WebSocket: the kept samples, then each new one, until the page closes it or
    /// the ride ends.
    public func webSocketRouter() -> Router<BasicWebSocketRequestContext> {
        let router = Router(context: BasicWebSocketRequestContext.self)
        let feed = feed
        router.ws("/live", shouldUpgrade: { request, _ in
            RideWebAccess.refusal(request) == nil ? .upgrade([:]) : .dontUpgrade
        }) { inbound, outbound, _ in
            await LiveWebServer.stream(await feed.listen(), to: outbound, from: inbound)
        }
        guard let control else { return router }
        let access = access
        router.ws("/control", shouldUpgrade: { request, _ in
            // Only this page (same Origin, addressed by IP or localhost) with its token.
            if RideWebAccess.refusal(request) != nil { return .dontUpgrade }
            guard access.accepts(token: request.uri.queryParameters.get("token")) else { return .dontUpgrade }
            return .upgrade([:])
        }) { inbound, outbound, _ in
            // One command at a time, each answered before the next is read.
            do {
                for try await message in inbound.messages(maxSize: 1 << 14) {
                    guard case let .text(text) = message else { continue }
                    let (id, command) = RideControlMessage.parse(text)
                    let reply: String
                    if let command, !command.isEmpty {
                        do { reply = RideControlMessage.reply(id: id, ok: true, text: try await control.perform(command)) } catch {
                            reply = RideControlMessage.reply(id: id, ok: false, text: "\(error)")
                        }
                    } else {
                        reply = RideControlMessage.reply(
                            id: id, ok: false, text: "expected {\"id\":1,\"command\":\"erg 200\"} or a command line such as erg 200")
                    }
                    try await outbound.write(.text(reply))
                }
            } catch {}
        }
        return router
    }

    /// Binds `host:port` (0: a free port) and serves until ``RunningRideWeb/stop()``. Throws when
    /// the address cannot be bound.
    public func start(host: String, port: Int) async throws -> RunningRideWeb {
        let feed = feed
        return try await LiveWebServer.start(
            router: router(), webSocketRouter: webSocketRouter(), host: host, port: port, serverName: "bluetide-ride", logger: logger,
            onStop: { await feed.finish() }, failure: { RideWebError(message: $0) })
    }

    static func text(_ text: String, type: String, status: HTTPResponse.Status = .ok) -> Response {
        LiveWebServer.text(text, type: type, status: status)
    }
}

/// The web server could not start.
public struct RideWebError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public var message: String
    public var description: String { message }
}

/// A live page that is serving (``RunningLiveWeb``: its port, ``RunningLiveWeb/stop()``).
public typealias RunningRideWeb = RunningLiveWeb
