import BluetideSerialWeb
import BluetideTestSupport
import Dispatch
import Foundation
import Testing

/// `uart plot`'s page as a person sees it: served by `PlotWebServer` on a free port, loaded in
/// headless Chromium, fed points while it is open; the chart is checked for pixels of each
/// series' colour, the legend for the latest values, and Export CSV (the button's download and
/// the server's `/export.csv`) for one row per point.
@Suite struct PlotBrowserTests {
    struct Timeout: Error, CustomStringConvertible {
        var description: String { "the plot browser test did not finish in time" }
    }

    /// What the page showed.
    struct Findings: Sendable {
        var state = ""
        var pointsBeforeLive = 0
        var pointsAfterLive = 0
        /// Per series colour (`#RRGGBB`), the canvas pixels drawn in it.
        var pixels: [String: Int] = [:]
        var legend = ""
        var download = ""
        var exported = ""
        var served = ""
        var pixelsWhilePaused: [String: Int] = [:]
        var pointsWhilePaused = 0
    }

    @Test(.needs("chromium", install: "apt-get install chromium")) func thePageDrawsLiveSeriesAndExportsThem() async throws {
        _ = try #require(HeadlessChromium.executable(), "chromium is not installed: apt-get install chromium (.ci/run does)")
        let feed = PlotFeed()
        // Two points before the page opens (a late page gets them first) …
        _ = await feed.publish(line: "sine=0.5 counter=0", t: 0)
        _ = await feed.publish(line: "sine=-0.5 counter=1", t: 1)
        let server = try await PlotWebServer(feed: feed, title: "Robot1").start(host: "127.0.0.1", port: 0)
        let url = server.localURL + "/"
        // … and three while it is open: from the browser's thread, each publish waits for the feed.
        let publish: @Sendable (String, Double) -> Void = { line, t in
            let done = DispatchSemaphore(value: 0)
            Task {
                _ = await feed.publish(line: line, t: t)
                done.signal()
            }
            done.wait()
        }
        let findings = try await withRunTimeLimit(120, onTimeout: { Timeout() }) {
            try await HeadlessChromium.session { browser in try Self.browse(browser, url: url, publish: publish) }
        }
        await server.stop()

        #expect(findings.state == "live")
        #expect(findings.pointsBeforeLive == 2, "the kept points came first")
        #expect(findings.pointsAfterLive == 5, "the points published while the page was open arrived over the WebSocket")
        #expect(findings.pixels["#ffb300", default: 0] > 50, "the first series (sine) is drawn: \(findings.pixels)")
        #expect(findings.pixels["#42a5f5", default: 0] > 50, "the second series (counter) is drawn: \(findings.pixels)")
        #expect(findings.legend == "■ sine 0.25|■ counter 4", "the legend shows the latest values")
        let rows = ["seconds,sine,counter", "0,0.5,0", "1,-0.5,1", "2,1,2", "3,-1,3", "4,0.25,4"]
        #expect(findings.download == "plot.csv\n" + rows.joined(separator: "\n") + "\n", "Export CSV saves every point the page holds")
        #expect(findings.served == (rows + ["5,0.75,5"]).joined(separator: "\n") + "\n", "/export.csv has the server's points")
        #expect(findings.pointsWhilePaused == 6, "points keep coming while paused")
        #expect(findings.pixelsWhilePaused == findings.pixels, "the paused chart is not redrawn")
    }

    static func browse(_ browser: HeadlessChromium, url: String, publish: (String, Double) -> Void) throws -> Findings {
        var findings = Findings()
        try browser.viewport(width: 1000, height: 700)
        try browser.open(url)
        try browser.waitUntil("document.getElementById('state').textContent === 'live' && points.length === 2", what: "the page live with the kept points")
        findings.pointsBeforeLive = try browser.evaluate("points.length") as? Int ?? -1
        publish("sine=1 counter=2", 2)
        publish("sine=-1 counter=3", 3)
        publish("sine=0.25 counter=4", 4)
        try browser.waitUntil("points.length === 5", what: "the live points")
        findings.state = try browser.evaluate("document.getElementById('state').textContent") as? String ?? ""
        findings.pointsAfterLive = try browser.evaluate("points.length") as? Int ?? -1
        findings.pixels = try pixels(browser)
        findings.legend = try browser.evaluate("Array.from(document.querySelectorAll('#legend span')).map((s) => s.textContent).join('|')") as? String ?? ""
        // Export CSV: the button makes a link to a blob and clicks it; the click is caught and the blob read.
        findings.download = try browser.evaluate("""
            (async () => {
              let caught = null;
              const click = HTMLAnchorElement.prototype.click;
              HTMLAnchorElement.prototype.click = function () { caught = { href: this.href, name: this.download }; };
              try { document.getElementById('export').click(); } finally { HTMLAnchorElement.prototype.click = click; }
              if (!caught) return "no download";
              return caught.name + "\\n" + await (await fetch(caught.href)).text();
            })()
            """) as? String ?? ""
        // Pause: the chart stays as it was while a point arrives.
        _ = try browser.evaluate("document.getElementById('pause').click()")
        publish("sine=0.75 counter=5", 5)
        try browser.waitUntil("points.length === 6", what: "the point sent while paused")
        findings.pointsWhilePaused = try browser.evaluate("points.length") as? Int ?? -1
        findings.pixelsWhilePaused = try pixels(browser)
        findings.served = try browser.evaluate("fetch('/export.csv').then((r) => r.text())") as? String ?? ""
        return findings
    }

    /// Canvas pixels per series colour (within a small distance, for anti-aliasing).
    static func pixels(_ browser: HeadlessChromium) throws -> [String: Int] {
        let counts = try browser.evaluate("""
            (() => {
              const canvas = document.getElementById('chart');
              const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
              const out = {};
              for (const colour of COLOURS.slice(0, names.length)) {
                const r = parseInt(colour.slice(1, 3), 16), g = parseInt(colour.slice(3, 5), 16), b = parseInt(colour.slice(5, 7), 16);
                let n = 0;
                for (let i = 0; i < data.length; i += 4) {
                  if (data[i + 3] > 200 && Math.abs(data[i] - r) + Math.abs(data[i + 1] - g) + Math.abs(data[i + 2] - b) < 40) n++;
                }
                out[colour] = n;
              }
              return out;
            })()
            """) as? [String: Any] ?? [:]
        return counts.compactMapValues { $0 as? Int }
    }
}
