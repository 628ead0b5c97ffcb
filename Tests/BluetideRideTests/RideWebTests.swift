import BluetideRide
import BluetideRideWeb
import BluetideTestSupport
import Foundation
import HummingbirdWSClient
import Logging
import Synchronization
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `ride serve`'s page and WebSocket on a real port.
@Suite(.serialized, .timeLimit(.minutes(2))) struct RideWebTests {
    static func sample(_ t: Double, power: Int?, heartRate: Int? = 130) -> RideSample {
        RideSample(time: t, trigger: .tick, speedKmh: 30, cadenceRpm: 90, powerWatts: power, heartRateBpm: heartRate, distanceMeters: t * 8,
                   target: .power(watts: 200))
    }

    static func get(_ url: String) async throws -> (status: Int, body: String) {
        let (data, response) = try await URLSession.shared.data(from: try #require(URL(string: url)))
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    @Test func thePageTheLatestSampleAndTheLiveSocket() async throws {
        let feed = RideLiveFeed(historyLength: 3, startedAt: Date(timeIntervalSince1970: 1_795_000_000))
        let running = try await RideWebServer(feed: feed, title: "Tacx <Neo> & HRM").start(host: "127.0.0.1", port: 0)
        do {
            let page = try await Self.get("\(running.localURL)/")
            #expect(page.status == 200)
            #expect(page.body.contains("<canvas id=\"chart\">"))
            #expect(page.body.contains("<title>Tacx &lt;Neo&gt; &amp; HRM</title>"), "the title is escaped")
            #expect(page.body.contains("\"/live\""))
            #expect(try await Self.get("\(running.localURL)/latest.json").status == 404, "no sample yet")

            // Four samples with a history of three: a page connecting now gets the last three first.
            for t in 1...4 { await feed.publish(Self.sample(Double(t), power: 190 + t)) }
            await feed.publish(RideSample(time: 4.5, trigger: .update, powerWatts: 999))  // not a tick: not sent
            let latest = try await Self.get("\(running.localURL)/latest.json")
            #expect(latest.status == 200)
            #expect(latest.body.contains("\"powerWatts\":194"))
            #expect(latest.body.contains("\"utc\":\"2026-11-18T11:06:44.000Z\""), "the ride's start plus 4 s")

            let received = Mutex<[String]>([])
            let logger = { var logger = Logger(label: "ride-web-test"); logger.logLevel = .warning; return logger }()
            try await guarded("four live messages", seconds: 30) {
                try await WebSocketClient.connect(url: "ws://127.0.0.1:\(running.port)/live", logger: logger) { inbound, outbound, _ in
                    var count = 0
                    for try await message in inbound.messages(maxSize: 1 << 16) {
                        guard case let .text(text) = message else { continue }
                        received.withLock { $0.append(text) }
                        count += 1
                        if count == 3 { await feed.publish(Self.sample(5, power: nil)) }
                        if count == 4 { break }
                    }
                    try await outbound.close(.normalClosure, reason: nil)
                }
            }
            let messages = received.withLock { $0 }.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            #expect(messages.map { ($0["time"] as? [String: Any])?["monotonic"] as? Double } == [2, 3, 4, 5])
            #expect(messages.allSatisfy { $0["type"] as? String == "sample" })
            #expect(messages.prefix(3).map { $0["powerWatts"] as? Int } == [192, 193, 194])
            #expect(messages.last?["powerWatts"] == nil, "a missing power is left out, never zero")
            #expect((messages.last?["target"] as? [String: Any])?["powerWatts"] as? Int == 200)
        } catch {
            await running.stop()
            throw error
        }
        await running.stop()
    }

    @Test func aBusyPortIsReported() async throws {
        let first = try await RideWebServer(feed: RideLiveFeed()).start(host: "127.0.0.1", port: 0)
        await #expect(throws: (any Error).self) {
            let second = try await RideWebServer(feed: RideLiveFeed()).start(host: "127.0.0.1", port: first.port)
            await second.stop()
        }
        await first.stop()
    }

    /// Issue 29 item 3: the page's controls. With a control the page has its buttons and token;
    /// `/control` carries commands out and answers each; a wrong token or another site's page
    /// gets no socket.
    @Test func thePageControlsTheRideOverItsGuardedSocket() async throws {
        let done = Mutex<[String]>([])
        let control = RideWebControl { line in
            done.withLock { $0.append(line) }
            return "\(try RideControlCommand.parse(line))"
        }
        let access = RideWebAccess(token: String(repeating: "ab", count: 32))
        let running = try await RideWebServer(feed: RideLiveFeed(), control: control, access: access).start(host: "127.0.0.1", port: 0)
        let viewOnly = try await RideWebServer(feed: RideLiveFeed()).start(host: "127.0.0.1", port: 0)
        do {
            let page = try await Self.get("\(running.localURL)/")
            #expect(page.body.contains("data-token=\"\(access.token)\""))
            for button in ["erg", "slope", "pause", "start", "lap", "workout", "free"] { #expect(page.body.contains("<button id=\"\(button)\">")) }
            #expect(page.body.contains("\"/control?token=\""))
            let plain = try await Self.get("\(viewOnly.localURL)/")
            #expect(!plain.body.contains("data-token"), "no controls without a control")

            let logger = { var logger = Logger(label: "ride-web-test"); logger.logLevel = .warning; return logger }()
            let replies = Mutex<[String]>([])
            try await guarded("three replies", seconds: 30) {
                try await WebSocketClient.connect(url: "ws://127.0.0.1:\(running.port)/control?token=\(access.token)", logger: logger) { inbound, outbound, _ in
                    try await outbound.write(.text(#"{"id":1,"command":"erg 200"}"#))
                    try await outbound.write(.text("faster"))
                    try await outbound.write(.text(#"{"id":"x"}"#))
                    var count = 0
                    for try await message in inbound.messages(maxSize: 1 << 16) {
                        guard case let .text(text) = message else { continue }
                        replies.withLock { $0.append(text) }
                        count += 1
                        if count == 3 { break }
                    }
                    try await outbound.close(.normalClosure, reason: nil)
                }
            }
            let answers = replies.withLock { $0 }.map { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] ?? [:] }
            #expect(answers.map { $0["type"] as? String } == ["reply", "reply", "reply"])
            #expect(answers.map { $0["ok"] as? Bool } == [true, false, false])
            #expect(answers.first?["id"] as? Int == 1)
            #expect(answers.first?["text"] as? String == "\(RideControlCommand.target(.power(watts: 200)))")
            #expect((answers.dropFirst().first?["text"] as? String)?.hasPrefix("unknown command \"faster\"") == true)
            #expect(answers.last?["id"] as? String == "x")
            #expect(done.withLock { $0 } == ["erg 200", "faster"])

            // No socket for a wrong token, for another site's page, nor on a server without controls.
            for (url, origin) in [
                ("ws://127.0.0.1:\(running.port)/control?token=\(String(repeating: "cd", count: 32))", nil),
                ("ws://127.0.0.1:\(running.port)/control", nil),
                ("ws://127.0.0.1:\(running.port)/control?token=\(access.token)", "http://evil.example"),
                ("ws://127.0.0.1:\(viewOnly.port)/control?token=\(access.token)", nil),
            ] as [(String, String?)] {
                var configuration = WebSocketClientConfiguration()
                if let origin { configuration.additionalHeaders[.origin] = origin }
                let opened = Mutex(false)
                _ = try? await guarded("a refused socket", seconds: 30) { [configuration] in
                    try await WebSocketClient.connect(url: url, configuration: configuration, logger: logger) { _, outbound, _ in
                        opened.withLock { $0 = true }
                        try await outbound.close(.normalClosure, reason: nil)
                    }
                }
                #expect(!opened.withLock { $0 }, "\(url) \(origin ?? "")")
            }
            #expect(done.withLock { $0 }.count == 2)
        } catch {
            await running.stop()
            await viewOnly.stop()
            throw error
        }
        await running.stop()
        await viewOnly.stop()
    }

    @Test func onlyThePagesOwnOriginAndAddressesMayControl() {
        #expect(RideWebAccess.refusal(host: "127.0.0.1:8088", origin: "http://127.0.0.1:8088") == nil)
        #expect(RideWebAccess.refusal(host: "localhost:8088", origin: nil) == nil)
        #expect(RideWebAccess.refusal(host: "[::1]:8088", origin: "http://[::1]:8088") == nil)
        #expect(RideWebAccess.refusal(host: "192.168.1.20:8088", origin: "ws://192.168.1.20:8088") == nil)
        #expect(RideWebAccess.refusal(host: "127.0.0.1:8088", origin: "http://evil.example") != nil)
        #expect(RideWebAccess.refusal(host: "evil.example:8088", origin: "http://evil.example:8088") != nil, "DNS rebinding")
        #expect(RideWebAccess.refusal(host: "300.1.1.1", origin: nil) != nil)
        let access = RideWebAccess()
        #expect(access.token.count == 64)
        #expect(access.accepts(token: access.token))
        #expect(!access.accepts(token: String(access.token.dropLast()) + "x"))
        #expect(!access.accepts(token: nil))
        #expect(RideWebAccess().token != access.token)
    }

    /// The page with its controls in headless Chromium (Debian's `chromium`): its script runs
    /// (the live socket opens from the browser, its own origin passing the guard) and the controls
    /// are there with the page's token. (Clicking them is not driven here: the socket's commands
    /// are checked above.)
    @Test(.needs("chromium", install: "apt-get install chromium")) func thePageRunsInHeadlessChromium() async throws {
        _ = try #require(HeadlessChromium.executable(), "chromium is not installed (apt-get install chromium)")
        let feed = RideLiveFeed()
        let access = RideWebAccess()
        let running = try await RideWebServer(feed: feed, control: RideWebControl { _ in "ok" }, access: access).start(host: "127.0.0.1", port: 0)
        for t in 1...3 { await feed.publish(Self.sample(Double(t), power: 211)) }
        let url = running.localURL + "/"
        let dom: String
        do {
            // The page is read once its script has opened /live and shown the latest sample (an
            // event wait inside the browser), not after a fixed budget of the browser's time.
            dom = try await HeadlessChromium.session { browser in
                try browser.open(url)
                try browser.waitUntil(
                    "document.getElementById('state').textContent === 'live' && document.getElementById('power').textContent === '211'",
                    what: "the page live with the latest sample", seconds: 90)
                return try browser.evaluate("document.documentElement.outerHTML") as? String ?? ""
            }
        } catch {
            await running.stop()
            throw error
        }
        await running.stop()
        #expect(dom.contains(#"<span id="state" class="">live</span>"#), "the script ran and /live opened: \(dom.prefix(600))")
        #expect(dom.contains(#"<span class="value" id="power">211</span>"#))
        #expect(dom.contains("data-token=\"\(access.token)\""))
        #expect(dom.contains(#"<button id="pause">Pause</button>"#))
    }

    /// A click on the page's ERG button in headless Chromium reaches the ride: Chromium is driven
    /// over its DevTools protocol (the test's own WebSocket to `--remote-debugging-port`), types
    /// 230 into the watts field and clicks "Set ERG"; the ride's control gets `erg 230` and the
    /// page shows the ride's answer. Every wait is on an event (the DevTools line, the reply),
    /// with generous limits; the waiting for the page's reply runs inside the browser.
    @Test(.needs("chromium", install: "apt-get install chromium"), .timeLimit(.minutes(3)))
    func aClickOnTheERGButtonInChromiumSetsTheRidesTarget() async throws {
        let chromium = try #require(OptionalTool.executable("chromium"), "chromium is not installed (apt-get install chromium)")
        let received = Mutex<[String]>([])
        let control = RideWebControl { line in
            received.withLock { $0.append(line) }
            return "\(try RideControlCommand.parse(line))"
        }
        let running = try await RideWebServer(feed: RideLiveFeed(), control: control, access: RideWebAccess()).start(host: "127.0.0.1", port: 0)
        let profile = NSTemporaryDirectory() + "chromium-ride-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: profile) }
        let browser = try BumbleProcess.launch(name: "chromium", executable: chromium, arguments: [
            "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=\(profile)", "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0", "--remote-allow-origins=*", running.localURL + "/",
        ])
        let result = Mutex<String?>(nil)
        do {
            let listening = try await browser.firstLine(from: .stderr, timeout: .seconds(90), describing: "DevTools listening") {
                $0.hasPrefix("DevTools listening on ws://")
            }
            let browserSocket = try #require(listening.range(of: #"ws://\S+"#, options: .regularExpression).map { String(listening[$0]) })
            let script = """
                new Promise((resolve) => {
                  const go = () => {
                    const button = document.getElementById("erg");
                    if (!button || document.readyState !== "complete") { setTimeout(go, 50); return; }
                    document.getElementById("watts").value = "230";
                    button.click();
                    const check = () => {
                      const reply = document.getElementById("reply").textContent;
                      if (reply && reply !== "…") resolve(reply); else setTimeout(check, 50);
                    };
                    check();
                  };
                  go();
                })
                """
            @Sendable func message(_ object: [String: Any]) throws -> String {
                String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
            }
            let logger = { var logger = Logger(label: "ride-web-cdp"); logger.logLevel = .warning; return logger }()
            // One socket to the browser: targets are announced as they appear; the page's is
            // attached (flat session), then the script runs in it.
            try await guarded("the click's reply in the page", seconds: 90) {
                try await WebSocketClient.connect(url: browserSocket, logger: logger) { inbound, outbound, _ in
                    try await outbound.write(.text(try message(["id": 1, "method": "Target.setDiscoverTargets", "params": ["discover": true]])))
                    var attached = false
                    var session: String?
                    var retries = 0
                    for try await frame in inbound.messages(maxSize: 1 << 20) {
                        guard case let .text(text) = frame,
                              let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else { continue }
                        let info = (object["params"] as? [String: Any])?["targetInfo"] as? [String: Any]
                        if !attached, let info, info["type"] as? String == "page",
                           (info["url"] as? String)?.hasPrefix(running.localURL) == true, let target = info["targetId"] as? String {
                            attached = true
                            try await outbound.write(.text(try message(["id": 2, "method": "Target.attachToTarget", "params": ["targetId": target, "flatten": true]])))
                        } else if object["id"] as? Int == 2, let id = (object["result"] as? [String: Any])?["sessionId"] as? String {
                            session = id
                            try await outbound.write(.text(try message([
                                "id": 3, "sessionId": session, "method": "Runtime.evaluate",
                                "params": ["expression": script, "awaitPromise": true, "returnByValue": true],
                            ])))
                        } else if object["id"] as? Int == 3, object["error"] != nil, retries < 20, let session {
                            // The page was still loading (its first document replaced): run it again.
                            retries += 1
                            try await outbound.write(.text(try message([
                                "id": 3, "sessionId": session, "method": "Runtime.evaluate",
                                "params": ["expression": script, "awaitPromise": true, "returnByValue": true],
                            ])))
                        } else if object["id"] as? Int == 3 {
                            let value = ((object["result"] as? [String: Any])?["result"] as? [String: Any])?["value"] as? String
                            result.withLock { $0 = value ?? text }
                            break
                        } else if object["id"] as? Int == 2 {
                            result.withLock { $0 = text }
                            break
                        }
                    }
                    try await outbound.close(.normalClosure, reason: nil)
                }
            }
        } catch {
            await browser.stop()
            await running.stop()
            throw error
        }
        await browser.stop()
        await running.stop()
        #expect(received.withLock { $0 } == ["erg 230"], "the click sent the typed watts")
        #expect(result.withLock { $0 } == "\(RideControlCommand.target(.power(watts: 230)))", "the page shows the ride's answer")
    }
}
