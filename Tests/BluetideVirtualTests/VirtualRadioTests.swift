import BluetideBase
import BluetideHCI
import Testing
@testable import BluetideVirtual

@Suite(.timeLimit(.minutes(1))) struct VirtualAdvertisingTests {
    @Test func activeScannerSeesAdvertisingAndScanResponseWithTheLinkRSSI() async throws {
        let pair = try await LinkPair()
        await pair.link.setRSSI(-63, between: pair.a.controller, and: pair.b.controller)
        try await pair.advertiseA()
        try await pair.b.succeed(LESetScanParameters(active: true, ownAddressType: .random))
        try await pair.b.succeed(LESetScanEnable(enable: true, filterDuplicates: true))

        guard case let .advertisingReport(adv) = try await pair.b.nextLEEvent(reports: true),
              case let .advertisingReport(rsp) = try await pair.b.nextLEEvent(reports: true) else {
            Issue.record("expected two advertising reports")
            return
        }
        #expect(adv.reports == [.init(eventType: .advInd, address: pair.addressA,
                                      data: [2, 1, 6, 5, 9, 0x54, 0x65, 0x73, 0x74], rssi: -63)])
        #expect(rsp.reports == [.init(eventType: .scanResponse, address: pair.addressA, data: [3, 0x19, 0x40, 0x03], rssi: -63)])
        // The advertiser never hears itself.
        try await pair.a.expectNothingPending()
    }

    @Test func passiveScannerGetsNoScanResponseAndDefaultRSSI() async throws {
        let pair = try await LinkPair()
        try await pair.b.succeed(LESetScanParameters(active: false, ownAddressType: .random))
        try await pair.b.succeed(LESetScanEnable(enable: true, filterDuplicates: true))
        try await pair.advertiseA()
        guard case let .advertisingReport(adv) = try await pair.b.nextLEEvent(reports: true) else {
            Issue.record("expected an advertising report")
            return
        }
        #expect(adv.reports.first?.eventType == .advInd)
        #expect(adv.reports.first?.rssi == -50)
        // Duplicates are filtered and no scan response follows: the next thing is our own command.
        try await pair.b.expectNothingPending()
    }

    @Test func nonConnectableAdvertisingIsReportedAsSuchAndCannotBeConnected() async throws {
        let pair = try await LinkPair()
        try await pair.a.succeed(LESetAdvertisingParameters(advertisingType: .nonConnectableUndirected, ownAddressType: .random))
        try await pair.a.succeed(LESetAdvertisingEnable(enable: true))
        try await pair.b.succeed(LESetScanParameters(active: true, ownAddressType: .random))
        try await pair.b.succeed(LESetScanEnable(enable: true, filterDuplicates: true))
        guard case let .advertisingReport(adv) = try await pair.b.nextLEEvent(reports: true) else { return }
        #expect(adv.reports.first?.eventType == .advNonconnInd)
        try await pair.b.succeed(LESetScanEnable(enable: false))
        #expect(try await pair.b.start(LECreateConnection(peerAddress: pair.addressA)) == .success)
        try await pair.b.expectNothingPending()
        try await pair.a.expectNothingPending()
    }

    @Test func enablingAdvertisingWithAnUnsetRandomAddressIsRefused() async throws {
        let link = VirtualLink()
        let host = HostProbe(await link.attachController())
        try await host.initialize()
        try await host.succeed(LESetAdvertisingParameters(ownAddressType: .random))
        #expect(try await host.run(LESetAdvertisingEnable(enable: true)).status == .invalidParameters)
    }

    @Test func leEventsNeedTheLEMetaBitInTheEventMask() async throws {
        let pair = try await LinkPair()
        try await pair.b.succeed(HCISetEventMask(mask: HCISetEventMask.defaultMask))  // bit 61 off
        try await pair.b.succeed(LESetScanParameters(active: true, ownAddressType: .random))
        try await pair.b.succeed(LESetScanEnable(enable: true, filterDuplicates: true))
        try await pair.advertiseA()
        await pair.b.controller.send(HCIReadBDADDR().packet)
        // No report was queued before the Read BD_ADDR completion.
        let next = try await pair.b.nextEvent(reports: true)
        guard case let .commandComplete(cc) = next else { Issue.record("got \(next)"); return }
        #expect(cc.opcode == HCIReadBDADDR.opcode)
    }
}

