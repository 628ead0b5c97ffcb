import BluetideTestSupport
import Foundation
import Testing

/// `bluetide uart plot` end to end: the emulated Nordic UART device streams sine and counter
/// lines, the page is opened in headless Chromium and draws both series from them as they come,
/// and Export CSV (the page's download and `/export.csv`) has a row per point.
@Suite struct UARTPlotBrowserTests {
    struct Timeout: Error, CustomStringConvertible {
        var description: String { "the uart plot browser test did not finish in time" }
    }

    struct Findings: Sendable {
        var names = ""
        var pixels: [String: Int] = [:]
        var legend = ""
        var download: [String] = []
        var served: [String] = []
        var pointsLater = 0
        var pointsFirst = 0
    }

    @Test(.needs("chromium", install: "apt-get install chromium")) func thePlotPageChartsTheEmulatedDevicesLines() async throws {
        _ = try #require(HeadlessChromium.executable(), "chromium is not installed: apt-get install chromium (.ci/run does)")
        let plot = try BluetideExecutable.launch(["uart", "plot", "Bluetide UART", "--emulate", "nus", "--stream", "both", "--port", "0"])
        defer { Task { await plot.stop() } }
        let ready = try await plot.firstLine(from: .stderr, timeout: .seconds(60), describing: "plotting at") { $0.contains("plotting at http://") }
        let url = try #require(ready.split(separator: " ").last.map(String.init), "\(ready)")
        let findings = try await withRunTimeLimit(120, onTimeout: { Timeout() }) {
            try await HeadlessChromium.session { browser in try Self.browse(browser, url: url) }
        }
        kill(plot.pid, SIGTERM)
        #expect(await plot.waitForCompletion(timeout: .seconds(30)) == 0, "SIGTERM ends uart plot cleanly")

        #expect(findings.names == "sine,counter")
        #expect(findings.pointsLater > findings.pointsFirst, "points keep arriving while the page is open")
        #expect(findings.pixels["#ffb300", default: 0] > 50, "the sine is drawn: \(findings.pixels)")
        #expect(findings.pixels["#42a5f5", default: 0] > 50, "the counter is drawn: \(findings.pixels)")
        #expect(findings.legend.contains("■ sine ") && findings.legend.contains("■ counter "), "\(findings.legend)")
        #expect(findings.download.first == "plot.csv")
        #expect(findings.download.dropFirst().first == "seconds,sine,counter")
        let rows = findings.download.dropFirst(2)
        #expect(rows.count >= 20, "a row per point the page holds: \(rows.count)")
        #expect(rows.allSatisfy { row in
            let fields = row.split(separator: ",", omittingEmptySubsequences: false)
            return fields.count == 3 && fields.allSatisfy { Double($0) != nil }
        }, "every row has seconds, sine and counter: \(rows.prefix(5))")
        let counters = rows.compactMap { $0.split(separator: ",").last.flatMap { Int($0) } }
        #expect(zip(counters, counters.dropFirst()).allSatisfy { $1 == $0 + 1 }, "the counter goes up by one per row: \(counters.prefix(10))")
        #expect(findings.served.first == "seconds,sine,counter")
        #expect(findings.served.count - 1 >= rows.count, "/export.csv holds at least the page's points")
        let lines = await plot.output(.stdout)
        #expect(lines.contains { $0.hasPrefix("sine=") && $0.contains(" counter=") }, "the lines also go to stdout")
    }

    static func browse(_ browser: HeadlessChromium, url: String) throws -> Findings {
        var findings = Findings()
        try browser.viewport(width: 1000, height: 700)
        try browser.open(url)
        // The emulated device prints 10 lines a second; 20 points are 2 s of them.
        try browser.waitUntil("document.getElementById('state').textContent === 'live' && points.length >= 20",
                              what: "20 live points", seconds: 60)
        findings.pointsFirst = try browser.evaluate("points.length") as? Int ?? -1
        findings.names = try browser.evaluate("names.join(',')") as? String ?? ""
        try browser.waitUntil("points.length > \(findings.pointsFirst)", what: "a further point", seconds: 30)
        _ = try browser.evaluate("document.getElementById('pause').click()")
        findings.pointsLater = try browser.evaluate("points.length") as? Int ?? -1
        findings.pixels = try browser.evaluate("""
            (() => {
              draw();
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
            """).flatMap { $0 as? [String: Any] }?.compactMapValues { $0 as? Int } ?? [:]
        findings.legend = try browser.evaluate("document.getElementById('legend').textContent") as? String ?? ""
        let download = try browser.evaluate("""
            (async () => {
              let caught = null;
              const click = HTMLAnchorElement.prototype.click;
              HTMLAnchorElement.prototype.click = function () { caught = { href: this.href, name: this.download }; };
              try { document.getElementById('export').click(); } finally { HTMLAnchorElement.prototype.click = click; }
              if (!caught) return "no download";
              return caught.name + "\\n" + await (await fetch(caught.href)).text();
            })()
            """) as? String ?? ""
        findings.download = download.split(separator: "\n").map(String.init)
        let served = try browser.evaluate("fetch('/export.csv').then((r) => r.text())") as? String ?? ""
        findings.served = served.split(separator: "\n").map(String.init)
        return findings
    }
}
