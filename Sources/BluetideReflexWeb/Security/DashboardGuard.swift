import Foundation
import Hummingbird

/// Guards every request of the dashboard: same-origin POSTs and WebSockets only (Origin),
/// a session cookie (HttpOnly, SameSite=Strict), a login when a password is set, the CSRF
/// token on every POST, and security headers on every answer.
struct DashboardGuard<Context: RequestContext>: RouterMiddleware {
    let access: DashboardAccess
    /// True on the WebSocket router (no cookie is set there, and nothing is rendered).
    var webSocket = false

    /// Paths open without a login: the login form and the files it needs.
    static var publicPaths: Set<String> { ["/login", "/static/dashboard.css", "/static/dashboard.js"] }

    /// Headers on every answer: no MIME sniffing, no framing, our own scripts and styles only.
    static var securityHeaders: [(HTTPFields.Element.Name, String)] {
        [
            (.xContentTypeOptions, "nosniff"),
            (HTTPFields.Element.Name("X-Frame-Options")!, "DENY"),
            (.contentSecurityPolicy,
             "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; "
                + "frame-ancestors 'none'; form-action 'self'; base-uri 'none'; object-src 'none'"),
            (HTTPFields.Element.Name("Referrer-Policy")!, "same-origin"),
        ]
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await guarded(request, context: context, next: next)
        // The WebSocket upgrade's answer is left as the upgrade handler wrote it.
        if webSocket { return response }
        for (name, value) in Self.securityHeaders where response.headers[name] == nil { response.headers[name] = value }
        return response
    }

    private func guarded(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let refusal = Self.foreignHost(request, access: access) {
            return Self.refusal(.misdirectedRequest, "refused: \(refusal)")
        }
        let path = request.uri.path
        let changes = request.method != .get && request.method != .head
        if changes || webSocket, let refusal = Self.crossOrigin(request) {
            return Self.refusal(.forbidden, "refused: \(refusal)")
        }
        let cookie = request.cookies[DashboardAccess.cookieName]?.value
        var session = access.session(cookie)
        var newCookie: String?
        if session == nil, !access.requiresLogin, !webSocket {
            let opened = access.open(loggedIn: true)
            session = opened.session
            newCookie = opened.cookie
        }
        let isPublic = Self.publicPaths.contains(path)
        if access.requiresLogin, session?.loggedIn != true, !isPublic {
            if request.method == .get || request.method == .head, !path.hasPrefix("/api/"), !webSocket {
                return Response(status: .seeOther, headers: [.location: "/login"])
            }
            return Self.refusal(.unauthorized, "log in first: open /login and give the coach's password")
        }
        var request = request
        if changes, path != "/login" {
            guard let expected = session?.csrf else { return Self.refusal(.forbidden, "refused: no session; reload the page and try again") }
            var sent = request.headers[HTTPFields.Element.Name("X-CSRF-Token")!]
            if sent == nil, request.headers[.contentType]?.hasPrefix("application/x-www-form-urlencoded") == true {
                let body = try await request.collectBody(upTo: 1 << 20)
                sent = FormFields(encoded: String(buffer: body))["_csrf"]
                request.body = .init(buffer: body)
            }
            guard sent == expected else {
                return Self.refusal(.forbidden, "refused: the form's security token is missing or old; reload the page and try again")
            }
        }
        var response = try await RequestSecurity.$csrfToken.withValue(session?.csrf) { try await next(request, context) }
        if let newCookie {
            response.setCookie(Cookie(name: DashboardAccess.cookieName, value: newCookie, maxAge: Int(DashboardAccess.sessionLifetime),
                                      path: "/", httpOnly: true, sameSite: .strict))
        }
        return response
    }

    /// Why a request from another site is refused, or nil when it comes from the dashboard's own
    /// pages (its Origin, when sent, names the host it was sent to).
    static func crossOrigin(_ request: Request) -> String? {
        guard let origin = request.headers[.origin] else { return nil }
        // Browsers send the page's http(s) origin and no page can forge it; a `ws://` origin is
        // a non-browser WebSocket client (e.g. swift-websocket's), which has no coach's cookies to abuse.
        if origin.hasPrefix("ws://") || origin.hasPrefix("wss://") { return nil }
        guard let host = request.head.authority ?? request.headers[HTTPFields.Element.Name("Host")!] else {
            return "the request names no host"
        }
        if origin == "http://\(host)" || origin == "https://\(host)" { return nil }
        return "a request from another site (Origin \(origin)) cannot change anything here"
    }

    /// Why a request addressed to another host is refused (DNS rebinding: a page of another site
    /// whose name was made to point at this computer names that site in `Host`), or nil when it
    /// names one the dashboard answers to (``DashboardAccess/allowsHost(_:)``).
    static func foreignHost(_ request: Request, access: DashboardAccess) -> String? {
        let host = request.head.authority ?? request.headers[HTTPFields.Element.Name("Host")!]
        guard !access.allowsHost(host) else { return nil }
        let names = (["localhost"] + access.hostNames.sorted()).joined(separator: ", ")
        return "this dashboard answers to its IP addresses and \(names), not to \(host ?? "?") "
            + "(a page of another site whose name points at this computer looks like this); open it by one of those"
    }

    /// A short plain-text refusal.
    static func refusal(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(status: status, headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
                 body: .init(byteBuffer: ByteBuffer(string: text + "\n")))
    }
}