@Suite(.timeLimit(.minutes(1))) struct VirtualConnectionTests {
    @Test func connectingGivesBothSidesConnectionComplete() async throws {
        let pair = try await LinkPair()
        try await pair.advertiseA()
        let parameters = LEConnectionParameters(intervalMin: 24, intervalMax: 40, maxLatency: 0, supervisionTimeout: 72)
        #expect(try await pair.b.start(LECreateConnection(peerAddress: pair.addressA, ownAddressType: .random, connection: parameters)) == .success)
        guard case let .connectionComplete(central) = try await pair.b.nextLEEvent(),
              case let .connectionComplete(peripheral) = try await pair.a.nextLEEvent() else {
            Issue.record("no connection complete")
            return
        }
        #expect(central.status == .success && central.role == .central)
        #expect(central.peerAddress == pair.addressA && central.peerAddressType == .random)
        #expect(central.handle == 1)
        #expect(peripheral.role == .peripheral && peripheral.peerAddress == pair.addressB)
        #expect(central.interval == 24 && peripheral.interval == 24)
        #expect(central.supervisionTimeout == 72 && peripheral.supervisionTimeout == 72)
        #expect(await pair.link.connectionCount == 1)
        // Advertising stopped with the connection: a new scanner sees nothing from A.
        let c = HostProbe(await pair.link.attachController())
        try await c.initialize()
        try await c.succeed(LESetScanEnable(enable: true))
        await c.controller.send(HCIReadBDADDR().packet)
        guard case .commandComplete = try await c.nextEvent(reports: true) else { Issue.record("report after connect"); return }
    }

    @Test func wrongAddressTypeNeverConnectsAndCancelCompletesWithUnknownConnection() async throws {
        let pair = try await LinkPair()
        try await pair.advertiseA()
        let publicTwin = BluetoothAddress(value: pair.addressA.value, type: .public)
        #expect(try await pair.b.start(LECreateConnection(peerAddress: publicTwin)) == .success)
        try await pair.a.expectNothingPending()
        // A second create while one is pending is refused.
        #expect(try await pair.b.start(LECreateConnection(peerAddress: publicTwin)) == .commandDisallowed)
        try await pair.b.succeed(LECreateConnectionCancel())
        guard case let .connectionComplete(cancelled) = try await pair.b.nextLEEvent() else { Issue.record("no completion"); return }
        #expect(cancelled.status == .unknownConnectionIdentifier)
        #expect(try await pair.b.run(LECreateConnectionCancel()).status == .commandDisallowed)
    }

    @Test func pendingConnectionCompletesWhenThePeerStartsAdvertising() async throws {
        let pair = try await LinkPair()
        #expect(try await pair.b.start(LECreateConnection(peerAddress: pair.addressA, ownAddressType: .random)) == .success)
        try await pair.advertiseA()
        guard case let .connectionComplete(peripheral) = try await pair.a.nextLEEvent(),
              case let .connectionComplete(central) = try await pair.b.nextLEEvent() else { Issue.record("no connection"); return }
        #expect(peripheral.role == .peripheral && central.role == .central)
    }

    @Test func enhancedConnectionCompleteWhenTheHostUnmasksIt() async throws {
        let pair = try await LinkPair()
        try await pair.b.succeed(LESetEventMask(mask: 0x0000_0000_0000_0A7F))
        try await pair.advertiseA()
        _ = try await pair.b.start(LECreateConnection(peerAddress: pair.addressA, ownAddressType: .random))
        guard case let .enhancedConnectionComplete(central) = try await pair.b.nextLEEvent() else { Issue.record("not enhanced"); return }
        #expect(central.peerAddress == pair.addressA && central.role == .central)
        guard case .connectionComplete = try await pair.a.nextLEEvent() else { Issue.record("peripheral: legacy expected"); return }
    }

    @Test func aclIsForwardedBothWaysWithCompletedPacketsAndSplitToTheBufferSize() async throws {
        let pair = try await LinkPair()
        let handles = try await pair.connect()
        // B → A: one small L2CAP PDU (ATT Exchange MTU request).
        let pdu: [UInt8] = [3, 0, 4, 0, 0x02, 0x05, 0x02]
        // (Completions come once the peer's host has taken the data, so A reads first.)
        await pair.b.controller.send(.acl(handle: handles.b, boundary: .firstNonFlushable, broadcast: 0, data: pdu))
        #expect(await pair.a.next() == .acl(handle: handles.a, boundary: .firstFlushable, broadcast: 0, data: pdu))
        #expect(try await pair.b.nextEvent() == .numberOfCompletedPackets(.init(entries: [.init(handle: handles.b, completedPackets: 1)])))
        // NOCP bytes as a real controller sends them.
        await pair.b.controller.send(.acl(handle: handles.b, boundary: .firstNonFlushable, broadcast: 0, data: pdu))
        _ = await pair.a.next()
        #expect(await pair.b.next()?.h4Bytes == [0x04, 0x13, 0x05, 0x01, UInt8(handles.b), 0x00, 0x01, 0x00])

        // A → B: 300 bytes in one host packet arrive as 251 + 49.
        let big = (0..<300).map { UInt8(truncatingIfNeeded: $0) }
        await pair.a.controller.send(.acl(handle: handles.a, boundary: .firstFlushable, broadcast: 0, data: big))
        #expect(await pair.b.next() == .acl(handle: handles.b, boundary: .firstFlushable, broadcast: 0, data: Array(big[0..<251])))
        #expect(await pair.b.next() == .acl(handle: handles.b, boundary: .continuing, broadcast: 0, data: Array(big[251...])))
        guard case .numberOfCompletedPackets = try await pair.a.nextEvent() else { Issue.record("no NOCP"); return }
        // Continuation fragments stay continuations.
        await pair.a.controller.send(.acl(handle: handles.a, boundary: .continuing, broadcast: 0, data: [9]))
        #expect(await pair.b.next() == .acl(handle: handles.b, boundary: .continuing, broadcast: 0, data: [9]))
        _ = await pair.a.next()

        // ACL on a handle that is not connected: dropped, no NOCP.
        await pair.a.controller.send(.acl(handle: 0x0EEE, boundary: .firstFlushable, broadcast: 0, data: pdu))
        try await pair.a.expectNothingPending()
        try await pair.b.expectNothingPending()
    }

    @Test func connectionCommandsRSSIDataLengthPHYUpdateAndFeatures() async throws {
        let pair = try await LinkPair()
        await pair.link.setRSSI(-71, between: pair.a.controller, and: pair.b.controller)
        let handles = try await pair.connect()

        #expect(try await pair.b.succeed(HCIReadRSSI(handle: handles.b)) == .init(handle: handles.b, rssi: -71))
        let noSuch = try await pair.b.run(HCIReadRSSI(handle: 0x0077))
        #expect(noSuch.status == .unknownConnectionIdentifier)

        #expect(try await pair.b.succeed(LESetDataLength(handle: handles.b, txOctets: 251, txTime: 2120)).handle == handles.b)
        #expect(try await pair.b.nextLEEvent() == .dataLengthChange(.init(handle: handles.b, maxTxOctets: 251, maxTxTime: 2120, maxRxOctets: 27, maxRxTime: 328)))
        #expect(try await pair.a.nextLEEvent() == .dataLengthChange(.init(handle: handles.a, maxTxOctets: 27, maxTxTime: 328, maxRxOctets: 251, maxRxTime: 2120)))

        #expect(try await pair.b.start(LESetPHY(handle: handles.b, txPHYs: 0b10, rxPHYs: 0b10)) == .success)
        #expect(try await pair.b.nextLEEvent() == .phyUpdateComplete(.init(handle: handles.b, txPHY: .le2M, rxPHY: .le2M)))
        #expect(try await pair.a.nextLEEvent() == .phyUpdateComplete(.init(handle: handles.a, txPHY: .le2M, rxPHY: .le2M)))
        let phy = try await pair.a.succeed(LEReadPHY(handle: handles.a))
        #expect(phy.txPHY == .le2M && phy.rxPHY == .le2M)

        let update = LEConnectionParameters(intervalMin: 6, intervalMax: 12, maxLatency: 4, supervisionTimeout: 200)
        #expect(try await pair.a.start(LEConnectionUpdate(handle: handles.a, connection: update)) == .success)
        #expect(try await pair.a.nextLEEvent() == .connectionUpdateComplete(.init(handle: handles.a, interval: 6, latency: 4, supervisionTimeout: 200)))
        #expect(try await pair.b.nextLEEvent() == .connectionUpdateComplete(.init(handle: handles.b, interval: 6, latency: 4, supervisionTimeout: 200)))

        #expect(try await pair.b.start(LEReadRemoteFeatures(handle: handles.b)) == .success)
        guard case let .readRemoteFeaturesComplete(features) = try await pair.b.nextLEEvent() else { Issue.record("no features"); return }
        #expect(features.handle == handles.b && features.features.contains(.dataPacketLengthExtension))
        #expect(try await pair.b.start(LEReadRemoteFeatures(handle: 0x0077)) == .unknownConnectionIdentifier)
    }

    @Test func disconnectGivesLocalHostTerminatedHereAndTheReasonThere() async throws {
        let pair = try await LinkPair()
        let handles = try await pair.connect()
        #expect(try await pair.b.start(HCIDisconnect(handle: handles.b, reason: .remoteUserTerminated)) == .success)
        #expect(try await pair.b.nextEvent() == .disconnectionComplete(.init(handle: handles.b, reason: .localHostTerminated)))
        #expect(try await pair.a.nextEvent() == .disconnectionComplete(.init(handle: handles.a, reason: .remoteUserTerminated)))
        #expect(await pair.link.connectionCount == 0)
        // The handle is gone now: 0x02, and an invalid reason is 0x12.
        #expect(try await pair.b.start(HCIDisconnect(handle: handles.b)) == .unknownConnectionIdentifier)
        try await pair.b.expectNothingPending()
        let again = try await pair.connect()
        #expect(try await pair.a.start(HCIDisconnect(handle: again.a, reason: .connectionTimeout)) == .invalidParameters)
        #expect(try await pair.a.start(HCIDisconnect(handle: again.a, reason: .remotePowerOff)) == .success)
        #expect(try await pair.a.nextEvent() == .disconnectionComplete(.init(handle: again.a, reason: .localHostTerminated)))
        #expect(try await pair.b.nextEvent() == .disconnectionComplete(.init(handle: again.b, reason: .remotePowerOff)))
    }

    @Test func linkLossEndsTheConnectionOnBothSidesWithConnectionTimeout() async throws {
        let pair = try await LinkPair()
        let handles = try await pair.connect()
        await pair.link.linkLoss(pair.a.controller)
        #expect(try await pair.a.nextEvent() == .disconnectionComplete(.init(handle: handles.a, reason: .connectionTimeout)))
        #expect(try await pair.b.nextEvent() == .disconnectionComplete(.init(handle: handles.b, reason: .connectionTimeout)))
        #expect(await pair.link.connectionCount == 0)
    }

    @Test func detachingTheHostTimesOutThePeerAndEndsTheStream() async throws {
        let pair = try await LinkPair()
        let handles = try await pair.connect()
        try await pair.b.succeed(LESetScanEnable(enable: true))
        await pair.a.controller.detachHost()
        #expect(try await pair.b.nextEvent() == .disconnectionComplete(.init(handle: handles.b, reason: .connectionTimeout)))
        #expect(await pair.a.next(reports: true) == nil)
        #expect(await pair.link.controllerCount == 1)
        // Packets to a detached controller are ignored, not answered.
        await pair.a.controller.send(HCIReset().packet)
        #expect(await pair.link.controllerCount == 1)
    }

    @Test func hciResetClearsEverythingAndThePeerTimesOut() async throws {
        let pair = try await LinkPair()
        let handles = try await pair.connect()
        try await pair.a.succeed(LESetAdvertisingEnable(enable: true))
        #expect(try await pair.b.start(LECreateConnection(peerAddress: .randomStatic(0xDEAD), ownAddressType: .random)) == .success)

        try await pair.a.succeed(HCIReset())
        #expect(try await pair.b.nextEvent() == .disconnectionComplete(.init(handle: handles.b, reason: .connectionTimeout)))
        // A forgot its random address, so advertising from it is refused.
        try await pair.a.succeed(LESetAdvertisingParameters(ownAddressType: .random))
        #expect(try await pair.a.run(LESetAdvertisingEnable(enable: true)).status == .invalidParameters)
        // Masks are back to defaults: LE events are masked until the host sets them again.
        try await pair.a.initialize(random: pair.addressA)

        // B's reset drops its pending create connection: a new one is accepted.
        try await pair.b.succeed(HCIReset())
        try await pair.b.initialize(random: pair.addressB)
        #expect(try await pair.b.start(LECreateConnection(peerAddress: pair.addressA, ownAddressType: .random)) == .success)
        try await pair.advertiseA()
        guard case .connectionComplete = try await pair.b.nextLEEvent() else { Issue.record("no reconnect"); return }
        guard case let .connectionComplete(fresh) = try await pair.a.nextLEEvent() else { Issue.record("no reconnect"); return }
        #expect(fresh.handle == 1, "handles restart after reset")
    }
}

