import Testing
import Bluetide
import BluetideReflex
import BluetideReflexCoach
import BluetideTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
@testable import BluetideReflexWeb

/// A fixed "now" for the sample data and the pages: 2026-11-18 12:00 UTC.
let fixtureNow = Date(timeIntervalSince1970: 1_795_003_200)

/// A dashboard over an in-memory store with the sample gym, whose coach's Bluetooth sits on an
/// empty virtual link (no trainer: a started run keeps scanning until stopped).
struct DashboardFixture: Sendable {
    let server: DashboardServer
    let bluetooth: Bluetooth
    let sample: SampleData.Summary

    var store: CoachStore { server.store }

    static func make(scanSeconds: Int64 = 60, access: DashboardAccess = DashboardAccess()) async throws -> DashboardFixture {
        let store = try CoachStore.inMemory()
        let sample = try SampleData.add(to: store, now: fixtureNow)
        let bluetooth = try await Bluetooth.open(transport: "virtual:dashboard-\(UUID().uuidString)")
        var coach = ReflexCoach(central: bluetooth.central, store: store)
        coach.scanTimeout = .seconds(scanSeconds)
        coach.scanRound = .milliseconds(500)
        let server = DashboardServer(runs: RunController(coach: coach), access: access, display: DisplayText(timeZone: TimeZone(identifier: "UTC")!),
                                     now: { fixtureNow })
        return DashboardFixture(server: server, bluetooth: bluetooth, sample: sample)
    }

    struct Timeout: Error, CustomStringConvertible {
        var description: String { "the dashboard test did not finish in time" }
    }

    /// Runs `body` against the router (no sockets), then stops any run and closes Bluetooth.
    /// A hang guard of 40 s of run time.
    static func withRouter(access: DashboardAccess = DashboardAccess(),
                           _ body: @escaping @Sendable (any TestClientProtocol, DashboardFixture) async throws -> Void) async throws {
        let fixture = try await make(access: access)
        do {
            try await withRunTimeLimit(40, onTimeout: { Timeout() }) {
                try await fixture.server.application(host: "127.0.0.1", port: 0).test(.router) { client in try await body(client, fixture) }
            }
        } catch {
            await fixture.close()
            throw error
        }
        await fixture.close()
    }

    func close() async {
        await server.runs.stop()
        await server.runs.waitUntilIdle()
        await server.runs.finishListeners()
        await bluetooth.close()
    }
}

extension TestClientProtocol {
    /// GET `uri`.
    func get(_ uri: String) async throws -> TestResponse {
        try await execute(uri: uri, method: .get)
    }

    /// POST a form with `fields` to `uri`, as a browser would from the dashboard's own page: with
    /// the session cookie and the form's CSRF token (fetched from a page first).
    func post(_ uri: String, _ fields: [(String, String)]) async throws -> TestResponse {
        let (cookie, token) = try await session()
        return try await postRaw(uri, fields + [("_csrf", token)], headers: [.cookie: cookie])
    }

    /// POST a form exactly as given (no cookie, no token unless in `headers`/`fields`).
    func postRaw(_ uri: String, _ fields: [(String, String)], headers: HTTPFields = [:]) async throws -> TestResponse {
        let body = fields.map { "\(formEncoded($0.0))=\(formEncoded($0.1))" }.joined(separator: "&")
        var all = headers
        all[.contentType] = "application/x-www-form-urlencoded"
        return try await execute(uri: uri, method: .post, headers: all, body: ByteBuffer(string: body))
    }

    /// A new session: the `Cookie` header to send and the CSRF token of its forms.
    func session() async throws -> (cookie: String, token: String) {
        let page = try await get("/run")
        let setCookie = try #require(page.headers[.setCookie], "no session cookie")
        let cookie = String(setCookie.prefix { $0 != ";" })
        let marker = "name=\"_csrf\" value=\""
        let start = try #require(page.text.range(of: marker), "no CSRF token in the page")
        let token = String(page.text[start.upperBound...].prefix { $0 != "\"" })
        return (cookie, token)
    }
}

/// `text` encoded as a browser encodes form values.
func formEncoded(_ text: String) -> String {
    let allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._*")
    return (text.addingPercentEncoding(withAllowedCharacters: allowed) ?? "").replacingOccurrences(of: "%20", with: "+")
}

extension TestResponse {
    /// The body as text.
    var text: String { String(buffer: body) }

    /// The body with the HTML entities our pages use turned back into characters (for matching messages).
    var plainText: String {
        text.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&amp;", with: "&")
    }

    /// The body decoded as JSON.
    var json: Any? { try? JSONSerialization.jsonObject(with: Data(String(buffer: body).utf8)) }
}

/// How often `needle` occurs in `text`.
func occurrences(of needle: String, in text: String) -> Int {
    text.components(separatedBy: needle).count - 1
}
