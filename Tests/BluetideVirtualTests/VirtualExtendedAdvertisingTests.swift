import BluetideBase
import BluetideHCI
import Testing
@testable import BluetideVirtual

@Suite(.timeLimit(.minutes(1))) struct VirtualExtendedAdvertisingTests {
    /// `a` advertises set 1 from its random address with the given properties and data.
    func startSet(_ pair: LinkPair, properties: LEAdvertisingEventProperties, data: [UInt8], scanResponse: [UInt8] = []) async throws {
        try await pair.a.succeed(LESetExtendedAdvertisingParameters(handle: 1, properties: properties, ownAddressType: .random, sid: 3))
        try await pair.a.succeed(LESetAdvertisingSetRandomAddress(handle: 1, address: pair.addressA))
        try await pair.a.succeed(LESetExtendedAdvertisingData(handle: 1, data: data))
        if !scanResponse.isEmpty { try await pair.a.succeed(LESetExtendedScanResponseData(handle: 1, data: scanResponse)) }
        try await pair.a.succeed(LESetExtendedAdvertisingEnable(enable: true, sets: [.init(handle: 1)]))
    }

    func startExtendedScan(_ probe: HostProbe) async throws {
        try await probe.succeed(LESetExtendedScanParameters(ownAddressType: .random, le1M: .init(active: true)))
        try await probe.succeed(LESetExtendedScanEnable(enable: true, filterDuplicates: 1))
    }

    @Test func legacyPDUsFromASetReachBothKindsOfScanner() async throws {
        let pair = try await LinkPair()
        let c = HostProbe(await pair.link.attachController())
        try await c.initialize(random: .randomStatic(0xC3))
        try await startSet(pair, properties: .legacyConnectableScannable, data: [2, 1, 6], scanResponse: [2, 0x0A, 0])
        try await startExtendedScan(pair.b)
        guard case let .extendedAdvertisingReport(adv) = try await pair.b.nextLEEvent(reports: true),
              case let .extendedAdvertisingReport(rsp) = try await pair.b.nextLEEvent(reports: true) else {
            Issue.record("expected extended reports")
            return
        }
        let report = try #require(adv.reports.first)
        #expect(report.eventType.rawValue == 0x13)
        #expect(report.address == pair.addressA && report.rssi == -50 && report.data == [2, 1, 6])
        #expect(report.advertisingSID == 0xFF && report.secondaryPHY == LEPHY(rawValue: 0))
        #expect(rsp.reports.first?.eventType.rawValue == 0x1B)
        #expect(rsp.reports.first?.data == [2, 0x0A, 0])
        // A legacy scanner sees the same set as ADV_IND.
        try await c.succeed(LESetScanParameters(active: false, ownAddressType: .random))
        try await c.succeed(LESetScanEnable(enable: true, filterDuplicates: true))
        guard case let .advertisingReport(legacy) = try await c.nextLEEvent(reports: true) else { Issue.record("no legacy report"); return }
        #expect(legacy.reports.first?.eventType == .advInd && legacy.reports.first?.data == [2, 1, 6])
    }

    @Test func longExtendedDataIsSplitAndInvisibleToLegacyScanners() async throws {
        let pair = try await LinkPair()
        let c = HostProbe(await pair.link.attachController())
        try await c.initialize(random: .randomStatic(0xC3))
        try await c.succeed(LESetScanEnable(enable: true))
        let data = (0..<300).map { UInt8(truncatingIfNeeded: $0) }
        // 300 bytes need two data commands (at most 251 each).
        try await pair.a.succeed(LESetExtendedAdvertisingParameters(handle: 1, properties: [.connectable], ownAddressType: .random, sid: 3))
        try await pair.a.succeed(LESetAdvertisingSetRandomAddress(handle: 1, address: pair.addressA))
        try await pair.a.succeed(LESetExtendedAdvertisingData(handle: 1, operation: .firstFragment, data: Array(data[0..<200])))
        try await pair.a.succeed(LESetExtendedAdvertisingData(handle: 1, operation: .lastFragment, data: Array(data[200...])))
        try await pair.a.succeed(LESetExtendedAdvertisingEnable(enable: true, sets: [.init(handle: 1)]))
        try await startExtendedScan(pair.b)
        guard case let .extendedAdvertisingReport(first) = try await pair.b.nextLEEvent(reports: true),
              case let .extendedAdvertisingReport(second) = try await pair.b.nextLEEvent(reports: true) else {
            Issue.record("expected two fragments")
            return
        }
        let head = try #require(first.reports.first)
        let tail = try #require(second.reports.first)
        #expect(head.eventType.contains(.connectable) && !head.eventType.contains(.legacy))
        #expect(head.eventType.dataStatus == 1 && tail.eventType.dataStatus == 0)
        #expect(head.data + tail.data == data)
        #expect(head.advertisingSID == 3 && head.primaryPHY == .le1M)
        // The legacy scanner saw nothing.
        await c.controller.send(HCIReadBDADDR().packet)
        guard case .commandComplete = try await c.nextEvent(reports: true) else { Issue.record("legacy scanner saw extended PDUs"); return }
    }

    @Test func extendedCreateConnectionEndsTheSetWithSetTerminated() async throws {
        let pair = try await LinkPair()
        try await startSet(pair, properties: .legacyConnectableScannable, data: [2, 1, 6])
        let phy = LEExtendedCreateConnection.PHYParameters(connection: .init(intervalMin: 40, intervalMax: 40, supervisionTimeout: 300))
        #expect(try await pair.b.start(LEExtendedCreateConnection(peerAddress: pair.addressA, ownAddressType: .random, le1M: phy)) == .success)
        guard case let .connectionComplete(central) = try await pair.b.nextLEEvent() else { Issue.record("no central complete"); return }
        #expect(central.interval == 40 && central.peerAddress == pair.addressA)
        guard case let .connectionComplete(peripheral) = try await pair.a.nextLEEvent() else { Issue.record("no peripheral complete"); return }
        // Set Terminated is subevent 0x12 (LE mask bit 17): unmasked by the host here.
        _ = peripheral
        try await pair.a.expectNothingPending()

        let second = try await LinkPair()
        try await second.a.succeed(LESetEventMask(mask: 0x0000_0000_0002_187F))
        try await startSet(second, properties: .legacyConnectableScannable, data: [2, 1, 6])
        _ = try await second.b.start(LEExtendedCreateConnection(peerAddress: second.addressA, ownAddressType: .random, le1M: phy))
        guard case let .connectionComplete(p) = try await second.a.nextLEEvent() else { Issue.record("no complete"); return }
        #expect(try await second.a.nextLEEvent() == .advertisingSetTerminated(.init(advertisingHandle: 1, connectionHandle: p.handle)))
    }

    @Test func setManagementAndCommandFamilies() async throws {
        let pair = try await LinkPair()
        // Extended on A: legacy commands are now refused on A.
        let sets = try await pair.a.succeed(LEReadNumberOfSupportedAdvertisingSets())
        #expect(sets.count == 4)
        #expect(try await pair.a.succeed(LEReadMaximumAdvertisingDataLength()).maximumLength == 1650)
        #expect(try await pair.a.run(LESetAdvertisingEnable(enable: false)).status == .commandDisallowed)
        #expect(try await pair.a.start(LECreateConnection(peerAddress: pair.addressB)) == .commandDisallowed)
        // Unknown sets and missing random addresses.
        #expect(try await pair.a.run(LESetExtendedAdvertisingData(handle: 9, data: [])).status == .unknownAdvertisingIdentifier)
        try await pair.a.succeed(LESetExtendedAdvertisingParameters(handle: 2, properties: [.connectable], ownAddressType: .random))
        #expect(try await pair.a.run(LESetExtendedAdvertisingEnable(enable: true, sets: [.init(handle: 2)])).status == .invalidParameters)
        // Connectable and scannable together is only allowed with legacy PDUs.
        #expect(try await pair.a.run(LESetExtendedAdvertisingParameters(handle: 3, properties: [.connectable, .scannable])).status == .invalidParameters)
        // Legacy sets hold at most 31 bytes.
        try await pair.a.succeed(LESetExtendedAdvertisingParameters(handle: 4, properties: .legacyConnectableScannable))
        #expect(try await pair.a.run(LESetExtendedAdvertisingData(handle: 4, data: [UInt8](repeating: 0, count: 32))).status == .invalidParameters)
        try await pair.a.succeed(LESetExtendedAdvertisingEnable(enable: true, sets: [.init(handle: 4)]))
        #expect(try await pair.a.run(LERemoveAdvertisingSet(handle: 4)).status == .commandDisallowed)
        #expect(try await pair.a.run(LEClearAdvertisingSets()).status == .commandDisallowed)
        try await pair.a.succeed(LESetExtendedAdvertisingEnable(enable: false, sets: []))
        try await pair.a.succeed(LERemoveAdvertisingSet(handle: 4))
        try await pair.a.succeed(LEClearAdvertisingSets())
        #expect(try await pair.a.run(LERemoveAdvertisingSet(handle: 2)).status == .unknownAdvertisingIdentifier)
        // Reset lifts the family lock.
        try await pair.a.initialize(random: pair.addressA)
        try await pair.a.succeed(LESetAdvertisingEnable(enable: false))
    }
}

