import BluetideReflex
import BluetideTestSupport
import Foundation
import Synchronization
import Testing
@testable import BluetideCommands
@testable import BluetideReflexWeb

/// The dashboard as a person sees it: `bluetide reflex coach serve --emulate --sample-data` on
/// a free port, pages loaded in headless Chromium (Debian's `chromium`), the rendered DOM
/// checked, and a run started from the page whose results the page's script writes in as they
/// arrive over the WebSocket.
///
/// With `BLUETIDE_SCREENSHOTS=DIR` set, a PNG of each page is written to DIR (the README's
/// pictures: `BLUETIDE_SCREENSHOTS=docs/screenshots swift test --filter DashboardBrowserTests`).
@Suite struct DashboardBrowserTests {
    struct Timeout: Error, CustomStringConvertible {
        var description: String { "the browser test did not finish in time" }
    }

    /// What the browser saw.
    struct Findings: Sendable {
        var athleteNames: [String] = []
        var chartsOnAthletePage = 0
        var editorStepsBefore = 0
        var editorStepsAfter = 0
        var editorTargetsAfter = ""
        var buttonColours: [String] = []
        var initialRunState = ""
        var finalRunState = ""
        var finalRunText = ""
        var rows: [[String]] = []
        var statesWhenRowsArrived: [String] = []
        var sessionLink = ""
        /// Per page at 390 px: how far the page is wider than the screen (0 = fits; tables scroll inside their box).
        var phoneOverflow: [String: Int] = [:]
        /// Per page at 390 px: the smallest chart text as drawn, CSS px.
        var phoneChartText: [String: Double] = [:]
        /// The live table's reaction-time cells of missed steps.
        var missCells: [String] = []
    }

