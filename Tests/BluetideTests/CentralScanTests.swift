import BluetideTransport
import BluetideVirtual
import Foundation
import Testing
@testable import Bluetide
import BluetideHost
import BluetideTestSupport

/// Scanning through the public API: merging, each filter kind, duplicates, timeout, discover.
@Suite(.timeLimit(.minutes(1))) struct CentralScanTests {
    static let heartRate = BluetoothUUID(0x180D)
    static let battery = BluetoothUUID(0x180F)

    /// Three peripherals: "HRM-1" (heart rate service, manufacturer 0x0059), "HRM-2" (battery),
    /// "Trainer" (no service, name in the scan response only).
    /// With `clock`, all of it runs on that clock.
    static func world(clock: ManualClock? = nil) async throws -> (link: String, central: TestCentral, peripherals: [TestPeripheral]) {
        let link = uniqueLinkName()
        let a = try await TestPeripheral.start(link: link, seed: 0xA1, advertising: AdvertisingData([
            .flags([.leGeneralDiscoverable]), .completeLocalName("HRM-1"),
            .serviceUUIDs([heartRate], size: .bits16, complete: true),
            .manufacturerSpecificData(companyID: 0x0059, data: [1, 2]),
        ]), clock: clock)
        let b = try await TestPeripheral.start(link: link, seed: 0xB2, advertising: AdvertisingData([
            .flags([.leGeneralDiscoverable]), .completeLocalName("HRM-2"),
            .serviceUUIDs([battery], size: .bits16, complete: true), .txPowerLevel(-4),
        ]), clock: clock)
        let c = try await TestPeripheral.start(
            link: link, seed: 0xC3, advertising: AdvertisingData([.flags([.leGeneralDiscoverable])]),
            scanResponse: AdvertisingData([.completeLocalName("Trainer")]), clock: clock)
        let central = try await TestCentral.start(link: link, clock: clock)
        return (link, central, [a, b, c])
    }

    static func close(_ central: TestCentral, _ peripherals: [TestPeripheral]) async {
        await central.close()
        for p in peripherals { await p.close() }
    }

    /// The addresses a scan with `filter` reports, scanning until each of `expected` was
    /// reported three times (every device advertises at the same pace, so by then any other
    /// device that passed the filter would have been reported too). With nothing expected it
    /// scans for `seconds`.
    static func seen(
        _ central: Central, _ filter: ScanFilter, expecting expected: Set<BluetoothAddress>, seconds: Double = 0.4
    ) async throws -> Set<BluetoothAddress> {
        var all = filter
        all.allowDuplicates = true
        if expected.isEmpty {
            var found = Set<BluetoothAddress>()
            for await advertisement in try await central.scan(filter: all, timeout: .milliseconds(Int64(seconds * 1000))) {
                found.insert(advertisement.address)
            }
            return found
        }
        let duplicates = all
        return try await within(20, "scan for \(expected.count) devices") {
            var counts: [BluetoothAddress: Int] = [:]
            for await advertisement in try await central.scan(filter: duplicates) {
                counts[advertisement.address, default: 0] += 1
                if expected.allSatisfy({ counts[$0, default: 0] >= 3 }) { break }
            }
            return Set(counts.keys)
        }
    }

    @Test func scanMergesTheScanResponseAndReportsEveryField() async throws {
        let (_, central, peripherals) = try await Self.world()
        defer { Task { await Self.close(central, peripherals) } }
        let trainer: Advertisement? = try await within(20, "scan") {
            for await ad in try await central.central.scan(filter: .init(name: .exact("Trainer"))) { return ad }
            return nil
        }
        #expect(trainer?.address == peripherals[2].address)
        #expect(trainer?.isConnectable == true)
        let hrm: Advertisement? = try await within(20, "scan") {
            for await ad in try await central.central.scan(filter: .init(name: .exact("HRM-1"))) { return ad }
            return nil
        }
        let first = try #require(hrm)
        #expect(first.serviceUUIDs == [Self.heartRate])
        #expect(first.manufacturerData == [0x0059: [1, 2]])
        #expect(first.rssi < 0 && first.rssi > -127)
        #expect(first.firstSeen <= first.lastSeen)
        let battery: Advertisement? = try await within(20, "scan") {
            for await ad in try await central.central.scan(filter: .init(serviceUUIDs: [Self.battery])) { return ad }
            return nil
        }
        #expect(battery?.txPower == -4)
        #expect(battery?.name == "HRM-2")
    }

    @Test func eachFilterKindSelectsItsDevices() async throws {
        let (link, central, peripherals) = try await Self.world()
        defer { Task { await Self.close(central, peripherals) } }
        let c = central.central
        let (a, b, t) = (peripherals[0].address, peripherals[1].address, peripherals[2].address)
        func check(_ filter: ScanFilter, _ expected: Set<BluetoothAddress>) async throws {
            #expect(try await Self.seen(c, filter, expecting: expected) == expected, "\(filter)")
        }
        try await check(ScanFilter(), [a, b, t])
        try await check(ScanFilter(serviceUUIDs: [Self.heartRate]), [a])
        try await check(ScanFilter(serviceUUIDs: [Self.battery, Self.heartRate]), [a, b])
        try await check(ScanFilter(name: .exact("HRM-2")), [b])
        try await check(ScanFilter(name: .prefix("HRM")), [a, b])
        try await check(ScanFilter(name: .pattern("^(hrm-1|train)", caseInsensitive: true)), [a, t])
        try await check(ScanFilter(manufacturerID: 0x0059), [a])
        try await check(ScanFilter(manufacturerID: 0x004C), [])

        // Minimum RSSI: HRM-2 is far away.
        let virtualLink = await VirtualLink.named(link)
        await virtualLink.setRSSI(-90, between: central.transport.controller, and: peripherals[1].controller)
        await virtualLink.setRSSI(-40, between: central.transport.controller, and: peripherals[0].controller)
        await virtualLink.setRSSI(-60, between: central.transport.controller, and: peripherals[2].controller)
        // Reports already in flight carry the old RSSI: wait until every device is heard at its new one.
        let settled: Bool = try await within(20, "new RSSI values") {
            var latest: [BluetoothAddress: Int] = [:]
            for await ad in try await c.scan(filter: ScanFilter(allowDuplicates: true)) {
                latest[ad.address] = ad.rssi
                if latest[a] == -40, latest[b] == -90, latest[t] == -60 { return true }
            }
            return false
        }
        #expect(settled)
        try await check(ScanFilter(minimumRSSI: -70), [a, t])
        try await check(ScanFilter(name: .prefix("HRM"), minimumRSSI: -50), [a])
    }

    @Test func badNamePatternIsReportedClearly() throws {
        #expect {
            _ = try ScanFilter.NameMatch.pattern("HRM-(")
        } throws: { error in
            guard case let .invalidNamePattern(pattern, _) = error as? BluetideError else { return false }
            return pattern == "HRM-(" && "\(error)".contains("HRM-(")
        }
    }

    @Test func withoutDuplicatesAnAddressIsReportedOnce() async throws {
        // In virtual time: advertising intervals and the quiet wait pass on a manual clock.
        let clock = ManualClock()
        let (_, central, peripherals) = try await Self.world(clock: clock)
        defer { Task { await Self.close(central, peripherals) } }
        try await clock.advancing {
            // With duplicates: report after report (advertising every 20 ms).
            let every: Int = try await within(20, "duplicates") {
                var n = 0
                for await _ in try await central.central.scan(filter: .init(name: .exact("HRM-1"), allowDuplicates: true)) {
                    n += 1
                    if n == 5 { break }
                }
                return n
            }
            #expect(every == 5)
            // Without: the first report, then nothing more while a witness scan sees the device
            // advertise ten more times.
            let reports = TestGATT.SinkLog()
            let once = try await central.central.scan(filter: .init(name: .exact("HRM-1")))
            let counter = Task {
                for await _ in once { reports.append([1]) }
            }
            try await within(20, "first report") { await reports.waitForCount(1) }
            let witnessed: Int = try await within(20, "witness") {
                var n = 0
                for await _ in try await central.central.scan(filter: .init(name: .exact("HRM-1"), allowDuplicates: true)) {
                    n += 1
                    if n == 10 { break }
                }
                return n
            }
            #expect(witnessed == 10)
            // Nothing more comes in 50 ms (two more advertising intervals) of virtual time.
            try await clock.sleep(for: .milliseconds(50))
            #expect(reports.count == 1)
            counter.cancel()
        }
    }

    @Test func scanEndsAtItsTimeoutEvenWithNothingToReport() async throws {
        let link = uniqueLinkName()
        let central = try await TestCentral.start(link: link)
        defer { Task { await central.close() } }
        let count: Int = try await within(20, "scan with timeout") {
            var n = 0
            for await _ in try await central.central.scan(timeout: .milliseconds(200)) { n += 1 }
            return n
        }
        #expect(count == 0)
    }

    @Test func discoverRanksStrongestFirst() async throws {
        let (link, central, peripherals) = try await Self.world()
        defer { Task { await Self.close(central, peripherals) } }
        let virtualLink = await VirtualLink.named(link)
        await virtualLink.setRSSI(-80, between: central.transport.controller, and: peripherals[0].controller)
        await virtualLink.setRSSI(-35, between: central.transport.controller, and: peripherals[1].controller)
        await virtualLink.setRSSI(-60, between: central.transport.controller, and: peripherals[2].controller)
        let found = try await central.central.discover(timeout: .milliseconds(1000))
        #expect(found.map(\.address) == [peripherals[1].address, peripherals[2].address, peripherals[0].address])
        #expect(found.map(\.rssi) == [-35, -60, -80])
        let filtered = try await central.central.discover(filter: .init(name: .prefix("HRM")), timeout: .milliseconds(1000))
        #expect(filtered.map(\.address) == [peripherals[1].address, peripherals[0].address])
    }
}

