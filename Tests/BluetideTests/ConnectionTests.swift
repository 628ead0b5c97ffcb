import BluetideHCI
import BluetideTransport
import BluetideVirtual
import Foundation
import Testing
@testable import Bluetide
import BluetideTestSupport

/// Connections through the public API: reads, writes, errors, MTU, notifications, limits.
@Suite(.timeLimit(.minutes(3))) struct ConnectionTests {
    /// A peripheral and a central on a fresh link; with `clock`, all of it runs on that clock.
    static func pair(
        maximumConnections: Int = 8, clock: ManualClock? = nil
    ) async throws -> (link: String, central: TestCentral, peripheral: TestPeripheral) {
        let link = uniqueLinkName()
        let peripheral = try await TestPeripheral.start(link: link, seed: 0x5151, clock: clock)
        let central = try await TestCentral.start(link: link, maximumConnections: maximumConnections, clock: clock)
        return (link, central, peripheral)
    }

    @Test func typedReadAndWriteAndClearErrors() async throws {
        let (_, central, peripheral) = try await Self.pair()
        defer { Task { await central.close(); await peripheral.close() } }
        let connection = try await central.central.connect(to: peripheral.address, policy: .test)
        #expect(await connection.isConnected)
        #expect(await connection.mtu == 517)

        #expect(try await connection.read(TestGATT.counter, as: UInt16.self) == 0x1234)
        try await connection.write(UInt16(0xBEEF), to: TestGATT.counter)
        #expect(try await connection.read(TestGATT.counter) == [0xEF, 0xBE])

        // 512 bytes (the longest attribute value) with response: one Write Request at MTU 517.
        let full = (0..<512).map { UInt8($0 % 251) }
        try await connection.write(full, to: TestGATT.echo)
        #expect(try await connection.read(TestGATT.echo) == full)

        // Refused by the server's validator: the ATT error reaches the client.
        await #expect(throws: BluetideError.attError(ATTErrorCode(0x80), characteristic: TestGATT.guarded, operation: "write")) {
            try await connection.write(UInt8(0xFF), to: TestGATT.guarded)
        }
        // Writing a read-only characteristic: Write Not Permitted.
        do {
            try await connection.write(UInt8(1), to: TestGATT.readOnly)
            Issue.record("write to a read-only characteristic succeeded")
        } catch let BluetideError.attError(code, characteristic, _) {
            #expect(code == .writeNotPermitted && characteristic == TestGATT.readOnly)
        }

        // Unknown characteristic: the error names it and the services present.
        let missing = BluetoothUUID(0x2A37)
        do {
            _ = try await connection.read(missing)
            Issue.record("read of a missing characteristic succeeded")
        } catch let BluetideError.characteristicNotFound(uuid, services) {
            #expect(uuid == missing)
            #expect(services.contains(TestGATT.service) && services.contains(.genericAccess))
        }

        // Without response the value must fit MTU − 3.
        await #expect(throws: BluetideError.valueTooLong(TestGATT.echo, length: 513, maximum: 512)) {
            try await connection.write([UInt8](repeating: 1, count: 513), to: TestGATT.echo, withResponse: false)
        }
        try await connection.write([UInt8](repeating: 2, count: 512), to: TestGATT.echo, withResponse: false)
        #expect(try await connection.read(TestGATT.echo) == [UInt8](repeating: 2, count: 512))
        // A value that does not decode names the type.
        await #expect(throws: BluetideError.self) { _ = try await connection.read(TestGATT.readOnly, as: UInt32.self) }

        #expect(try await connection.rssi() < 0)
        let parameters = try #require(await connection.parameters())
        #expect(parameters.intervalMilliseconds > 0)
        await connection.disconnect()
        #expect(await !connection.isConnected)
        await #expect(throws: BluetideError.self) { _ = try await connection.read(TestGATT.counter) }
    }

    @Test func descriptorsAreReadByTypeAndAMissingOneIsNamed() async throws {
        let (_, central, peripheral) = try await Self.pair()
        defer { Task { await central.close(); await peripheral.close() } }
        let connection = try await central.central.connect(to: peripheral.address, policy: .test)
        let cccd = BluetoothUUID(0x2902)
        #expect(try await connection.readDescriptor(cccd, of: TestGATT.notify) == [0x00, 0x00])
        let values = try await connection.notifications(of: TestGATT.notify)
        #expect(try await connection.readDescriptor(cccd, of: TestGATT.notify) == [0x01, 0x00], "subscribing wrote the CCCD")
        _ = values
        await #expect(throws: BluetideError.descriptorNotFound(cccd, characteristic: TestGATT.counter, descriptors: [])) {
            try await connection.readDescriptor(cccd, of: TestGATT.counter)
        }
        await #expect(throws: BluetideError.characteristicNotFound(BluetoothUUID(0x2A37), services: try await connection.services().map(\.service.uuid))) {
            try await connection.readDescriptor(cccd, of: BluetoothUUID(0x2A37))
        }
        await connection.disconnect()
    }

    @Test func mtuIsVisibleAndSettableOnce() async throws {
        let (_, central, peripheral) = try await Self.pair()
        defer { Task { await central.close(); await peripheral.close() } }
        let connection = try await central.central.connect(
            to: peripheral.address, policy: ConnectionPolicy(operationTimeout: .seconds(20), setupTimeout: .seconds(20), preferredMTU: nil))
        #expect(await connection.mtu == 23)
        // Longer than MTU − 3 with response: prepared writes behind the scenes; the read back
        // needs Read Blob.
        let long = (0..<300).map { UInt8($0 % 251) }
        try await connection.write(long, to: TestGATT.echo)
        #expect(try await connection.read(TestGATT.echo) == long)
        #expect(try await connection.requestMTU(185) == 185)
        #expect(await connection.mtu == 185)
        await #expect(throws: BluetideError.mtuAlreadyExchanged(current: 185)) { try await connection.requestMTU(247) }
        await #expect(throws: BluetideError.valueTooLong(TestGATT.echo, length: 183, maximum: 182)) {
            try await connection.write([UInt8](repeating: 1, count: 183), to: TestGATT.echo, withResponse: false)
        }
        // Chunked send follows the MTU: 182-byte parts, all in order.
        let data = (0..<1000).map { UInt8($0 % 256) }
        try await connection.send(data, to: TestGATT.sink)
        try await within(20, "sink fill") { await peripheral.sink.waitForCount(data.count) }
        #expect(peripheral.sink.all == data)
    }

    @Test func connectToAnAbsentDeviceTimesOut() async throws {
        let link = uniqueLinkName()
        let central = try await TestCentral.start(link: link)
        defer { Task { await central.close() } }
        let absent = BluetoothAddress.randomStatic(0xDEAD)
        await #expect(throws: BluetideError.connectTimedOut(absent, seconds: 0.3)) {
            _ = try await central.central.connect(to: absent, timeout: .milliseconds(300))
        }
        // The slot was given back.
        #expect(await central.central.connections().isEmpty)
    }

    @Test func retryPolicyConnectsToADeviceThatStartsAdvertisingLate() async throws {
        // In virtual time: the link, both hosts and the central run on one manual clock.
        let clock = ManualClock()
        let link = uniqueLinkName()
        let peripheral = try await TestPeripheral.start(link: link, seed: 0x7777, advertise: false, clock: clock)
        let central = try await TestCentral.start(link: link, clock: clock)
        defer { Task { await central.close(); await peripheral.close() } }
        try await clock.advancing {
            // One attempt fails.
            await #expect(throws: BluetideError.connectTimedOut(peripheral.address, seconds: 0.2)) {
                _ = try await central.central.connect(to: peripheral.address, timeout: .milliseconds(200))
            }
            // Many attempts: the device starts advertising after the first ones failed.
            let start = clock.now
            let late = Task {
                try await clock.sleep(for: .milliseconds(500))
                try await peripheral.advertise()
            }
            let policy = ConnectionPolicy(retry: .init(attempts: 60, delay: .milliseconds(50)), operationTimeout: .seconds(20), setupTimeout: .seconds(20))
            let connection = try await central.central.connect(to: peripheral.address, timeout: .milliseconds(200), policy: policy)
            try await late.value
            // Attempts of 0.2 s, 0.05 s apart: the third starts at 0.5 s and finds the device.
            #expect(start.duration(to: clock.now) >= .milliseconds(500))
            #expect(try await connection.read(TestGATT.counter, as: UInt16.self) == 0x1234)
        }
    }

    @Test func maximumConnectionsIsEnforced() async throws {
        let link = uniqueLinkName()
        let first = try await TestPeripheral.start(link: link, seed: 0x1001)
        let second = try await TestPeripheral.start(link: link, seed: 0x1002)
        let central = try await TestCentral.start(link: link, maximumConnections: 1)
        defer { Task { await central.close(); await first.close(); await second.close() } }
        let one = try await central.central.connect(to: first.address, policy: .test)
        do {
            _ = try await central.central.connect(to: second.address, policy: .test)
            Issue.record("a second connection was allowed")
        } catch let error as BluetideError {
            #expect(error == .tooManyConnections(limit: 1))
            #expect("\(error)".contains("maximum"))
        }
        await one.disconnect()
        let two = try await central.central.connect(to: second.address, policy: .test)
        #expect(try await two.read(TestGATT.counter, as: UInt16.self) == 0x1234)
        #expect(await central.central.connections() == [two])
    }

    @Test func severalDevicesAtOnce() async throws {
        let link = uniqueLinkName()
        var peripherals: [TestPeripheral] = []
        for seed in 0x6001...0x6003 { peripherals.append(try await TestPeripheral.start(link: link, seed: UInt64(seed))) }
        let central = try await TestCentral.start(link: link)
        let all = peripherals
        defer { Task { await central.close(); for p in all { await p.close() } } }
        // Connect to all three concurrently: attempts are queued, none fails as "in progress".
        let connections = try await withThrowingTaskGroup(of: Connection.self) { group in
            for p in all { group.addTask { try await central.central.connect(to: p.address, policy: .test) } }
            var made: [Connection] = []
            for try await connection in group { made.append(connection) }
            return made
        }
        #expect(Set(connections.map(\.address)) == Set(all.map(\.address)))
        #expect(await central.central.connections().count == 3)
        // Each link notifies independently.
        for connection in connections {
            let values = try await connection.notifications(of: TestGATT.notify)
            let peripheral = try #require(all.first { $0.address == connection.address })
            try await peripheral.notify([0x42, UInt8(peripheral.address.value & 0xFF)])
            var iterator = values.makeAsyncIterator()
            let value = try await iterator.next()
            #expect(value == [0x42, UInt8(peripheral.address.value & 0xFF)])
        }
        // The remembered form connects the same way.
        await connections[0].disconnect()
        let remembered = RememberedDevice(address: connections[0].address, name: "again")
        let again = try await central.central.connect(to: remembered, policy: .test)
        #expect(try await again.read(TestGATT.counter, as: UInt16.self) == 0x1234)
    }

    @Test func notificationsArriveInOrderAndEndCleanlyOnDisconnect() async throws {
        let (_, central, peripheral) = try await Self.pair()
        defer { Task { await central.close(); await peripheral.close() } }
        let connection = try await central.central.connect(to: peripheral.address, policy: .test)
        let values = try await connection.notifications(of: TestGATT.notify, as: UInt8.self)
        let raw = try await connection.notifications(of: TestGATT.notify)
        for i in 1...50 { try await peripheral.notify([UInt8(i)]) }
        var typed: [UInt8] = []
        for try await value in values {
            typed.append(value)
            if typed.count == 50 { break }
        }
        #expect(typed == (1...50).map { UInt8($0) })
        var bytes: [UInt8] = []
        for try await value in raw {
            bytes += value
            if bytes.count == 50 { break }
        }
        #expect(bytes == typed)

        // Not subscribable.
        await #expect(throws: BluetideError.notSubscribable(TestGATT.counter)) {
            _ = try await connection.notifications(of: TestGATT.counter)
        }

        // A user disconnect ends the sequences without error and the events with .disconnected.
        let more = try await connection.notifications(of: TestGATT.notify)
        var events = connection.events.makeAsyncIterator()
        let next1 = await events.next()
        #expect(next1 == .connected)
        await connection.disconnect()
        var after: [[UInt8]] = []
        for try await value in more { after.append(value) }
        #expect(after.isEmpty)
        if case .disconnected = await events.next() {} else { Issue.record("no disconnected event") }
        let next2 = await events.next()
        #expect(next2 == nil)
    }

    @Test func aBadValueEndsATypedStreamAndTheLastStreamEndingUnsubscribes() async throws {
        let (_, central, peripheral) = try await Self.pair()
        defer { Task { await central.close(); await peripheral.close() } }
        let connection = try await central.central.connect(to: peripheral.address, policy: .test)
        let typed = try await connection.notifications(of: TestGATT.notify, as: UInt16.self)
        #expect(try await peripheral.notify([1, 2]) == 1)
        #expect(try await peripheral.notify([3]) == 1)
        var received: [UInt16] = []
        do {
            for try await value in typed { received.append(value) }
            Issue.record("the stream ended without the decoding error")
        } catch let BluetideError.decodingFailed(uuid, type, _) {
            #expect(uuid == TestGATT.notify && type == "UInt16")
        }
        #expect(received == [0x0201])
        // The typed stream is gone: the subscription is cleared on the device.
        let notifyHandle = try #require(await peripheral.stack.valueHandle(of: TestGATT.notify))
        let cleared = try await within(20, "unsubscribe") {
            for await event in peripheral.stack.serverEvents {
                if case let .subscriptionChanged(_, valueHandle, configuration) = event.event,
                   valueHandle == notifyHandle, configuration.isEmpty { return true }
            }
            return false
        }
        #expect(cleared)
        #expect(try await peripheral.notify([0, 0]) == 0)
        // Subscribing again works.
        let again = try await connection.notifications(of: TestGATT.notify)
        #expect(try await peripheral.notify([9]) == 1)
        var iterator = again.makeAsyncIterator()
        let value = try await iterator.next()
        #expect(value == [9])
    }

    @Test func twoCentralsOnOnePeripheral() async throws {
        let link = uniqueLinkName()
        let peripheral = try await TestPeripheral.start(link: link, seed: 0x2222)
        let a = try await Bluetooth.open(transport: "virtual:\(link)", configuration: .testing)
        let b = try await Bluetooth.open(transport: "virtual:\(link)", configuration: .init(deviceName: "B", commandTimeout: .seconds(30)))
        defer { Task { await a.close(); await b.close(); await peripheral.close() } }
        #expect(a.address != b.address)
        let ca = try await a.central.connect(to: peripheral.address, policy: .test)
        let cb = try await b.central.connect(to: peripheral.address, policy: .test)
        let sa = try await ca.notifications(of: TestGATT.notify)
        let sb = try await cb.notifications(of: TestGATT.notify)
        for i in 1...10 { #expect(try await peripheral.notify([UInt8(i)]) == 2) }
        for stream in [sa, sb] {
            var got: [UInt8] = []
            for try await value in stream {
                got += value
                if got.count == 10 { break }
            }
            #expect(got == (1...10).map { UInt8($0) })
        }
        try await ca.write(UInt16(1), to: TestGATT.counter)
        #expect(try await cb.read(TestGATT.counter, as: UInt16.self) == 1)
    }

    @Test func oneMegabyteWithoutResponseArrivesCompleteAndInOrder() async throws {
        let (_, central, peripheral) = try await Self.pair()
        defer { Task { await central.close(); await peripheral.close() } }
        let connection = try await central.central.connect(to: peripheral.address, policy: .test)
        var generator = SystemRandomNumberGenerator()
        let data = (0..<(1 << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        // Hang guards, not timings: alone this takes under a second, but with the whole suite
        // on a 2-core machine the tasks may wait tens of seconds for a thread.
        try await within(90, "send 1 MB") { try await connection.send(data, to: TestGATT.sink) }
        try await within(90, "sink fill") { await peripheral.sink.waitForCount(data.count) }
        #expect(peripheral.sink.count == data.count)
        #expect(peripheral.sink.all == data)
    }

    @Test func anOperationWithoutAnswerTimesOutAndTheNextOneStillWorks() async throws {
        // In virtual time: the 4 s of latency, the 2 s limit and the wait pass on a manual clock.
        let clock = ManualClock()
        let (link, central, peripheral) = try await Self.pair(clock: clock)
        defer { Task { await central.close(); await peripheral.close() } }
        try await clock.advancing {
            let connection = try await central.central.connect(
                to: peripheral.address, policy: ConnectionPolicy(operationTimeout: .seconds(2), setupTimeout: .seconds(20)))
            let radio = await VirtualLink.named(link)
            // Latency well above the time limit.
            await radio.setLatency(.seconds(4))
            await #expect(throws: BluetideError.timedOut(operation: "read of \(TestGATT.counter)", seconds: 2)) {
                _ = try await connection.read(TestGATT.counter)
            }
            await radio.setLatency(.zero)
            // The late answer (about 4 s after the request) belongs to the abandoned read; once it
            // is in, the next read succeeds. (10 s of virtual time costs nothing and leaves room
            // for a request that a starved machine put on the link late.)
            try await clock.sleep(for: .seconds(10))
            #expect(try await connection.read(TestGATT.readOnly) == [7])
        }
    }

    @Test func connectionParametersCanBeRequested() async throws {
        // In virtual time: the update takes effect a few connection intervals later.
        let clock = ManualClock()
        let (_, central, peripheral) = try await Self.pair(clock: clock)
        defer { Task { await central.close(); await peripheral.close() } }
        try await clock.advancing {
            let connection = try await central.central.connect(to: peripheral.address, policy: .test)
            try await connection.requestParameters(
                minimumInterval: .milliseconds(15), maximumInterval: .milliseconds(15), latency: 2,
                supervisionTimeout: .seconds(2))
            let updated = try await within(20, "parameter update") {
                while true {
                    if let p = await connection.parameters(), p.latency == 2 { return p }
                    try await clock.sleep(for: .milliseconds(10))
                }
            }
            #expect(updated.intervalMilliseconds == 15)
            #expect(updated.supervisionTimeoutMilliseconds == 2000)
            await #expect(throws: BluetideError.self) {
                try await connection.requestParameters(minimumInterval: .milliseconds(1), maximumInterval: .milliseconds(2))
            }
        }
    }

    @Test func openRejectsABadTransportClearly() async throws {
        do {
            _ = try await Bluetooth.open(transport: "carrier-pigeon:1")
            Issue.record("opened a nonsense transport")
        } catch let BluetideError.transportUnavailable(spec, _) {
            #expect(spec == "carrier-pigeon:1")
        }
    }
}
