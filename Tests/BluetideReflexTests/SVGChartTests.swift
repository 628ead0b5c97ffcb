import BluetideCharts
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing
@testable import BluetideReflex

/// Parses SVG text with Foundation's XMLParser and collects elements with their attributes and text.
final class SVGCollector: NSObject, XMLParserDelegate {
    struct Element { var name: String; var attributes: [String: String]; var text = "" }
    var elements: [Element] = []
    private var open: [Int] = []
    var rootName: String? { elements.first?.name }

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName qName: String?,
                attributes attributeDict: [String: String] = [:]) {
        open.append(elements.count)
        elements.append(Element(name: elementName, attributes: attributeDict))
    }
    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if let i = open.last { elements[i].text += string }
    }
    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
        _ = open.popLast()
    }

    /// Parses `svg`; nil if it is not well-formed.
    static func parse(_ svg: String) -> SVGCollector? {
        let collector = SVGCollector()
        let parser = XMLParser(data: Data(svg.utf8))
        parser.delegate = collector
        return parser.parse() ? collector : nil
    }

    func all(_ name: String, class cls: String? = nil) -> [Element] {
        elements.filter { $0.name == name && (cls == nil || ($0.attributes["class"] ?? "").split(separator: " ").contains { $0 == cls! }) }
    }
}

@Suite("SVGChart")
struct SVGChartTests {
    static let session = SessionResults(
        session: Fixture.session(id: 7, started: Fixture.day0, steps: 6), steps: ReflexStatisticsTests.steps)

    @Test func reactionTimesChartIsWellFormedWithExpectedMarks() throws {
        let svg = SVGChart.reactionTimes(of: Self.session, title: "Ana <& Bo>")
        let doc = try #require(SVGCollector.parse(svg))
        #expect(doc.rootName == "svg")
        let root = doc.elements[0]
        #expect(root.attributes["xmlns"] == "http://www.w3.org/2000/svg")
        #expect(root.attributes["role"] == "img")
        #expect(root.attributes["aria-labelledby"] == "reflex-chart-title reflex-chart-desc")
        #expect(doc.elements[1].name == "title")
        #expect(doc.elements[1].text == "Ana <& Bo>")
        #expect(doc.all("desc").first?.text == "5 steps, 4 hits, 1 misses, mean reaction 350 ms, best 200 ms.")
        let hits = doc.all("rect", class: "hit")
        #expect(hits.count == 4)
        #expect(doc.all("rect", class: "target-0").allSatisfy { $0.attributes["fill"] == TargetPalette.colours[0].fill })
        #expect(doc.all("path", class: "miss").count == 1)
        #expect(doc.all("g", class: "y-axis").count == 1)
        #expect(doc.all("g", class: "x-axis").count == 1)
        let texts = doc.all("text").map(\.text)
        #expect(texts.contains("mean 350 ms"))
        #expect(texts.contains("Reaction time (ms)"))
        #expect(texts.contains("Step"))
        #expect(texts.contains("0 red"))
        #expect(texts.contains("miss"))
        // Six x ticks (steps 1...6, counted from 1 as everywhere) for a six-step program; y ticks 0...1500 by 500 (the miss is 1500 ms).
        #expect(["1", "2", "3", "4", "5", "6"].allSatisfy(texts.contains))
        #expect(["500", "1000", "1500"].allSatisfy(texts.contains))
        // The hit bar titles are tooltips naming step, target and time.
        #expect(doc.all("title").map(\.text).contains("Step 5: target 2 (green), hit after 200 ms"))
        #expect(svg == SVGChart.reactionTimes(of: Self.session, title: "Ana <& Bo>"))
    }

