import Hummingbird

/// HEAD answered wherever GET is (GET's headers, no body), and a wrong method on a known path answered
/// `405 Method Not Allowed` with `Allow`, instead of the router's 404.
struct MethodCheck<Context: RequestContext>: RouterMiddleware {
    /// The dashboard's paths (`:id` stands for one segment) and the methods each accepts.
    static var routes: [(pattern: [String], methods: [HTTPRequest.Method])] {
        [
            ("/", [.get]), ("/static/dashboard.css", [.get]), ("/static/dashboard.js", [.get]),
            ("/login", [.get, .post]), ("/logout", [.post]),
            ("/athletes", [.get, .post]), ("/athletes/:id", [.get, .post]), ("/athletes/:id/weights", [.post]),
            ("/athletes/:id/export.csv", [.get]),
            ("/sessions/:id", [.get]), ("/sequences", [.get, .post]), ("/sequences/edit", [.get]), ("/sequences/random", [.post]),
            ("/run", [.get, .post]), ("/run/stop", [.post]),
            ("/api/athletes", [.get]), ("/api/athletes/:id", [.get]), ("/api/sessions/:id", [.get]), ("/api/sequences", [.get]),
            ("/api/run", [.get, .post]), ("/api/run/stop", [.post]), ("/live", [.get]),
        ].map { (pattern: $0.0.split(separator: "/").map(String.init), methods: $0.1) }
    }

    /// The methods `path` accepts, nil for an unknown path.
    static func methods(for path: String) -> [HTTPRequest.Method]? {
        let segments = path.split(separator: "/").map(String.init)
        return routes.first { route in
            route.pattern.count == segments.count && zip(route.pattern, segments).allSatisfy { $0.hasPrefix(":") || $0 == $1 }
        }?.methods
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let methods = Self.methods(for: request.uri.path) else { return try await next(request, context) }
        if request.method == .head, methods.contains(.get) {
            // HEAD runs the GET route (the router has no HEAD routes); the answer keeps GET's
            // headers, its Content-Length included, and sends no body.
            var head = request.head
            head.method = .get
            var response = try await next(Request(head: head, body: request.body), context)
            let length = response.body.contentLength
            response.body = ResponseBody(contentLength: length) { _ in }
            if let length { response.headers[.contentLength] = "\(length)" }
            return response
        }
        guard methods.contains(request.method) else {
            let allow = (methods.contains(.get) ? methods + [.head] : methods).map(\.rawValue).joined(separator: ", ")
            return Response(status: .methodNotAllowed,
                            headers: [.allow: allow, .contentType: "text/plain; charset=utf-8"],
                            body: .init(byteBuffer: ByteBuffer(string: "\(request.method.rawValue) is not allowed here; use \(allow)\n")))
        }
        return try await next(request, context)
    }
}

/// The dashboard's router with ``MethodCheck`` and ``DashboardGuard`` around all of it, so
/// that unknown paths (404) and wrong methods get the same headers and checks as the rest.
struct GuardedRouter<Inner: HTTPResponderBuilder>: HTTPResponderBuilder where Inner.Responder.Context == BasicRequestContext {
    let inner: Inner
    let access: DashboardAccess

    func buildResponder() -> Guarded<Inner.Responder> {
        Guarded(inner: inner.buildResponder(), access: access)
    }

    struct Guarded<Responder: HTTPResponder>: HTTPResponder where Responder.Context == BasicRequestContext {
        let inner: Responder
        let access: DashboardAccess

        func respond(to request: Request, context: BasicRequestContext) async throws -> Response {
            try await MethodCheck<BasicRequestContext>().handle(request, context: context) { request, context in
                try await DashboardGuard<BasicRequestContext>(access: access).handle(request, context: context) { request, context in
                    try await inner.respond(to: request, context: context)
                }
            }
        }
    }
}
