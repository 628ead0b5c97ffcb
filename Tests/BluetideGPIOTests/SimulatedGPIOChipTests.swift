import Testing
@testable import BluetideGPIO
import BluetideSupport

@Suite struct SimulatedGPIOChipTests {
    let sensor = GPIOLineSettings.input(bias: .pullUp, edges: .both, debounceMicroseconds: 20_000, activeLow: true)

    @Test func outputsAreRecordedWithTimes() async throws {
        let clock = ManualClock()
        let chip = SimulatedGPIOChip(lineCount: 32, clock: clock)
        let lines = try await chip.request(GPIORequest(consumer: "leds", lines: [
            GPIORequestedLine(offset: 17, settings: .output(initial: false)),
            GPIORequestedLine(offset: 27, settings: .output(initial: true, activeLow: true)),
        ]))
        clock.advance(by: .milliseconds(250))
        try await lines.setValue(true, for: 17)
        try await lines.setValue(true, for: 17)  // no change: not recorded again
        clock.advance(by: .milliseconds(100))
        try await lines.setValues([17: false, 27: false])
        #expect(await chip.outputHistory == [
            SimulatedOutputChange(offset: 17, value: false, level: false, timestampNanoseconds: 0),
            SimulatedOutputChange(offset: 27, value: true, level: false, timestampNanoseconds: 0),
            SimulatedOutputChange(offset: 17, value: true, level: true, timestampNanoseconds: 250_000_000),
            SimulatedOutputChange(offset: 17, value: false, level: false, timestampNanoseconds: 350_000_000),
            SimulatedOutputChange(offset: 27, value: false, level: true, timestampNanoseconds: 350_000_000),
        ])
        #expect(try await lines.values([]) == [17: false, 27: false])
        #expect(await chip.outputValue(of: 27) == false)
        #expect(try await chip.level(of: 27) == true)
    }

    @Test func activeLowInputsReportLogicalValuesAndEdgesWithSequenceNumbers() async throws {
        let clock = ManualClock()
        let chip = SimulatedGPIOChip(lineCount: 32, clock: clock)
        let lines = try await chip.request(GPIORequest(consumer: "sensors", lines: [
            GPIORequestedLine(offset: 5, settings: sensor),
            GPIORequestedLine(offset: 6, settings: sensor),
            GPIORequestedLine(offset: 7, settings: .input(bias: .pullDown, edges: .rising)),
        ]))
        // Pulled up, active-low: idle sensors read inactive.
        #expect(try await lines.values([]) == [5: false, 6: false, 7: false])
        clock.advance(by: .milliseconds(10))
        try await chip.drive(5, level: false)       // sensor 5 detects: physical falling, logical rising
        clock.advance(by: .milliseconds(5))
        try await chip.drive(6, level: false)
        try await chip.drive(5, level: nil)         // let go: pull-up restores high
        try await chip.drive(7, level: true)        // rising on a rising-only line
        try await chip.drive(7, level: false)       // falling: not reported
        #expect(try await lines.value(of: 6) == true)
        await lines.release()
        var edges: [GPIOEdge] = []
        for await edge in lines.edges { edges.append(edge) }
        #expect(edges == [
            GPIOEdge(offset: 5, kind: .rising, timestampNanoseconds: 10_000_000, sequenceNumber: 1, lineSequenceNumber: 1),
            GPIOEdge(offset: 6, kind: .rising, timestampNanoseconds: 15_000_000, sequenceNumber: 2, lineSequenceNumber: 1),
            GPIOEdge(offset: 5, kind: .falling, timestampNanoseconds: 15_000_000, sequenceNumber: 3, lineSequenceNumber: 2),
            GPIOEdge(offset: 7, kind: .rising, timestampNanoseconds: 15_000_000, sequenceNumber: 4, lineSequenceNumber: 1),
        ])
    }

    @Test func heldLinesAreBusyUntilReleased() async throws {
        let chip = SimulatedGPIOChip(lineCount: 32, timestampNanoseconds: { 0 })
        let first = try await chip.request(GPIORequest(consumer: "reflexd", lines: [GPIORequestedLine(offset: 17, settings: .output())]))
        let info = try await chip.lineInfo(17)
        #expect(info.isUsed && info.isOutput && info.consumer == "reflexd" && info.name == "GPIO17")
        await #expect(throws: GPIOError.lineBusy(chip: "sim:gpiochip0", line: 17, lineName: "GPIO17", consumer: "reflexd")) {
            try await chip.request(GPIORequest(consumer: "other", lines: [GPIORequestedLine(offset: 17, settings: .input())]))
        }
        await #expect(throws: GPIOError.lineOutOfRange(chip: "sim:gpiochip0", line: 40, lineCount: 32)) {
            try await chip.request(GPIORequest(consumer: "other", lines: [GPIORequestedLine(offset: 40, settings: .input())]))
        }
        await #expect(throws: GPIOError.notRequested(chip: "sim:gpiochip0", line: 18)) { try await first.setValue(true, for: 18) }
        await first.release()
        await first.release()  // idempotent
        await #expect(throws: GPIOError.released(chip: "sim:gpiochip0")) { try await first.setValue(true, for: 17) }
        #expect(try await chip.lineInfo(17).isUsed == false)
        let second = try await chip.request(GPIORequest(consumer: "other", lines: [GPIORequestedLine(offset: 17, settings: .input())]))
        await #expect(throws: GPIOError.notAnOutput(chip: "sim:gpiochip0", line: 17)) { try await second.setValue(true, for: 17) }
    }

    @Test func manualClockWakesSleepersInOrderAndHonoursCancellation() async throws {
        let clock = ManualClock()
        let order = OrderLog()
        let a = Task { try await clock.sleep(for: .milliseconds(30)); await order.append("a") }
        let b = Task { try await clock.sleep(for: .milliseconds(10)); await order.append("b") }
        let c = Task { try await clock.sleep(for: .seconds(5)) }
        await clock.waitForSleepers(3)
        clock.advance(by: .milliseconds(10))
        try await b.value
        clock.advance(by: .milliseconds(20))
        try await a.value
        #expect(await order.entries == ["b", "a"])
        c.cancel()
        await #expect(throws: CancellationError.self) { try await c.value }
        #expect(clock.sleeperCount == 0)
        #expect(clock.now == ManualClock.Instant(offset: .milliseconds(30)))
    }
}

/// An actor-held list, for recording the order of concurrent events.
actor OrderLog {
    var entries: [String] = []
    func append(_ entry: String) { entries.append(entry) }
}