    @Test func reactionTimesChartWithoutData() throws {
        let empty = SessionResults(session: Fixture.session(id: 1, started: Fixture.day0, steps: 0), steps: [])
        let doc = try #require(SVGCollector.parse(SVGChart.reactionTimes(of: empty)))
        #expect(doc.all("text", class: "no-data").first?.text == "No results")
        #expect(doc.all("rect", class: "hit").isEmpty)
        #expect(doc.all("desc").first?.text == "No step results recorded.")
        let allMisses = SessionResults(session: Fixture.session(id: 2, started: Fixture.day0, steps: 2),
                                       steps: [Fixture.step(0, target: 3, hit: false, ms: 1000), Fixture.step(1, target: 4, hit: false, ms: 1000)])
        let missDoc = try #require(SVGCollector.parse(SVGChart.reactionTimes(of: allMisses)))
        #expect(missDoc.all("path", class: "miss").count == 2)
        #expect(missDoc.all("g", class: "mean").isEmpty)
        // Every coordinate is a finite number.
        for element in missDoc.elements {
            for key in ["x", "y", "x1", "y1", "x2", "y2", "width", "height"] {
                if let value = element.attributes[key] { #expect(Double(value)?.isFinite == true, "\(element.name).\(key)=\(value)") }
            }
        }
    }

    @Test func meansOverTimeChartHasLinePointsAndTrend() throws {
        let sessions = [
            Fixture.results(id: 1, started: Fixture.day0, hitTimes: [500]),
            Fixture.results(id: 2, started: Fixture.day0.addingTimeInterval(Fixture.week), hitTimes: [480]),
            Fixture.results(id: 3, started: Fixture.day0.addingTimeInterval(3 * Fixture.week), hitTimes: [300, 400]),
        ]
        let trend = ReflexStatistics.trend(of: sessions)
        let svg = SVGChart.meansOverTime(trend, options: SVGChartOptions(idPrefix: "ana-trend"))
        let doc = try #require(SVGCollector.parse(svg))
        #expect(doc.elements[0].attributes["aria-labelledby"] == "ana-trend-title ana-trend-desc")
        #expect(doc.all("polyline", class: "means").count == 1)
        #expect(doc.all("polyline").first?.attributes["points"]?.split(separator: " ").count == 3)
        #expect(doc.all("circle").count == 3)
        #expect(doc.all("g", class: "trend").count == 1)
        let texts = doc.all("text").map(\.text)
        #expect(texts.contains("trend -52.1 ms/week"))
        #expect(texts.contains("2026-11-19"))
        #expect(doc.all("desc").first?.text
            == "3 sessions from 2026-11-01 to 2026-11-22; first mean 500 ms, last mean 350 ms, trend 75.0 ms faster per session (52.1 ms faster per week).")
        #expect(svg == SVGChart.meansOverTime(trend, options: SVGChartOptions(idPrefix: "ana-trend")))
    }

    @Test func weightChartFitsItsAxisToTheWeights() throws {
        let entries = [
            WeightEntry(athleteId: 1, date: CalendarDate(year: 2026, month: 11, day: 14)!, kilograms: 56.4),
            WeightEntry(athleteId: 1, date: CalendarDate(year: 2026, month: 10, day: 1)!, kilograms: 57.8),
            WeightEntry(athleteId: 1, date: CalendarDate(year: 2026, month: 10, day: 20)!, kilograms: 57.1),
        ]
        let svg = SVGChart.weightOverTime(entries, title: "Ana: weight", options: SVGChartOptions(idPrefix: "ana-weight"))
        let doc = try #require(SVGCollector.parse(svg), "well-formed XML")
        #expect(doc.all("polyline", class: "weights").count == 1)
        #expect(doc.all("circle").count == 3)
        // In date order, whatever order the entries came in.
        #expect(doc.all("title").map(\.text).contains("2026-10-01: 57.8 kg"))
        #expect(doc.all("desc").first?.text == "3 weigh-ins from 2026-10-01 to 2026-11-14; first 57.8 kg, last 56.4 kg.")
        // The axis runs around the weights, not from zero.
        let labels = doc.all("text").map(\.text)
        #expect(labels.contains("56") && labels.contains("58") && !labels.contains("0"), "\(labels)")
        let empty = try #require(SVGCollector.parse(SVGChart.weightOverTime([])))
        #expect(empty.all("text").map(\.text).contains("No weigh-ins"))
    }

