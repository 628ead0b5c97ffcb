import BluetideSerial
import BluetideSerialWeb
import Hummingbird
import HummingbirdTesting
import Testing

/// `uart plot`: numbers found in lines, kept and exported, and the page served.
@Suite struct PlotTests {
    private func parsed(_ lines: [String]) -> [[String]] {
        var parser = NumericLineParser()
        return lines.map { parser.parse($0).map { "\($0.name)=\($0.value)" } }
    }

    @Test func numbersAreFoundInKeyValueCSVAndWhitespaceLines() {
        #expect(parsed(["sine=0.309 counter=2\n"]) == [["sine=0.309", "counter=2.0"]])
        #expect(parsed(["a:1,b:-2.5;c=1e3"]) == [["a=1.0", "b=-2.5", "c=1000.0"]])
        #expect(parsed(["21.5 40\t7"]) == [["1=21.5", "2=40.0", "3=7.0"]], "unnamed columns are numbered")
        // A CSV header names the columns after it; text and non-finite numbers are skipped.
        #expect(parsed(["temp,hum", "21.5,40", "22,oops", "OK+CONN", "x=nan y=3", ""]) == [
            [], ["temp=21.5", "hum=40.0"], ["temp=22.0"], [], ["y=3.0"], [],
        ])
    }

    @Test func feedKeepsPointsAndExportsThemAsCSV() async {
        let feed = PlotFeed(historyLength: 3)
        await feed.publish(line: "sine=0.5 counter=1", t: 0.1)
        await feed.publish(line: "no numbers here", t: 0.2)
        await feed.publish(line: "counter=2 extra=7", t: 0.3)
        #expect(await feed.seriesNames == ["sine", "counter", "extra"])
        #expect(await feed.count == 2)
        #expect(await feed.csv() == "seconds,sine,counter,extra\n0.1,0.5,1,\n0.3,,2,7\n")
        for t in [0.4, 0.5] { await feed.publish(line: "counter=3", t: t) }
        #expect(await feed.count == 3, "only the last historyLength points are kept")
        let late = await feed.listen()
        var iterator = late.makeAsyncIterator()
        #expect(await iterator.next() == "{\"t\":0.3,\"values\":{\"counter\":2,\"extra\":7}}", "a late page gets the kept points first")
        await feed.finish()
    }

    @Test func pageAndExportAreServed() async throws {
        let feed = PlotFeed()
        await feed.publish(line: "sine=1 counter=0", t: 0)
        let app = Application(router: PlotWebServer(feed: feed, title: "Robot <1>").router())
        try await app.test(.router) { client in
            try await client.execute(uri: "/", method: .get) { response in
                #expect(response.status == .ok)
                let page = String(buffer: response.body)
                #expect(page.contains("Robot &lt;1&gt;"))
                #expect(page.contains("id=\"pause\"") && page.contains("id=\"export\"") && page.contains("<canvas id=\"chart\">"))
                #expect(page.contains("/live"))
            }
            try await client.execute(uri: "/export.csv", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/csv; charset=utf-8")
                #expect(String(buffer: response.body) == "seconds,sine,counter\n0,1,0\n")
            }
        }
        await feed.finish()
    }
}