@Suite(.timeLimit(.minutes(1))) struct VirtualLegacyOnlyControllerTests {
    @Test func aLegacyOnlyControllerDoesNotKnowTheExtendedCommands() async throws {
        let link = VirtualLink()
        var features = VirtualControllerProfile.leFeatures
        features.remove(.extendedAdvertising)
        let old = HostProbe(await link.attachController(leFeatures: features))
        let new = HostProbe(await link.attachController())
        try await old.initialize()
        try await new.initialize()
        #expect(!(try await old.succeed(LEReadLocalSupportedFeatures())).features.contains(.extendedAdvertising))
        let bitmap = try await old.succeed(HCIReadLocalSupportedCommands())
        #expect(!bitmap.supports(octet: 37, bit: 6) && bitmap.supports(octet: 26, bit: 3))
        #expect(try await new.succeed(HCIReadLocalSupportedCommands()).supports(octet: 37, bit: 6))
        #expect(try await old.start(LESetExtendedScanEnable(enable: true)) == .unknownCommand)
        #expect(try await old.start(LEReadNumberOfSupportedAdvertisingSets()) == .unknownCommand)
        // Remote features are the peer's own.
        try await old.succeed(LESetAdvertisingEnable(enable: true))
        #expect(try await new.start(LECreateConnection(peerAddress: old.controller.publicAddress)) == .success)
        guard case let .connectionComplete(central) = try await new.nextLEEvent() else { Issue.record("no connection"); return }
        _ = try await new.start(LEReadRemoteFeatures(handle: central.handle))
        guard case let .readRemoteFeaturesComplete(remote) = try await new.nextLEEvent() else { Issue.record("no features"); return }
        #expect(remote.features == features)
    }

    @Test func attachingByLinkNameSharesTheRadio() async throws {
        let a = HostProbe(await VirtualController.attach(toLinkNamed: "attach-by-name"))
        let b = HostProbe(await VirtualController.attach(toLinkNamed: "attach-by-name"))
        #expect(a.controller.link === b.controller.link)
        try await a.initialize()
        try await b.initialize()
        try await a.succeed(LESetAdvertisingEnable(enable: true))
        try await b.succeed(LESetScanEnable(enable: true, filterDuplicates: true))
        guard case let .advertisingReport(report) = try await b.nextLEEvent(reports: true) else { Issue.record("no report"); return }
        #expect(report.reports.first?.address == a.controller.publicAddress)
        await a.controller.detachHost()
        await b.controller.detachHost()
    }
}