/// The pure parts of scanning: merging and duplicate filtering.
@Suite struct CentralMergerTests {
    static let address = BluetoothAddress.randomStatic(0x42)

    static func report(_ data: AdvertisingData, rssi: Int8 = -50, scanResponse: Bool = false) -> AdvertisementReport {
        AdvertisementReport(
            address: address, rssi: rssi, isConnectable: !scanResponse, isScanResponse: scanResponse, rawData: data.bytes)
    }

    @Test func scanResponseCompletesTheAdvertisementAndOnlyContentChangesAreReported() {
        var merger = AdvertisementMerger()
        let t0 = Date(timeIntervalSince1970: 1000)
        let first = merger.receive(Self.report(AdvertisingData([.flags([.leGeneralDiscoverable])])), at: t0)
        #expect(first.name == nil && first.isConnectable)
        let reportFirst = merger.shouldReport(first, allowDuplicates: false)
        #expect(reportFirst)
        let named = merger.receive(
            Self.report(AdvertisingData([.completeLocalName("Ring")]), rssi: -60, scanResponse: true), at: t0 + 1)
        #expect(named.name == "Ring" && named.isConnectable && named.rssi == -60)
        #expect(named.firstSeen == t0 && named.lastSeen == t0 + 1)
        let reportNamed = merger.shouldReport(named, allowDuplicates: false)
        #expect(reportNamed)
        // Same content, new RSSI: not reported without duplicates.
        let again = merger.receive(Self.report(AdvertisingData([.flags([.leGeneralDiscoverable])]), rssi: -70), at: t0 + 2)
        #expect(again.name == "Ring")
        let reportAgain = merger.shouldReport(again, allowDuplicates: false)
        #expect(!reportAgain)
        let reportDuplicate = merger.shouldReport(again, allowDuplicates: true)
        #expect(reportDuplicate)
        let unmeasured = merger.receive(Self.report(AdvertisingData([.flags([.leGeneralDiscoverable])]), rssi: 127), at: t0 + 3)
        #expect(unmeasured.rssi == -127)
    }
}
