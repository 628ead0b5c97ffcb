import BluetideSerial
import BluetideSerialWeb
import BluetideSupport
import BluetideTestSupport
import Testing

/// `PlotFeed.plot(_:clock:echo:status:)`, what `uart plot` runs, without the command: an echoing
/// Nordic UART device on a private virtual link, times on a manual clock.
@Suite struct PlotLinkTests {
    @Test func aLinksLinesArePlottedAtTheirClockTimeUntilTheLinkCloses() async throws {
        let world = try await SerialWorld()
        try await world.start("nus", name: "Plotter", index: 21)
        let link = try await world.connect("Plotter")
        let feed = PlotFeed()
        let clock = ManualClock()
        let echoed = Observed<[String]>([])
        let plotting = Task { await feed.plot(link, clock: clock, echo: { echoed.append($0) }, status: { _ in }) }
        try await link.send("sine=0.5 counter=1\n")
        try await within(20, "the first line") { try await echoed.wait { $0.count >= 1 } }
        clock.advance(by: .milliseconds(1500))
        try await link.send("no numbers\ncounter=2\n")
        try await within(20, "three lines") { try await echoed.wait { $0.count >= 3 } }
        #expect(echoed.value == ["sine=0.5 counter=1", "no numbers", "counter=2"], "every line is echoed")
        #expect(await feed.csv() == "seconds,sine,counter\n0,0.5,1\n1.5,,2\n", "numbers at their time since the start")
        await link.close()
        let reason = try await within(20, "the plot's end") { await plotting.value }
        #expect(reason != nil, "a closed link ends the plot with its reason")
        await world.close()
    }

    @Test func aCancelledPlotReturnsNil() async throws {
        let world = try await SerialWorld()
        try await world.start("nus", name: "Plotter2", index: 22)
        let link = try await world.connect("Plotter2")
        let plotting = Task { await PlotFeed().plot(link, clock: ManualClock(), echo: { _ in }, status: { _ in }) }
        plotting.cancel()
        let reason = try await within(20, "the plot's end") { await plotting.value }
        #expect(reason == nil)
        await link.close()
        await world.close()
    }
}