    @Test(.needs("chromium", install: "apt-get install chromium")) func theDashboardWorksInHeadlessChromium() async throws {
        _ = try #require(HeadlessChromium.executable(), "chromium is not installed: apt-get install chromium (.ci/run does)")
        let db = NSTemporaryDirectory() + "dashboard-\(UUID().uuidString).sqlite"
        defer { try? FileManager.default.removeItem(atPath: db) }
        let command = try ReflexCoachServe.parse(["--host", "127.0.0.1", "--port", "0", "--db", db, "--emulate", "--sample-data",
                                                  "--scan-round-milliseconds", "1000"])
        let lines = Mutex<[String]>([])
        let serving = try await command.start { line in lines.withLock { $0.append(line) } }
        let base = serving.dashboard.localURL
        #expect(lines.withLock { $0 }.contains("open http://127.0.0.1:\(serving.dashboard.port)"))
        #expect(lines.withLock { $0 }.contains { $0.hasPrefix("added sample data: 3 athletes") })
        let shots = ProcessInfo.processInfo.environment["BLUETIDE_SCREENSHOTS"]

        do {
            // The plain command line: --dump-dom prints the DOM after our script has run.
            let dom = try await HeadlessChromium.dumpDOM(base + "/sequences/edit?name=Full%20circle")
            for colour in TargetPalette.colours {
                #expect(dom.contains("class=\"target-button target-\(colour.target)\" data-target=\"\(colour.target)\" style=\"background:\(colour.fill)"))
            }
            #expect(occurrences(of: "aria-label=\"step ", in: dom) == 10, "the editor's script drew one time input per step")

            let findings = try await withRunTimeLimit(90, onTimeout: { Timeout() }) {
                try await HeadlessChromium.session { browser in try Self.browse(browser, base: base, screenshots: shots) }
            }
            #expect(findings.athleteNames == ["Ana Ruiz", "Lea Schmidt", "Marco Bianchi"])
            #expect(findings.chartsOnAthletePage == 4, "trend, per target, progress (issue 27) and the latest session")
            #expect(findings.buttonColours == TargetPalette.colours.map(\.fill).map(Self.rgb))
            #expect(findings.editorStepsAfter == findings.editorStepsBefore + 2)
            #expect(findings.editorTargetsAfter == "0,1,2,3,4,5,4,3,2,1,5,0")
            #expect(findings.initialRunState == "idle")
            #expect(findings.finalRunState == "complete", "\(findings.finalRunText)")
            #expect(findings.rows.map { $0[0] } == ["0", "1", "2", "3", "4", "5"])
            #expect(findings.rows.map { $0[1] } == ["0", "1", "0", "1", "2", "3"], "the Jab warm-up targets, in order")
            #expect(findings.statesWhenRowsArrived == Array(repeating: "running", count: 6),
                    "each result was written into the page while the run was still going")

            // What the page showed is what was stored.
            let sessionID = try #require(Int64(findings.sessionLink.split(separator: "/").last.map(String.init) ?? ""))
            let store = try CoachStore(path: db)
            let stored = try store.steps(sessionID: sessionID)
            #expect(stored.map { "\($0.reactionMilliseconds)" } == findings.rows.map { $0[3] })
            #expect(stored.map { $0.hit ? "yes" : "no" } == findings.rows.map { $0[2] })
            #expect(try store.session(id: sessionID)?.complete == true)

            // A phone (390 px): no page is wider than the screen, chart text is at least 11 px.
            #expect(findings.phoneOverflow.count == 4 && findings.phoneOverflow.values.allSatisfy { $0 == 0 }, "\(findings.phoneOverflow)")
            #expect(findings.phoneChartText.count == 2 && findings.phoneChartText.values.allSatisfy { $0 >= 11 }, "\(findings.phoneChartText)")
            #expect(findings.missCells.allSatisfy { $0 == "–" }, "a miss has no reaction time: \(findings.missCells)")
        } catch {
            await serving.stop()
            throw error
        }
        await serving.stop()
    }

    /// Drives the pages (on the browser's thread).
    static func browse(_ browser: HeadlessChromium, base: String, screenshots: String?) throws -> Findings {
        var findings = Findings()
        func shot(_ name: String, maxHeight: Double = 4000) throws {
            guard let screenshots else { return }
            try FileManager.default.createDirectory(atPath: screenshots, withIntermediateDirectories: true)
            try browser.screenshot(maxHeight: maxHeight).write(to: URL(fileURLWithPath: screenshots).appendingPathComponent(name))
        }
        try browser.viewport(width: 1000, height: 1400)

        try browser.open(base + "/athletes")
        findings.athleteNames = try browser.evaluate("Array.from(document.querySelectorAll('#athletes tbody a')).map(a => a.textContent)")
            as? [String] ?? []
        try shot("athletes.png")

        try browser.open(base + "/athletes/1")
        findings.chartsOnAthletePage = Self.int(try browser.evaluate("document.querySelectorAll('figure.chart svg rect').length > 0 ? document.querySelectorAll('figure.chart svg').length : 0"))
        try shot("athlete.png", maxHeight: 2500)

        try browser.open(base + "/sequences/edit?name=Full%20circle")
        findings.buttonColours = try browser.evaluate(
            "Array.from(document.querySelectorAll('.target-button')).map(b => getComputedStyle(b).backgroundColor)") as? [String] ?? []
        findings.editorStepsBefore = Self.int(try browser.evaluate("document.querySelectorAll('#steps li').length"))
        _ = try browser.evaluate("document.querySelector('.target-button[data-target=\"5\"]').click(); document.querySelector('.target-button[data-target=\"0\"]').click(); true")
        findings.editorStepsAfter = Self.int(try browser.evaluate("document.querySelectorAll('#steps li').length"))
        findings.editorTargetsAfter = try browser.evaluate("document.getElementById('targets').value") as? String ?? ""
        try shot("sequence-editor.png")

        try browser.viewport(width: 420, height: 900, mobile: true)
        try browser.open(base + "/run?athlete=1&sequence=Jab%20warm-up")
        try browser.waitUntil("document.getElementById('live').dataset.connected === 'yes' && document.getElementById('run-state').dataset.state === 'idle'",
                              what: "the run page's WebSocket")
        findings.initialRunState = try browser.evaluate("document.getElementById('run-state').dataset.state") as? String ?? ""
        // Note the run's state at the moment each result row is inserted, then press Start.
        _ = try browser.evaluate("""
            window.rowStates = [];
            new MutationObserver(changes => changes.forEach(change => change.addedNodes.forEach(() =>
              window.rowStates.push(document.getElementById('run-state').dataset.state))))
              .observe(document.querySelector('#live-steps tbody'), { childList: true });
            document.getElementById('start-button').click();
            true
            """)
        try browser.waitUntil("['complete', 'incomplete', 'failed'].includes(document.getElementById('run-state').dataset.state)",
                              what: "the end of the run", seconds: 60)
        findings.finalRunState = try browser.evaluate("document.getElementById('run-state').dataset.state") as? String ?? ""
        findings.finalRunText = try browser.evaluate("document.getElementById('run-state').textContent") as? String ?? ""
        findings.rows = try browser.evaluate("""
            Array.from(document.querySelectorAll('#live-steps tbody tr')).reverse()
              .map(r => [r.dataset.step, r.dataset.target, r.dataset.hit, r.dataset.ms])
            """) as? [[String]] ?? []
        findings.statesWhenRowsArrived = try browser.evaluate("window.rowStates") as? [String] ?? []
        findings.sessionLink = try browser.evaluate("document.getElementById('session-link').getAttribute('href')") as? String ?? ""
        try shot("run.png")
        findings.missCells = try browser.evaluate(
            "Array.from(document.querySelectorAll('#live-steps tbody tr[data-hit=\"no\"] td.num')).map(c => c.textContent).filter(t => t.endsWith('ms') || t === '–')")
            as? [String] ?? []

        // The phone, then a laptop, for the README's pictures.
        let pages = [("athletes", "/athletes"), ("athlete", "/athletes/1"), ("session", findings.sessionLink), ("run", "/run")]
        try browser.viewport(width: 390, height: 844, mobile: true)
        for (name, path) in pages {
            try browser.open(base + path)
            findings.phoneOverflow[name] = Self.int(try browser.evaluate("document.documentElement.scrollWidth - window.innerWidth"))
            let smallest = try browser.evaluate("""
                (() => { const sizes = Array.from(document.querySelectorAll('figure svg text')).map(t => {
                  const svg = t.ownerSVGElement; const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
                  return parseFloat(t.getAttribute('font-size') || getComputedStyle(t).fontSize) * scale; });
                  return sizes.length ? Math.min.apply(null, sizes) : -1; })()
                """)
            if let size = (smallest as? NSNumber)?.doubleValue, size >= 0 { findings.phoneChartText[name] = size }
            try shot("phone-\(name).png", maxHeight: 3000)
        }
        try browser.viewport(width: 1280, height: 900)
        for (name, path) in pages {
            try browser.open(base + path)
            try shot("desktop-\(name).png", maxHeight: 3000)
        }
        return findings
    }

    static func int(_ value: Any?) -> Int { (value as? NSNumber)?.intValue ?? (value as? Int) ?? -1 }

    /// `#D7263D` as CSS computes it: `rgb(215, 38, 61)`.
    static func rgb(_ hex: String) -> String {
        let value = Int(hex.dropFirst(), radix: 16) ?? 0
        return "rgb(\(value >> 16), \(value >> 8 & 0xFF), \(value & 0xFF))"
    }
}
