import BluetideBase
import BluetideHCI
import BluetideTransport
import BluetideVirtual
import Testing
import BluetideTestSupport
@testable import BluetideHost

/// Two Bluetide host stacks talking over the in-process virtual link.
@Suite(.timeLimit(.minutes(1))) struct HostStackVirtualTests {
    @Test func startReadsTheControllerAndScanFindsTheAdvertiser() async throws {
        let pair = try await VirtualPair.start()
        defer { Task { await pair.close() } }
        let info = try #require(await pair.central.controller)
        #expect(info.aclBufferLength >= 27)
        let found: AdvertisementReport? = try await within(20, "scan") {
            for await report in try await pair.central.scan() where report.data.localName == "Bluetide Test" {
                return report
            }
            return nil
        }
        let report = try #require(found)
        #expect(report.address == pair.peripheralAddress)
        #expect(report.isConnectable)
        #expect(report.rssi < 0)
    }

    @Test func discoverReadWriteNotifyIndicateAndDisconnect() async throws {
        let pair = try await VirtualPair.start()
        defer { Task { await pair.close() } }
        let (link, peer) = try await within(10, "connect") { try await pair.connect() }
        #expect(link.role == .central && peer.role == .peripheral)

        let mtu = try await link.gatt.exchangeMTU()
        #expect(mtu == 517)
        let services = try await link.gatt.discoverDatabase()
        let service = try #require(services.first { $0.service.uuid == TestService.service })
        func characteristic(_ uuid: BluetoothUUID) throws -> GATTCharacteristic {
            try #require(service.characteristics.first { $0.characteristic.uuid == uuid }).characteristic
        }
        #expect(services.contains { $0.service.uuid == .genericAccess })

        // Long read at MTU 517 is one Read; the value is exact.
        #expect(try await link.gatt.read(handle: characteristic(TestService.longValue).valueHandle) == TestService.longBytes)

        // Short and long writes land in the server and appear as server events.
        let echo = try characteristic(TestService.echo).valueHandle
        var serverEvents = pair.peripheral.serverEvents.makeAsyncIterator()
        try await link.gatt.write(handle: echo, value: [1, 2, 3])
        let written = await serverEvents.next()
        #expect(written?.event == .valueWritten(connection: peer.handle, handle: echo, uuid: TestService.echo, value: [1, 2, 3]))
        let long = (0..<512).map { UInt8(($0 * 7) % 256) }
        try await link.gatt.writeLong(handle: echo, value: long)
        #expect(try await link.gatt.read(handle: echo) == long)

        // Validation hook refuses with application error 0x80; the value is kept.
        let guarded = try characteristic(TestService.guarded).valueHandle
        await #expect(throws: GATTClientError.att(ATTErrorCode(rawValue: 0x80), handle: guarded, request: .writeRequest)) {
            try await link.gatt.write(handle: guarded, value: [0xFF])
        }
        #expect(try await link.gatt.read(handle: guarded) == [1])

        // Notifications reach the subscriber, in order.
        let notifyCharacteristic = try characteristic(TestService.notify)
        let notifications = try await link.gatt.subscribe(to: notifyCharacteristic)
        let notifyHandle = try #require(await pair.peripheral.valueHandle(of: TestService.notify))
        for i in 1...20 { await pair.peripheral.updateValue([UInt8(i)], at: notifyHandle) }
        var received: [UInt8] = []
        for await value in notifications {
            received += value
            if received.count == 20 { break }
        }
        #expect(received == (1...20).map { UInt8($0) })

        // Indications arrive and are confirmed.
        let indications = try await link.gatt.subscribe(to: characteristic(TestService.indicate))
        let indicateHandle = try #require(await pair.peripheral.valueHandle(of: TestService.indicate))
        for i in 1...3 { await pair.peripheral.updateValue([0xA0 + UInt8(i)], at: indicateHandle) }
        var indicated: [[UInt8]] = []
        for await value in indications {
            indicated.append(value)
            if indicated.count == 3 { break }
        }
        #expect(indicated == [[0xA1], [0xA2], [0xA3]])

        // Central disconnects; both sides learn it.
        let reason = try await link.disconnect()
        #expect(reason == .localHostTerminated)
        #expect(await peer.waitForDisconnection() == .remoteUserTerminated)
        #expect(await pair.central.openConnections.isEmpty)
    }

    @Test func peripheralCanDisconnectToo() async throws {
        let pair = try await VirtualPair.start()
        defer { Task { await pair.close() } }
        let (link, peer) = try await within(10, "connect") { try await pair.connect() }
        try await peer.disconnect(reason: .remoteUserTerminated)
        #expect(await link.waitForDisconnection() == .remoteUserTerminated)
        await #expect(throws: (any Error).self) { try await link.gatt.read(handle: 1) }
    }

    /// The controller gives the next link the handle of the one that just closed (real ones do
    /// too). A copy of the closed link's connection kept by someone (a late unsubscribe, a
    /// write) must fail as disconnected, not act on the new link: a Write Request sent there
    /// once answered the new link's Exchange MTU Request.
    @Test func aClosedLinksConnectionNeverActsOnTheNewLinkWithItsHandle() async throws {
        let pair = try await VirtualPair.start()
        defer { Task { await pair.close() } }
        let (old, _) = try await within(10, "connect") { try await pair.connect() }
        let services = try await old.gatt.discoverDatabase()
        let service = try #require(services.first { $0.service.uuid == TestService.service })
        let notify = try #require(service.characteristics.first { $0.characteristic.uuid == TestService.notify }).characteristic
        #expect(try await old.disconnect() == .localHostTerminated)
        try await pair.peripheral.startAdvertising(
            AdvertisingData([.flags([.leGeneralDiscoverable, .brEdrNotSupported]), .completeLocalName("Bluetide Test")]),
            intervalMilliseconds: 20)
        let (new, _) = try await within(10, "connect again") { try await pair.connect() }
        #expect(new.handle == old.handle, "the controller reused the handle")
        #expect(new != old)
        let newOpen = await new.isOpen(), oldOpen = await old.isOpen()
        #expect(newOpen && !oldOpen)
        await #expect(throws: HostError.disconnected(old.handle, reason: .localHostTerminated)) {
            try await old.gatt.unsubscribe(from: notify)
        }
        await #expect(throws: HostError.disconnected(old.handle, reason: .localHostTerminated)) {
            try await old.gatt.read(handle: notify.valueHandle)
        }
        await #expect(throws: HostError.disconnected(old.handle, reason: .localHostTerminated)) {
            try await old.gatt.writeWithoutResponse(handle: notify.valueHandle, value: [1])
        }
        #expect(try await old.disconnect() == .localHostTerminated, "the old link's own reason; the new link stays up")
        #expect(await old.waitForDisconnection() == .localHostTerminated)
        // The new link is untouched: its MTU exchange gets its own answer.
        #expect(try await new.gatt.exchangeMTU() == 517)
        #expect(await new.isOpen())
    }

    @Test func linkLossFailsAPendingRequestPromptly() async throws {
        // In virtual time: the link and both stacks run on a manual clock.
        let clock = ManualClock()
        let pair = try await VirtualPair.start(clock: clock)
        defer { Task { await pair.close() } }
        try await clock.advancing {
            let (link, _) = try await within(10, "connect") { try await pair.connect() }
            // Every packet now takes 2 s in the air, then the link is lost while a read waits.
            await pair.centralTransport.controller.link.setLatency(.seconds(2))
            let read = Task { try await link.gatt.read(handle: 3) }
            try await clock.sleep(for: .milliseconds(100))
            await pair.centralTransport.controller.link.linkLoss(pair.centralTransport.controller)
            let outcome = await withinGuard { await read.result }
            guard case let .failure(error) = outcome else {
                Issue.record("read succeeded across link loss")
                return
            }
            #expect("\(error)".contains("closed"))
            #expect(await link.waitForDisconnection() == .connectionTimeout)
        }
    }

    @Test func connectTimesOutWhenNobodyAdvertises() async throws {
        let pair = try await VirtualPair.start()
        defer { Task { await pair.close() } }
        let absent = BluetoothAddress.randomStatic(0x0000_0000_0042)
        await #expect(throws: HostError.connectTimedOut(absent, seconds: 0.5)) {
            try await pair.central.connect(to: absent, timeout: 0.5)
        }
        // The controller is usable again afterwards.
        let (link, _) = try await within(10, "connect after timeout") { try await pair.connect() }
        #expect(await link.isOpen())
    }

    @Test func mtu23ForcesReadBlobAndPreparedWrites() async throws {
        let pair = try await VirtualPair.start(localMTU: 23)
        defer { Task { await pair.close() } }
        let (link, _) = try await within(10, "connect") { try await pair.connect() }
        #expect(try await link.gatt.exchangeMTU() == 23)
        let services = try await link.gatt.discoverDatabase()
        let characteristics = services.flatMap(\.characteristics).map(\.characteristic)
        let long = try #require(characteristics.first { $0.uuid == TestService.longValue })
        #expect(try await link.gatt.read(handle: long.valueHandle) == TestService.longBytes)
        let echo = try #require(characteristics.first { $0.uuid == TestService.echo })
        let value = (0..<200).map { UInt8(255 - $0) }
        try await link.gatt.writeLong(handle: echo.valueHandle, value: value)
        #expect(try await link.gatt.read(handle: echo.valueHandle) == value)
    }

    @Test func servicesAddedAfterConnectingAreDiscoveredAndAnnounced() async throws {
        let pair = try await VirtualPair.start()
        defer { Task { await pair.close() } }
        let (link, _) = try await within(10, "connect") { try await pair.connect() }
        let before = try await link.gatt.discoverDatabase()
        let gatt = try #require(before.first { $0.service.uuid == .genericAttribute })
        let changed = try #require(gatt.characteristics.first { $0.characteristic.uuid == .serviceChanged })
        let announcements = try await link.gatt.subscribe(to: changed.characteristic)
        let battery = GATTServiceDefinition(uuid: .battery, characteristics: [
            GATTCharacteristicDefinition(uuid: .batteryLevel, properties: [.read, .notify], value: [77])
        ])
        await pair.peripheral.setServices([TestService.definition, battery])
        var iterator = announcements.makeAsyncIterator()
        let range = try #require(await iterator.next())
        #expect(range == [0x01, 0x00, 0xFF, 0xFF])
        let after = try await link.gatt.discoverDatabase()
        let level = try #require(after.first { $0.service.uuid == .battery }?.characteristics.first)
        #expect(try await link.gatt.read(handle: level.characteristic.valueHandle) == [77])
    }

    @Test func closingTheCentralTransportLooksLikeSupervisionTimeoutToThePeer() async throws {
        let pair = try await VirtualPair.start()
        defer { Task { await pair.close() } }
        let (_, peer) = try await within(10, "connect") { try await pair.connect() }
        await pair.central.close()
        #expect(await withinGuard { await peer.waitForDisconnection() } == .connectionTimeout)
    }
}

/// `within(20, …)` for non-throwing bodies.
func withinGuard<T: Sendable>(_ body: @escaping @Sendable () async -> T) async -> T? {
    try? await within(20, "wait") { await body() }
}
