import BluetideBase
import BluetideHCI
import BluetideSupport
import Testing
@testable import BluetideVirtual

/// Link-layer procedures in virtual time: a link on a manual clock does nothing later until the
/// test advances the clock, so "after one connection interval, Command Status first" is checked
/// exactly, with no real waiting.
@Suite(.timeLimit(.minutes(1))) struct VirtualTimingTests {
    /// The default connection interval of `LinkPair.connect()`: 24 × 1.25 ms.
    static let interval = Duration.milliseconds(30)
    static let justBefore = interval - .microseconds(1)

    @Test func remoteFeaturesCompleteOneConnectionIntervalAfterTheirCommandStatus() async throws {
        let clock = ManualClock()
        let pair = try await LinkPair(clock: clock)
        let handles = try await pair.connect()
        #expect(try await pair.b.start(LEReadRemoteFeatures(handle: handles.b)) == .success)
        try await pair.b.expectNothingPending()
        clock.advance(by: Self.justBefore)
        try await pair.b.expectNothingPending()
        clock.advance(by: .microseconds(1))
        guard case let .readRemoteFeaturesComplete(features) = try await pair.b.nextLEEvent() else { Issue.record("no features"); return }
        #expect(features.handle == handles.b && features.features.contains(.encryption))
        try await pair.a.expectNothingPending()  // the peer's host is not told
    }

    @Test func versionExchangeAndDataLengthTakeAnIntervalToo() async throws {
        let clock = ManualClock()
        let pair = try await LinkPair(clock: clock)
        let handles = try await pair.connect()
        await pair.b.controller.send(.command(opcode: HCIOpcode(rawValue: 0x041D), parameters: [UInt8(handles.b), 0]))
        #expect(try await pair.b.nextEvent() == .commandStatus(HCICommandStatus(status: .success, opcode: HCIOpcode(rawValue: 0x041D))))
        // LE Set Data Length is answered by Command Complete at once; the change follows later.
        #expect(try await pair.b.succeed(LESetDataLength(handle: handles.b, txOctets: 251, txTime: 2120)).handle == handles.b)
        clock.advance(by: Self.justBefore)
        try await pair.b.expectNothingPending()
        try await pair.a.expectNothingPending()
        clock.advance(by: .microseconds(1))
        #expect(await pair.b.next() == .event(code: 0x0C, parameters: [0, UInt8(handles.b), 0, 0x0C, 0xFF, 0xFF, 0, 0]))
        #expect(try await pair.b.nextLEEvent() == .dataLengthChange(.init(
            handle: handles.b, maxTxOctets: 251, maxTxTime: 2120, maxRxOctets: 27, maxRxTime: 328)))
        #expect(try await pair.a.nextLEEvent() == .dataLengthChange(.init(
            handle: handles.a, maxTxOctets: 27, maxTxTime: 328, maxRxOctets: 251, maxRxTime: 2120)))
    }

    @Test func phyUpdateAndConnectionUpdateWaitForTheCurrentInterval() async throws {
        let clock = ManualClock()
        let pair = try await LinkPair(clock: clock)
        let handles = try await pair.connect()
        #expect(try await pair.b.start(LESetPHY(handle: handles.b, txPHYs: 0b10, rxPHYs: 0b10)) == .success)
        clock.advance(by: Self.justBefore)
        try await pair.a.expectNothingPending()
        clock.advance(by: .microseconds(1))
        #expect(try await pair.b.nextLEEvent() == .phyUpdateComplete(.init(handle: handles.b, txPHY: .le2M, rxPHY: .le2M)))
        #expect(try await pair.a.nextLEEvent() == .phyUpdateComplete(.init(handle: handles.a, txPHY: .le2M, rxPHY: .le2M)))

        // A one-second interval from now on: the next procedure takes a second of virtual time.
        let slow = LEConnectionParameters(intervalMin: 800, intervalMax: 800, maxLatency: 0, supervisionTimeout: 600)
        #expect(try await pair.a.start(LEConnectionUpdate(handle: handles.a, connection: slow)) == .success)
        clock.advance(by: Self.interval)
        #expect(try await pair.a.nextLEEvent() == .connectionUpdateComplete(.init(handle: handles.a, interval: 800, latency: 0, supervisionTimeout: 600)))
        #expect(try await pair.b.nextLEEvent() == .connectionUpdateComplete(.init(handle: handles.b, interval: 800, latency: 0, supervisionTimeout: 600)))
        #expect(try await pair.b.start(LEReadRemoteFeatures(handle: handles.b)) == .success)
        clock.advance(by: .milliseconds(999))
        try await pair.b.expectNothingPending()
        clock.advance(by: .milliseconds(1))
        guard case .readRemoteFeaturesComplete = try await pair.b.nextLEEvent() else { Issue.record("no features"); return }
    }

    @Test func aProcedureOfAConnectionThatEndsNeverCompletes() async throws {
        let clock = ManualClock()
        let pair = try await LinkPair(clock: clock)
        let handles = try await pair.connect()
        #expect(try await pair.b.start(LEReadRemoteFeatures(handle: handles.b)) == .success)
        #expect(try await pair.b.start(HCIDisconnect(handle: handles.b, reason: .remoteUserTerminated)) == .success)
        #expect(try await pair.b.nextEvent() == .disconnectionComplete(.init(handle: handles.b, reason: .localHostTerminated)))
        clock.advance(by: .seconds(1))
        try await pair.b.expectNothingPending()
    }

    @Test func latencyHoldsDeliveriesAndTheirCompletionsInVirtualTime() async throws {
        let clock = ManualClock()
        let pair = try await LinkPair(clock: clock)
        let handles = try await pair.connect()
        await pair.link.setLatency(.milliseconds(50))
        await pair.b.controller.send(.acl(handle: handles.b, boundary: .firstFlushable, broadcast: 0, data: [1]))
        clock.advance(by: .milliseconds(49))
        try await pair.a.expectNothingPending()
        clock.advance(by: .milliseconds(1))
        #expect(await pair.a.next() == .acl(handle: handles.a, boundary: .firstFlushable, broadcast: 0, data: [1]))
        #expect(try await pair.b.nextEvent() == .numberOfCompletedPackets(.init(entries: [.init(handle: handles.b, completedPackets: 1)])))
    }

    @Test func advertisingRepeatsEveryIntervalOfVirtualTime() async throws {
        let clock = ManualClock()
        let pair = try await LinkPair(clock: clock)
        // 100 ms advertising (160 × 0.625 ms). The advertiser's first event comes with the scan's
        // start, before the scanner listens: its first report is the next event's.
        try await pair.scanAdvertisingA(every: 160)
        clock.advance(by: .milliseconds(100))
        guard case .advertisingReport = try await pair.b.nextLEEvent(reports: true) else { Issue.record("no first report"); return }
        clock.advance(by: .milliseconds(99))
        await pair.b.controller.send(HCIReadBDADDR().packet)
        guard case .commandComplete = try await pair.b.nextEvent(reports: true) else { Issue.record("a report came early"); return }
        for _ in 0..<3 {
            clock.advance(by: .milliseconds(100))
            guard case .advertisingReport = try await pair.b.nextLEEvent(reports: true) else { Issue.record("no repeat"); return }
        }
    }

    @Test func theScanStartsQuietlyAndReportsOnTheAdvertisersNextEvent() async throws {
        let clock = ManualClock()
        let pair = try await LinkPair(clock: clock)
        // A advertises every 100 ms from now; B starts scanning 40 ms later, without duplicate filtering.
        try await pair.a.succeed(LESetAdvertisingParameters(intervalMin: 160, intervalMax: 160, ownAddressType: .random))
        try await pair.a.succeed(LESetAdvertisingEnable(enable: true))
        clock.advance(by: .milliseconds(40))
        await clock.waitForSleepers(1)
        try await pair.b.succeed(LESetScanParameters(active: false, ownAddressType: .random))
        try await pair.b.succeed(LESetScanEnable(enable: true, filterDuplicates: false))
        // Nothing follows the scan's Command Complete at once (a host that has not yet marked
        // its discovery started would drop it).
        try await pair.b.expectNoReport()
        clock.advance(by: .milliseconds(59))
        await clock.waitForSleepers(1)
        try await pair.b.expectNoReport()
        // The advertiser's event at 100 ms is the first one heard, then every one after it.
        for _ in 0..<3 {
            clock.advance(by: .milliseconds(1))
            guard case .advertisingReport = try await pair.b.nextLEEvent(reports: true) else { Issue.record("no report"); return }
            clock.advance(by: .milliseconds(99))
            await clock.waitForSleepers(1)
            try await pair.b.expectNoReport()
        }
    }

    @Test func aScannerWhoseHostStopsReadingLosesReportsInsteadOfQueueingThem() async throws {
        let clock = ManualClock()
        let pair = try await LinkPair(clock: clock)
        try await pair.scanAdvertisingA(every: 32)
        // 200 advertising events (20 ms each) while B's host reads nothing.
        for _ in 0..<200 {
            clock.advance(by: .milliseconds(20))
            await clock.waitForSleepers(1)
        }
        await pair.b.controller.send(HCIReadBDADDR().packet)
        var reports = 0
        while case let .event(code, parameters)? = await pair.b.next(reports: true) {
            if code == 0x3E, parameters.first == 0x02 { reports += 1; continue }
            break
        }
        #expect(reports == Int(LinkCore.reportBacklogLimit))
    }
}

extension LinkPair {
    /// `a` advertises every `units` × 0.625 ms; `b` scans passively, without duplicate filtering.
    func scanAdvertisingA(every units: UInt16) async throws {
        try await a.succeed(LESetAdvertisingParameters(intervalMin: units, intervalMax: units, ownAddressType: .random))
        try await b.succeed(LESetScanParameters(active: false, ownAddressType: .random))
        try await b.succeed(LESetScanEnable(enable: true, filterDuplicates: false))
        try await a.succeed(LESetAdvertisingEnable(enable: true))
    }
}

extension HostProbe {
    /// Proves no advertising report (nor anything else) is queued: a harmless command's
    /// Command Complete comes next, reports included.
    func expectNoReport(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        await controller.send(HCIReadBDADDR().packet)
        let event = try await nextEvent(reports: true, sourceLocation: sourceLocation)
        guard case let .commandComplete(complete) = event, complete.opcode == HCIReadBDADDR.opcode else {
            Issue.record("unexpected packet: \(event)", sourceLocation: sourceLocation)
            return
        }
    }
}