@Suite(.timeLimit(.minutes(1))) struct VirtualFaultInjectionTests {
    @Test func packetLossDropsACLButTheSenderStillGetsCompletions() async throws {
        let pair = try await LinkPair()
        let handles = try await pair.connect()
        await pair.link.setPacketLossRate(1)
        await pair.b.controller.send(.acl(handle: handles.b, boundary: .firstFlushable, broadcast: 0, data: [1, 0, 4, 0, 0xAA]))
        guard case .numberOfCompletedPackets = try await pair.b.nextEvent() else { Issue.record("no NOCP"); return }
        await pair.link.setPacketLossRate(0)
        await pair.b.controller.send(.acl(handle: handles.b, boundary: .firstFlushable, broadcast: 0, data: [1, 0, 4, 0, 0xBB]))
        #expect(await pair.a.next() == .acl(handle: handles.a, boundary: .firstFlushable, broadcast: 0, data: [1, 0, 4, 0, 0xBB]))
    }

    @Test func partialLossIsReproducibleAndLosesSome() async throws {
        func delivered(seed: UInt64) async throws -> [UInt8] {
            let link = VirtualLink(seed: seed)
            let a = HostProbe(await link.attachController())
            let b = HostProbe(await link.attachController())
            try await a.initialize()
            try await b.initialize()
            try await a.succeed(LESetAdvertisingEnable(enable: true))
            #expect(try await b.start(LECreateConnection(peerAddress: a.controller.publicAddress)) == .success)
            _ = try await a.nextLEEvent()
            _ = try await b.nextLEEvent()
            await link.setPacketLossRate(0.5)
            // A's host reads all along: a packet that arrives is completed once A took it.
            let receiver = a.controller
            let reader = Task {
                var got: [UInt8] = []
                while case let .acl(_, _, _, data)? = await receiver.nextPacket(), let byte = data.first {
                    got.append(byte)
                    if byte == 0xFF { break }
                }
                return got
            }
            for i in 0..<40 {
                await b.controller.send(.acl(handle: 1, boundary: .firstFlushable, broadcast: 0, data: [UInt8(i)]))
                _ = await b.next()
            }
            await link.setPacketLossRate(0)
            await b.controller.send(.acl(handle: 1, boundary: .firstFlushable, broadcast: 0, data: [0xFF]))
            return await reader.value
        }
        let first = try await delivered(seed: 7)
        let second = try await delivered(seed: 7)
        #expect(first == second)
        #expect(first.count > 5 && first.count < 41)
    }

    @Test func latencyKeepsOrderAndDropsDataForAConnectionThatEnded() async throws {
        let pair = try await LinkPair()
        let handles = try await pair.connect()
        await pair.link.setLatency(.milliseconds(20))
        for i in 0..<5 {
            await pair.b.controller.send(.acl(handle: handles.b, boundary: .firstFlushable, broadcast: 0, data: [UInt8(i)]))
        }
        for i in 0..<5 {
            #expect(await pair.a.next() == .acl(handle: handles.a, boundary: .firstFlushable, broadcast: 0, data: [UInt8(i)]))
        }
        for _ in 0..<5 {
            guard case .numberOfCompletedPackets = try await pair.b.nextEvent() else { Issue.record("no NOCP"); return }
        }
        // Data still in the air when the link is lost never arrives. (The latency is long so the
        // link loss surely happens first; fresh data later waits behind anything still queued.)
        await pair.link.setLatency(.seconds(2))
        await pair.b.controller.send(.acl(handle: handles.b, boundary: .firstFlushable, broadcast: 0, data: [0x55]))
        try await pair.b.expectNothingPending()  // not completed: it was not delivered yet
        await pair.link.linkLoss(pair.b.controller, pair.a.controller)
        #expect(try await pair.a.nextEvent() == .disconnectionComplete(.init(handle: handles.a, reason: .connectionTimeout)))
        #expect(try await pair.b.nextEvent() == .disconnectionComplete(.init(handle: handles.b, reason: .connectionTimeout)))
        // Reconnect (the handles are reused) and send fresh data: it is the first data to arrive.
        let again = try await pair.connect()
        #expect(again.a == handles.a)
        await pair.b.controller.send(.acl(handle: again.b, boundary: .firstFlushable, broadcast: 0, data: [0x66]))
        #expect(await pair.a.next() == .acl(handle: again.a, boundary: .firstFlushable, broadcast: 0, data: [0x66]))
    }
}
