import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import ServiceLifecycle

/// The kernel the live pages share (`ride serve`'s ride page, `uart plot`'s chart): a
/// Hummingbird application on HTTP/1 with WebSocket upgrade, bound and run until stopped, the
/// pump from a feed to a page's WebSocket, and uncached text answers. Each page brings its own
/// routes and feed.
public enum LiveWebServer {
    /// Binds `host:port` (0: a free port) and serves `router` and `webSocketRouter` until
    /// ``RunningLiveWeb/stop()``, which first runs `onStop` (the page's feed ends its streams).
    /// Throws when the address cannot be bound (the server's own error, or `failure(message)`
    /// when it stopped without one).
    public static func start(
        router: Router<BasicRequestContext>, webSocketRouter: Router<BasicWebSocketRequestContext>, host: String, port: Int,
        serverName: String, logger: Logger, onStop: @escaping @Sendable () async -> Void,
        failure: @Sendable (String) -> any Error
    ) async throws -> RunningLiveWeb {
        let (ports, portContinuation) = AsyncStream<Int>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let application = Application(
            router: router, server: .http1WebSocketUpgrade(webSocketRouter: webSocketRouter),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: serverName),
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
            return RunningLiveWeb(host: host, port: bound, group: group, serving: serving, onStop: onStop)
        }
        // The server stopped before it listened: its error says why (address in use, …).
        try await serving.value
        throw failure("the web server stopped before it listened on \(host):\(port)")
    }

    /// Sends `messages` to a page's WebSocket, each as one text message, until the page closes
    /// the socket or the stream ends. (The page sends nothing; what it sends is read and dropped.)
    public static func stream(_ messages: AsyncStream<String>, to outbound: WebSocketOutboundWriter, from inbound: WebSocketInboundStream) async {
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

    /// A text answer of `type` that no browser or proxy keeps (`Cache-Control: no-store`).
    public static func text(_ text: String, type: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: type, .cacheControl: "no-store"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// A logger for Hummingbird's own messages: warnings and errors only.
    public static func logger(label: String) -> Logger {
        var logger = Logger(label: label)
        logger.logLevel = .warning
        return logger
    }

    /// `text` with the five XML special characters escaped (for a page's title and attributes).
    public static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}

/// A live page that is serving.
public struct RunningLiveWeb: Sendable {
    /// The address it was asked to bind (`0.0.0.0`: every interface).
    public let host: String
    /// The port it listens on.
    public let port: Int
    let group: ServiceGroup
    let serving: Task<Void, any Error>
    let onStop: @Sendable () async -> Void

    /// `http://127.0.0.1:PORT`.
    public var localURL: String { "http://127.0.0.1:\(port)" }

    /// Ends the pages' streams (`onStop`) and stops serving (requests in flight finish).
    public func stop() async {
        await onStop()
        await group.triggerGracefulShutdown()
        _ = try? await serving.value
    }
}
