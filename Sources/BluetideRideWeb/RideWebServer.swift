import BluetideRide
import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import ServiceLifecycle

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
        var logger = Logger(label: "bluetide.ride.web")
        logger.logLevel = .warning
        self.logger = logger
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
            let messages = await feed.listen()
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await message in messages {
                        do { try await outbound.write(.text(message)) } catch { return }
                    }
                }
                group.addTask {
                    // The page sends nothing; this ends when it closes the socket.
                    do { for try await _ in inbound {} } catch {}
                }
                await group.next()
                group.cancelAll()
            }
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
        let (ports, portContinuation) = AsyncStream<Int>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let application = Application(
            router: router(), server: .http1WebSocketUpgrade(webSocketRouter: webSocketRouter()),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "bluetide-ride"),
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
            return RunningRideWeb(host: host, port: bound, group: group, serving: serving, feed: feed)
        }
        // The server stopped before it listened: its error says why (address in use, …).
        try await serving.value
        throw RideWebError(message: "the web server stopped before it listened on \(host):\(port)")
    }

    static func text(_ text: String, type: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: type, .cacheControl: "no-store"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}

/// The web server could not start.
public struct RideWebError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public var message: String
    public var description: String { message }
}

/// A live page that is serving.
public struct RunningRideWeb: Sendable {
    /// The address it was asked to bind (`0.0.0.0`: every interface).
    public let host: String
    /// The port it listens on.
    public let port: Int
    let group: ServiceGroup
    let serving: Task<Void, any Error>
    let feed: RideLiveFeed

    /// `http://127.0.0.1:PORT`.
    public var localURL: String { "http://127.0.0.1:\(port)" }

    /// Ends the pages' streams and stops serving (requests in flight finish).
    public func stop() async {
        await feed.finish()
        await group.triggerGracefulShutdown()
        _ = try? await serving.value
    }
}
