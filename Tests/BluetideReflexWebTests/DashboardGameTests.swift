import BluetideReflex
import BluetideReflexCoach
import BluetideTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing
@testable import BluetideCommands
@testable import BluetideReflexWeb

/// Games from the dashboard and the gym's screen (`/tv`).
@Suite struct DashboardGameTests {
    struct Timeout: Error, CustomStringConvertible {
        var description: String { "the game did not finish in time" }
    }

    @Test func theGameFormRefusesWhatCannotBePlayedAndTheTVPageCarriesTheBoards() async throws {
        try await DashboardFixture.withRouter { client, fixture in
            let athletes = try fixture.store.athletes()
            let missing = try await client.post("/game", [("mode", "relay"), ("teams", "0"), ("sequence", "")])
            #expect(missing.status == .unprocessableContent)
            let page = String(buffer: missing.body)
            #expect(page.contains("data-field=\"teams\"") && page.contains("data-field=\"athletes\"") && page.contains("data-field=\"sequence\""))
            // Three athletes do not split into two relay teams: refused by the game's rules, nothing started.
            let uneven = try await client.post("/game", [("mode", "relay"), ("teams", "2"), ("sequence", "Jab warm-up")]
                + athletes.map { ("athletes", "\($0.id ?? -1)") })
            #expect(uneven.status == .unprocessableContent)
            #expect(String(buffer: uneven.body).contains("3 athletes do not split into 2 teams"))
            #expect(await fixture.server.runs.isRunning == false)

            let tv = try await client.get("/tv")
            #expect(tv.status == .ok)
            let html = String(buffer: tv.body)
            #expect(html.contains("<script src=\"/static/tv.js\" defer></script>") && html.contains("id=\"tv-lanes\""))
            #expect(html.contains("class=\"board\""), "the sample gym's sessions are on the boards")
            let script = try await client.get("/static/tv.js")
            #expect(script.status == .ok && String(buffer: script.body).contains("game-over"))
            let board = try await client.get("/tv/board?sequence=Nothing%20yet")
            #expect(String(buffer: board.body).contains("No complete sessions yet."))
        }
    }

    /// `serve --emulate` starts two trainers; a head-to-head between two athletes runs on them,
    /// every message of a lane says its lane, the results are stored, the board shows them, and
    /// the TV page in headless Chromium draws both lanes and the decision.
    @Test func aHeadToHeadFromTheDashboardIsLiveOnTheTVPageAndOnTheBoard() async throws {
        let db = NSTemporaryDirectory() + "dashboard-game-\(UUID().uuidString).sqlite"
        defer { try? FileManager.default.removeItem(atPath: db) }
        let command = try ReflexCoachServe.parse(["--host", "127.0.0.1", "--port", "0", "--db", db, "--emulate", "--sample-data",
                                                  "--scan-round-milliseconds", "1000"])
        let lines = Mutex<[String]>([])
        let serving = try await command.start { line in lines.withLock { $0.append(line) } }
        #expect(lines.withLock { $0 }.filter { $0.hasPrefix("emulated trainer") }.count == 2)
        #expect(lines.withLock { $0 }.filter { $0.hasPrefix("emulated heart-rate strap") }.count == 2)
        do {
            let store = try CoachStore(path: db)
            let ana = try #require(try store.athletes().first { $0.name == "Ana Ruiz" })
            let lea = try #require(try store.athletes().first { $0.name == "Lea Schmidt" })
            let sequence = try #require(try store.sequence(named: "Jab warm-up"))
            let runs = serving.runs
            let messages = try await withRunTimeLimit(90, onTimeout: { Timeout() }) {
                try await DashboardLiveTests.listen(port: serving.dashboard.port) { message in
                    if message.kind == .idle { try await runs.startGame(mode: .headToHead(.bestMean), athletes: [ana, lea], sequence: sequence) }
                    return message.kind == .gameOver || (message.kind == .failed && message.lane == nil)
                }
            }
            let started = try #require(messages.first { $0.kind == .gameStarted })
            #expect(started.lanes == [["Ana Ruiz"], ["Lea Schmidt"]] && started.mode == "head-to-head")
            let steps = messages.filter { $0.kind == .step }
            #expect(steps.filter { $0.lane == 1 }.allSatisfy { $0.athlete == "Ana Ruiz" })
            #expect(steps.filter { $0.lane == 2 }.allSatisfy { $0.athlete == "Lea Schmidt" })
            #expect(steps.filter { $0.lane == 1 }.count == sequence.targets.count && steps.filter { $0.lane == 2 }.count == sequence.targets.count)
            // Each athlete wore an emulated strap: the heart rate came with the steps.
            #expect(steps.filter { $0.heartRateBpm != nil }.count >= steps.count / 2, "\(steps.map(\.heartRateBpm))")
            let over = try #require(messages.last)
            #expect(over.kind == .gameOver, "\(over.text ?? "")")
            #expect(over.standings?.count == 2)
            let sessionIDs = Set(messages.filter { $0.kind == .ended }.compactMap(\.sessionId))
            #expect(sessionIDs.count == 2)
            for id in sessionIDs { #expect(try store.session(id: id)?.complete == true) }

            let boardText = try DashboardPages(store: store).tvBoards(sequence: "Jab warm-up").description
            // Afterwards each athlete's page shows the progress and reaction time against heart rate.
            let anaPage = try #require(try DashboardPages(store: store).athletePage(id: ana.id ?? -1)).description
            #expect(anaPage.contains("<figure class=\"chart\" id=\"progress\">") && anaPage.contains("<figure class=\"chart\" id=\"heart-rate\">"))
            #expect(boardText.contains("Ana Ruiz") && boardText.contains("Lea Schmidt"))

            if HeadlessChromium.executable() != nil {
                let shots = ProcessInfo.processInfo.environment["BLUETIDE_SCREENSHOTS"]
                let base = serving.dashboard.localURL
                let seen = try await withRunTimeLimit(60, onTimeout: { Timeout() }) {
                    try await HeadlessChromium.session { browser -> [String] in
                        try browser.viewport(width: 1280, height: 720)
                        try browser.open(base + "/tv")
                        // The page catches up on the last game over the WebSocket.
                        try browser.waitUntil("document.getElementById('tv').dataset.state === 'over'", what: "the TV page's game")
                        if let shots {
                            try FileManager.default.createDirectory(atPath: shots, withIntermediateDirectories: true)
                            try browser.screenshot(maxHeight: 1400).write(to: URL(fileURLWithPath: shots).appendingPathComponent("tv.png"))
                        }
                        let lanes = try browser.evaluate("Array.from(document.querySelectorAll('#tv-lanes .lane .figures')).map(e => e.textContent)") as? [String] ?? []
                        let status = try browser.evaluate("document.getElementById('tv-status').textContent") as? String ?? ""
                        return lanes + [status]
                    }
                }
                #expect(seen.count == 3, "\(seen)")
                #expect(seen.prefix(2).allSatisfy { $0.contains("/\(sequence.targets.count) hit") }, "\(seen)")
                #expect(seen.last?.hasPrefix("Game over: ") == true, "\(seen)")
            }
        } catch {
            await serving.stop()
            throw error
        }
        await serving.stop()
    }
}
