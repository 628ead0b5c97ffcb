import BluetideReflex
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
@testable import BluetideReflexWeb
#if canImport(Glibc)
import Glibc
#endif

/// Slow and hostile clients: headers that trickle in, requests without a cookie by the
/// thousand, and requests addressed to another host (DNS rebinding).
@Suite(.serialized) struct DashboardSlowClientTests {
    /// A header that is not all there by the header deadline is answered 408 and closed (with a
    /// byte every 30 s, 260 of them kept every page at 503 for as long as they lasted).
    @Test func aHeaderThatTricklesIsAnswered408AtItsDeadline() async throws {
        let limits = ConnectionLimits(idleTimeout: 60, headerTimeout: 0.5)
        try await DashboardConnectionTests.withDashboard(limits) { running in
            let answer = try await RawSocket.onThread {
                let fd = try RawSocket.connect(port: running.port)
                defer { close(fd) }
                try RawSocket.send(fd, "GET /athl")  // …and the rest never comes
                return RawSocket.readUntilClosed(fd, seconds: 20)
            }
            #expect(answer.text.hasPrefix("HTTP/1.1 408 Request Timeout\r\n"), "\(answer.text.prefix(80))")
            #expect(answer.text.contains("did not arrive within 0.5 s"))
            #expect(answer.closed)
            // A whole request, and a second one on the same kept-alive connection, are answered.
            let page = try await DashboardConnectionTests.exchange(
                running.port, "GET /athletes HTTP/1.1\r\nHost: localhost\r\n\r\nGET /sequences HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            #expect(page.text.hasPrefix("HTTP/1.1 200 OK"))
            #expect(occurrences(of: "HTTP/1.1 200 OK", in: page.text) == 2)
        }
    }

    /// More trickling clients than the server holds: they give way to a real request, which is
    /// answered 200 (it was 503 while they lasted), even before their deadline.
    @Test func tricklingClientsGiveWayToARealRequest() async throws {
        let limits = ConnectionLimits(maximumConnections: 8, idleTimeout: 600, headerTimeout: 600)
        try await DashboardConnectionTests.withDashboard(limits) { running in
            let answer = try await RawSocket.onThread {
                var trickling: [Int32] = []
                defer { for fd in trickling { close(fd) } }
                for _ in 0..<12 {
                    let fd = try RawSocket.connect(port: running.port)
                    trickling.append(fd)
                    try RawSocket.send(fd, "G")
                }
                #expect(RawSocket.waitUntil(running, seconds: 30) { $0.accepted >= 12 && $0.partial == 8 },
                        "\(running.connections)")
                let fd = try RawSocket.connect(port: running.port)
                defer { close(fd) }
                try RawSocket.send(fd, "GET /athletes HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                return RawSocket.readUntilClosed(fd, seconds: 20)
            }
            #expect(answer.text.hasPrefix("HTTP/1.1 200 OK"), "\(answer.text.prefix(120))")
            #expect(running.connections.refused == 0)
            #expect(running.connections.evicted >= 5)
        }
    }

    /// 1,100 requests without a cookie, then the coach's form: accepted (it got 403, its session
    /// having been pushed out).
    @Test func requestsWithoutACookieNeverPushOutTheCoachsSession() async throws {
        try await DashboardFixture.withRouter { client, fixture in
            let (cookie, token) = try await client.session()
            for _ in 0..<1_100 {
                let page = try await client.get("/static/dashboard.css")
                #expect(page.status == .ok && page.headers[.setCookie] != nil)
            }
            #expect(fixture.server.access.sessionCount == 0, "nothing is stored without a password")
            let form = try await client.postRaw("/athletes", [("name", "Zoe"), ("_csrf", token)], headers: [.cookie: cookie])
            #expect(form.status == .seeOther, "\(form.status) \(form.text)")
            let forged = try await client.postRaw("/athletes", [("name", "Mallory"), ("_csrf", String(repeating: "0", count: 64))],
                                                  headers: [.cookie: cookie])
            #expect(forged.status == .forbidden, "a token not made for this cookie is refused")
        }
    }

    /// With a password, only a login stores a session: a logged-in coach keeps it whatever comes
    /// without a cookie, and the oldest of many logins gives way only to other logins.
    @Test func withAPasswordOnlyLoginsStoreSessions() throws {
        let access = DashboardAccess(passwordHash: try PasswordHash.make(DashboardSecurityTests.password, rounds: 1000))
        let coach = try #require(access.logIn(password: DashboardSecurityTests.password))
        #expect(access.logIn(password: "guess") == nil)
        for _ in 0..<1_100 { #expect(access.session(nil) == nil) }
        #expect(access.sessionCount == 1)
        let start = Date()
        // Other logins fill the store; the coach, using the dashboard all along, is never the one to go.
        for index in 0..<(DashboardAccess.maximumSessions + 50) {
            _ = access.open(loggedIn: true, now: start.addingTimeInterval(Double(index)))
            if index % 100 == 0 { #expect(access.session(coach.cookie, now: start.addingTimeInterval(Double(index))) != nil) }
        }
        #expect(access.sessionCount == DashboardAccess.maximumSessions)
        #expect(access.session(coach.cookie, now: start.addingTimeInterval(2_000))?.loggedIn == true)
    }

    /// A request addressed to another host name is refused whatever its Origin (DNS rebinding:
    /// it was answered with the athletes' data); IP addresses, localhost and the configured names pass.
    @Test func aForeignHostIsRefused() async throws {
        try await DashboardConnectionTests.withDashboard { running in
            let foreign = try await DashboardConnectionTests.exchange(
                running.port, "GET /api/athletes HTTP/1.1\r\nHost: evil.example:\(running.port)\r\nConnection: close\r\n\r\n")
            #expect(foreign.text.hasPrefix("HTTP/1.1 421 Misdirected Request"), "\(foreign.text.prefix(80))")
            #expect(!foreign.text.contains("Ana Ruiz"), "no athlete's data")
            #expect(foreign.text.contains("evil.example"))
            let live = try await DashboardConnectionTests.exchange(
                running.port, "GET /live HTTP/1.1\r\nHost: evil.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nOrigin: http://evil.example\r\n\r\n")
            #expect(!live.text.hasPrefix("HTTP/1.1 101"), "no live page for a foreign host: \(live.text.prefix(80))")
            for host in ["127.0.0.1:\(running.port)", "localhost:\(running.port)", "LOCALHOST", "[::1]:\(running.port)"] {
                let page = try await DashboardConnectionTests.exchange(
                    running.port, "GET /api/athletes HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n")
                #expect(page.text.hasPrefix("HTTP/1.1 200 OK"), "\(host): \(page.text.prefix(80))")
            }
        }
        let lan = DashboardAccess(hostNames: ["gym-pc", "gym-pc.local"])
        #expect(lan.allowsHost("gym-pc.local:8080") && lan.allowsHost("GYM-PC") && lan.allowsHost("192.168.1.20:8080"))
        #expect(lan.allowsHost(nil), "no Host: no browser page")
        for bad in ["evil.example", "evil.example:8080", "gym-pc.evil.example", "127.0.0.1.evil.example", "1.2.3.4:80x", "[::1", ""] {
            #expect(!lan.allowsHost(bad), "\(bad)")
        }
    }

    @Test func theHeaderScannerFindsTheEndAndAnUpgrade() {
        var scanner = HeaderScanner()
        #expect(scanner.feed(Array("\r\nGET / HTTP/1.1\r\nHo".utf8)) == nil)
        #expect(scanner.feed(Array("st: x\r\n".utf8)) == nil)
        #expect(scanner.feed(Array("\r\nbody".utf8)) == false)
        var upgrade = HeaderScanner()
        #expect(upgrade.feed(Array("GET /live HTTP/1.1\nUpgrade: websocket\n\n".utf8)) == true)
        var trickle = HeaderScanner()
        for byte in Array("GET / HTTP/1.1\r\nHost: x\r\n\r".utf8) { #expect(trickle.feed([byte]) == nil) }
        #expect(trickle.feed([0x0A]) == false)
    }
}
