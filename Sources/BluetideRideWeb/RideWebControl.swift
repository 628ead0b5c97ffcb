import BluetideLiveWeb
import Foundation
import Hummingbird

/// What the live page's controls do: each command line the page sends (`erg 200`, `grade 3.5`,
/// `pause`, `start`, `lap`, `workout`, `free`; ``BluetideRide/RideControlCommand``) is carried out
/// by `perform`, which answers in words (`target 200 W`) or throws an error whose text the page
/// shows.
public struct RideWebControl: Sendable {
    /// Carries out one command line.
    public var perform: @Sendable (String) async throws -> String

    /// Controls carried out by `perform`.
    public init(perform: @escaping @Sendable (String) async throws -> String) {
        self.perform = perform
    }
}

/// Who may use the page's controls, the same rules as the coach's dashboard: requests must be
/// addressed to an IP address or `localhost` (a page of another site whose name was made to
/// point at this computer, DNS rebinding, names its own host and is refused), a browser's
/// `Origin` must be the page's own, and the control socket must present the token the page
/// carries (a random one per server, which no other site's page can read). No I/O.
public struct RideWebAccess: Sendable {
    /// The token the page carries and the control socket asks for (32 random bytes as hex).
    public let token: String

    /// Access with a fresh random token, or `token` (tests).
    public init(token: String? = nil) {
        self.token = token ?? WebAccessRules.randomToken()
    }

    /// Whether `sent` is the token (compared in constant time).
    public func accepts(token sent: String?) -> Bool {
        WebAccessRules.tokenMatches(sent, token)
    }

    /// Whether a request naming `host` (its `Host` header, maybe with a port) may be answered:
    /// an IPv4 address, an IPv6 one in brackets, `localhost` or a name under it. Without a
    /// `Host` (no browser sends none) it may. (``WebAccessRules/allowsHost(_:names:)``, as the
    /// coach's dashboard.)
    public static func allowsHost(_ host: String?) -> Bool {
        WebAccessRules.allowsHost(host)
    }

    /// Why a request is refused (another site's page, a foreign `Host`), or nil when it may go on.
    public static func refusal(host: String?, origin: String?) -> String? {
        guard allowsHost(host) else {
            return "this page answers to its IP addresses and localhost, not to \(host ?? "?"); open it by one of those"
        }
        guard let origin else { return nil }
        // A `ws://` origin is a WebSocket client that is not a browser page (no page can forge one).
        if origin.hasPrefix("ws://") || origin.hasPrefix("wss://") { return nil }
        guard let host else { return "the request names no host" }
        if origin == "http://\(host)" || origin == "https://\(host)" { return nil }
        return "a request from another site (Origin \(origin)) cannot control this ride"
    }

    /// ``refusal(host:origin:)`` for `request`; with several `Origin` headers, each must pass.
    static func refusal(_ request: Request) -> String? {
        let host = request.head.authority ?? request.headers[HTTPFields.Element.Name("Host")!]
        let origins = request.headers[values: .origin]
        if origins.isEmpty { return refusal(host: host, origin: nil) }
        return origins.lazy.compactMap { refusal(host: host, origin: $0) }.first
    }
}

/// One message of the control socket: what the page sends (`{"id":1,"command":"erg 200"}`, or
/// the bare line) and the reply it gets (`{"type":"reply","id":1,"ok":true,"text":"target 200 W"}`).
enum RideControlMessage {
    /// The id (echoed back, when a number or a string) and the command line of a message.
    static func parse(_ text: String) -> (id: Any?, command: String?) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.hasPrefix("{") else { return (nil, trimmed) }
        guard let object = try? JSONSerialization.jsonObject(with: Data(trimmed.utf8)) as? [String: Any] else { return (nil, nil) }
        let id = object["id"].flatMap { $0 is NSNumber || $0 is String ? $0 : nil }
        return (id, object["command"] as? String)
    }

    /// The reply's JSON text.
    static func reply(id: Any?, ok: Bool, text: String) -> String {
        var object: [String: Any] = ["type": "reply", "ok": ok, "text": text]
        if let id { object["id"] = id }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
