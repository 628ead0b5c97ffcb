import BluetideBase
import BluetideHCI
import Testing
@testable import BluetideVirtual

/// When advertising reports reach a scanner, on the link core with explicit times: a scan
/// reports nothing with its Command Complete, then each advertiser's reports follow that
/// advertiser's own advertising events once the scanner has listened for a while; duplicate
/// filtering suppresses repeats, but not for ever.
@Suite struct LinkCoreScanningTests {
    /// `a` advertises (connectable, public address) every 100 ms from t = 1 s; `b` is a
    /// passive scanner that has not started yet.
    struct Radio {
        var core = LinkCore(seed: 3)
        var now: LinkTime = .seconds(1)
        let a: Int
        let b: Int

        init() {
            a = core.attach(publicAddress: nil, leFeatures: VirtualControllerProfile.leFeatures).id
            b = core.attach(publicAddress: nil, leFeatures: VirtualControllerProfile.leFeatures).id
            for id in [a, b] {
                _ = send(id, HCISetEventMask(mask: 0x3FFF_BFFF_FFFF_FFFF).packet)
                _ = send(id, LESetEventMask(mask: 0x0000_0000_0000_187F).packet)
            }
            _ = send(a, LESetAdvertisingParameters(intervalMin: 160, intervalMax: 160).packet)
            _ = send(a, LESetAdvertisingData(data: [2, 1, 6]).packet)
            _ = send(a, LESetAdvertisingEnable(enable: true).packet)
            _ = send(b, LESetScanParameters(active: false).packet)
        }

        mutating func send(_ id: Int, _ packet: HCIPacket) -> [LinkOutput] {
            var outputs: [LinkOutput] = []
            core.handle(.fromHost(controller: id, packet), now: now, into: &outputs)
            // The hosts read everything at once (no backlog builds up).
            core.handle(.hostTook(controller: id, count: 1_000), now: now, into: &outputs)
            return outputs
        }

        /// Moves time to `time`, running every deadline on the way; returns when each
        /// advertising report reached `b`'s host (ms since t = 1 s).
        mutating func reportTimes(until time: LinkTime) -> [Int64] {
            var times: [Int64] = []
            while let deadline = core.nextDeadline, deadline <= time {
                now = deadline
                var outputs: [LinkOutput] = []
                core.handle(.timer, now: now, into: &outputs)
                for output in outputs where output.isAdvertisingReport(to: b) {
                    times.append(Int64(((now - .seconds(1)) / .milliseconds(1)).rounded()))
                }
                core.handle(.hostTook(controller: a, count: 1_000), now: now, into: &outputs)
                core.handle(.hostTook(controller: b, count: 1_000), now: now, into: &outputs)
            }
            now = time
            return times
        }

        /// Enables scanning at `time` (after running what is due before); returns what `b`'s host got.
        mutating func startScan(at time: LinkTime, filterDuplicates: Bool) -> [LinkOutput] {
            let before = reportTimes(until: time)
            #expect(before.isEmpty)
            return send(b, LESetScanEnable(enable: true, filterDuplicates: filterDuplicates).packet)
        }
    }

    static let commandComplete = LinkOutput.packet(controller: 2, HCIEvent.commandComplete(
        HCICommandComplete(opcode: LESetScanEnable.opcode, status: .success)).packet)

    @Test func aScanStartsWithCommandCompleteAloneThenReportsOnTheAdvertisersInterval() {
        var radio = Radio()
        // The advertiser's events fall at 0, 100, 200 … ms; the scan starts at 40 ms.
        #expect(radio.startScan(at: .milliseconds(1_040), filterDuplicates: false) == [Self.commandComplete])
        #expect(radio.reportTimes(until: .milliseconds(1_550)) == [100, 200, 300, 400, 500])
    }

    @Test func anAdvertisingEventJustAfterTheScanStartsIsNotHeardYet() {
        var radio = Radio()
        // 5 ms before the advertiser's event at 100 ms: the scanner is still starting up.
        #expect(radio.startScan(at: .milliseconds(1_095), filterDuplicates: false) == [Self.commandComplete])
        #expect(LinkCore.scanWarmUp > .milliseconds(5))
        #expect(radio.reportTimes(until: .milliseconds(1_350)) == [200, 300])
    }

    @Test func duplicateFilteringSuppressesRepeatsForASecondNotForTheWholeScan() {
        var radio = Radio()
        #expect(radio.startScan(at: .milliseconds(1_040), filterDuplicates: true) == [Self.commandComplete])
        // Reported once at 100 ms; the events up to 1 s later are duplicates; the one at
        // 1100 ms is reported again (a host that dropped the first report sees the device).
        #expect(radio.reportTimes(until: .milliseconds(2_050)) == [100])
        #expect(LinkCore.duplicateFilterMemory == .seconds(1))
        #expect(radio.reportTimes(until: .milliseconds(3_150)) == [1_100, 2_100])
    }

    @Test func anAdvertiserStartingDuringAScanIsReportedFromItsFirstEvent() {
        var radio = Radio()
        _ = radio.send(radio.a, LESetAdvertisingEnable(enable: false).packet)
        #expect(radio.startScan(at: .milliseconds(1_040), filterDuplicates: false) == [Self.commandComplete])
        radio.now = .milliseconds(1_070)
        let enabled = radio.send(radio.a, LESetAdvertisingEnable(enable: true).packet)
        #expect(enabled.contains { $0.isAdvertisingReport(to: radio.b) })
        #expect(radio.reportTimes(until: .milliseconds(1_280)) == [170, 270])
    }
}

extension LinkOutput {
    /// Whether this is an LE Advertising Report for the host of `controller`.
    func isAdvertisingReport(to controller: Int) -> Bool {
        guard case let .packet(id, .event(0x3E, parameters)) = self else { return false }
        return id == controller && parameters.first == 0x02
    }
}