    @Test func rangeTicksAreNiceAndWidenedWhenFlat() {
        // 1.4 kg apart: widened to 2 kg around 57.1 (56.1...58.1), then to nice half-kilogram steps.
        #expect(ChartAxis.valueTicks(from: 56.4, to: 57.8, count: 4, minimumSpan: 2) == [56, 56.5, 57, 57.5, 58, 58.5])
        #expect(ChartAxis.valueTicks(from: 70, to: 70, count: 4, minimumSpan: 2) == [69, 69.5, 70, 70.5, 71])
        #expect(ChartAxis.valueTicks(from: 61, to: 58, count: 4) == [58, 59, 60, 61])
        #expect(ChartAxis.valueTicks(from: .nan, to: 3) == ChartAxis.valueTicks(upTo: 0))
    }

    @Test func meansOverTimeWithNoOrOneSession() throws {
        let none = try #require(SVGCollector.parse(SVGChart.meansOverTime(ReflexStatistics.trend(of: []))))
        #expect(none.all("text", class: "no-data").first?.text == "No sessions with hits")
        #expect(none.all("circle").isEmpty)
        let one = try #require(SVGCollector.parse(SVGChart.meansOverTime(
            ReflexStatistics.trend(of: [Fixture.results(id: 1, started: Fixture.day0, hitTimes: [300])]))))
        #expect(one.all("circle").count == 1)
        #expect(one.all("polyline").isEmpty)
        #expect(one.all("g", class: "trend").isEmpty)
        // Sessions a few hours apart get time-of-day tick labels.
        let sameDay = ReflexStatistics.trend(of: [
            Fixture.results(id: 1, started: Fixture.day0, hitTimes: [300]),
            Fixture.results(id: 2, started: Fixture.day0.addingTimeInterval(6 * 3600), hitTimes: [280]),
        ])
        let sameDayDoc = try #require(SVGCollector.parse(SVGChart.meansOverTime(sameDay)))
        #expect(sameDayDoc.all("text").map(\.text).contains("11-01 12:00"))
    }

    @Test func perTargetChartShowsMeansRangesAndHitRates() throws {
        let summaries = ReflexStatistics.perTarget(ReflexStatisticsTests.steps + [Fixture.step(5, target: 5, hit: false, ms: 900)])
        let svg = SVGChart.perTarget(summaries)
        let doc = try #require(SVGCollector.parse(svg))
        #expect(doc.all("rect", class: "mean").count == 3)
        #expect(doc.all("rect", class: "target-0").first?.attributes["fill"] == TargetPalette.colours[0].fill)
        #expect(doc.all("path", class: "range").count == 3)
        #expect(doc.all("text", class: "hit-rate").map(\.text) == ["100 %", "50 %", "100 %", "0 %"])
        #expect(doc.all("desc").first?.text == "target 0 (red): mean 450 ms, 100 % hits; target 1 (blue): mean 300 ms, 50 % hits; "
            + "target 2 (green): mean 200 ms, 100 % hits; target 5 (orange): no hits, 0 % hits.")
        #expect(doc.all("text").map(\.text).contains("5 orange"))
        #expect(svg == SVGChart.perTarget(summaries))
        let empty = try #require(SVGCollector.parse(SVGChart.perTarget([])))
        #expect(empty.all("text", class: "no-data").first?.text == "No results")
    }

    @Test func paletteMatchesTheLEDs() {
        #expect(TargetPalette.colours.map(\.name) == ["red", "blue", "green", "yellow", "white", "orange"])
        #expect(TargetPalette.colours.map(\.target) == [0, 1, 2, 3, 4, 5])
        #expect(TargetPalette.colours.allSatisfy { $0.fill.count == 7 && $0.fill.hasPrefix("#") && $0.stroke.count == 7 })
        #expect(TargetPalette.colour(of: 6) == nil)
        #expect(TargetPalette.cssCustomProperties.hasPrefix("--target-0: #D7263D;\n--target-0-stroke: #8C1020;\n"))
    }

    @Test func escapingKeepsDocumentsWellFormed() {
        #expect(SVGBuilder.escape("a<b>&\"c'\u{1}\u{7F}\u{FFFF}") == "a&lt;b&gt;&amp;&quot;c&#39;")
        let weird = SVGChart.meansOverTime(ReflexStatistics.trend(of: []), title: "\u{0}<svg>&amp;\"'",
                                           options: SVGChartOptions(width: 10, height: 10, idPrefix: "x\"y"))
        #expect(SVGCollector.parse(weird) != nil)
    }
}
