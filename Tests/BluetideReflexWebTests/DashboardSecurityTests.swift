import BluetideReflex
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
@testable import BluetideReflexWeb

/// Nobody without the password reads or changes anything; no other site can act through the
/// coach's browser; wrong methods and HEAD are answered as HTTP says.
@Suite struct DashboardSecurityTests {
    static let password = "correct horse battery"

    @Test func formsWithoutTheirTokenOrFromAnotherSiteAreRefused() async throws {
        try await DashboardFixture.withRouter { client, fixture in
            let (cookie, token) = try await client.session()
            let noToken = try await client.postRaw("/athletes", [("name", "Mallory")], headers: [.cookie: cookie])
            #expect(noToken.status == .forbidden)
            let wrongToken = try await client.postRaw("/athletes", [("name", "Mallory"), ("_csrf", "0000")], headers: [.cookie: cookie])
            #expect(wrongToken.status == .forbidden)
            let noCookie = try await client.postRaw("/athletes", [("name", "Mallory"), ("_csrf", token)])
            #expect(noCookie.status == .forbidden)
            let otherSite = try await client.postRaw("/athletes", [("name", "Mallory"), ("_csrf", token)],
                                                     headers: [.cookie: cookie, .origin: "http://evil.example"])
            #expect(otherSite.status == .forbidden)
            let stop = try await client.execute(uri: "/api/run/stop", method: .post, headers: [.cookie: cookie], body: nil)
            #expect(stop.status == .forbidden, "a script POST needs X-CSRF-Token")
            #expect(try fixture.store.athletes().allSatisfy { $0.name != "Mallory" })
            let accepted = try await client.postRaw("/athletes", [("name", "Zoe"), ("_csrf", token)], headers: [.cookie: cookie])
            #expect(accepted.status == .seeOther)
        }
    }

    @Test func everyAnswerCarriesSecurityHeadersAndTheCookieIsStrict() async throws {
        try await DashboardFixture.withRouter { client, _ in
            let page = try await client.get("/athletes")
            #expect(page.headers[.xContentTypeOptions] == "nosniff")
            #expect(page.headers[.contentSecurityPolicy]?.contains("frame-ancestors 'none'") == true)
            #expect(page.headers[.contentSecurityPolicy]?.contains("script-src 'self'") == true)
            let cookie = try #require(page.headers[.setCookie])
            #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), "\(cookie)")
            let missing = try await client.get("/nothing-here")
            #expect(missing.headers[.xContentTypeOptions] == "nosniff")
        }
    }

    @Test func withAPasswordNothingIsReadOrChangedBeforeLogin() async throws {
        let access = DashboardAccess(passwordHash: try PasswordHash.make(Self.password, rounds: 1000))
        try await DashboardFixture.withRouter(access: access) { client, fixture in
            let api = try await client.get("/api/athletes/1")
            #expect(api.status == .unauthorized)
            #expect(!api.text.contains("2004-05-17"))
            let page = try await client.get("/athletes/1")
            #expect(page.status == .seeOther && page.headers[.location] == "/login")
            let post = try await client.postRaw("/athletes/1", [("name", "Renamed")])
            #expect(post.status == .unauthorized || post.status == .forbidden)
            let wrong = try await client.postRaw("/login", [("password", "guess")])
            #expect(wrong.status == .unauthorized)
            #expect(try fixture.store.athlete(id: 1)?.name == "Ana Ruiz")

            let login = try await client.postRaw("/login", [("password", Self.password)])
            #expect(login.status == .seeOther)
            let setCookie = try #require(login.headers[.setCookie])
            #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict"))
            let cookie = String(setCookie.prefix { $0 != ";" })
            let detail = try await client.execute(uri: "/api/athletes/1", method: .get, headers: [.cookie: cookie], body: nil)
            #expect(detail.status == .ok)
            #expect(detail.text.contains("Ana Ruiz"))
        }
    }

    @Test func passwordHashesVerifyOnlyTheirPassword() throws {
        let stored = try PasswordHash.make(Self.password, rounds: 1000)
        #expect(stored.hasPrefix("pbkdf2-sha256$1000$"))
        #expect(!stored.contains(Self.password))
        #expect(PasswordHash.verify(Self.password, against: stored))
        #expect(!PasswordHash.verify("correct horse battery ", against: stored))
        #expect(!PasswordHash.verify(Self.password, against: "pbkdf2-sha256$x$y$z"))
        #expect(PasswordHash.problem(with: "short") != nil)
        #expect(PasswordHash.problem(with: "long enough\u{0}") != nil)
    }

    @Test func webSocketsAndPostsFromAnotherOriginAreRefused() {
        func request(origin: String?) -> Request {
            var fields: HTTPFields = [:]
            if let origin { fields[.origin] = origin }
            return Request(head: HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:8080", path: "/live", headerFields: fields),
                           body: .init(buffer: ByteBuffer()))
        }
        #expect(DashboardGuard<BasicRequestContext>.crossOrigin(request(origin: "http://evil.example")) != nil)
        #expect(DashboardGuard<BasicRequestContext>.crossOrigin(request(origin: "http://127.0.0.1:8081")) != nil)
        #expect(DashboardGuard<BasicRequestContext>.crossOrigin(request(origin: "http://127.0.0.1:8080")) == nil)
        #expect(DashboardGuard<BasicRequestContext>.crossOrigin(request(origin: nil)) == nil)
    }

    @Test func wrongMethodsGet405WithAllow() async throws {
        try await DashboardFixture.withRouter { client, _ in
            let delete = try await client.execute(uri: "/athletes", method: .delete, headers: [:], body: nil)
            #expect(delete.status == .methodNotAllowed)
            #expect(delete.headers[.allow] == "GET, POST, HEAD")
            let getStop = try await client.get("/run/stop")
            #expect(getStop.status == .methodNotAllowed && getStop.headers[.allow] == "POST")
        }
    }
}
