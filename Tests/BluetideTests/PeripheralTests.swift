import Bluetide
import BluetideHost
import BluetideProfiles
import Testing

/// The peripheral role over the virtual link: a Punch service written with `@Characteristic`,
/// served to bare host stacks acting as centrals.
@Suite(.timeLimit(.minutes(1))) struct PeripheralTests {
    typealias Kit = PeripheralTestKit

    /// Starts a world with the Punch service added and advertising.
    private func serving() async throws -> (PeripheralTestWorld, PeripheralTestPunchService) {
        let world = try await PeripheralTestWorld.start()
        let service = PeripheralTestPunchService()
        try await world.peripheral.add(service)
        try await world.peripheral.startAdvertising(
            name: "Reflex-TEST", serviceUUIDs: [PunchUUID.service], interval: .milliseconds(20))
        return (world, service)
    }

    @Test func centralDiscoversReadsAndWrites() async throws {
        let (world, service) = try await serving()
        let central = try await world.central(1)
        defer { Task { await world.close(central) } }
        let link = try await Kit.within(10, "connect") { try await central.connect(to: world.address, timeout: 5) }

        let punch = try await Kit.discoverPunch(on: link)
        #expect(punch.service.isPrimary)
        let response = try Kit.characteristic(PunchUUID.response, in: punch)
        let times = try Kit.characteristic(PunchUUID.timeSequence, in: punch)
        let targets = try Kit.characteristic(PunchUUID.sequence, in: punch)
        #expect(response.characteristic.properties == [.read, .notify])
        #expect(times.characteristic.properties == [.read, .write])
        #expect(punch.characteristics.map(\.characteristic.uuid) == [PunchUUID.response, PunchUUID.timeSequence, PunchUUID.sequence])

        // Reads return the current value, also right after a local assignment.
        #expect(try await link.gatt.read(handle: response.characteristic.valueHandle) == service.response.bytes)
        service.response = PunchResponse(reactionTimeMilliseconds: 412, target: 3, hit: true, step: 7)
        #expect(try await link.gatt.read(handle: response.characteristic.valueHandle)
            == [0x9C, 0x01, 0x00, 0x00, 0x03, 0x01, 0x07, 0x00])

        // The user description descriptor (0x2901) carries the text.
        let description = try #require(response.descriptors.first { $0.uuid == .characteristicUserDescription })
        #expect(try await link.gatt.read(handle: description.handle) == Array("Punch response".utf8))

        // A write updates the property and appears on $targets.writes with who wrote it.
        let writes = service.$targets.writes
        try await link.gatt.write(handle: targets.characteristic.valueHandle, value: [1, 2, 3])
        #expect(service.targets == [1, 2, 3])
        let write = try #require(try await Kit.within(20, "write delivery") { try await Kit.collect(1, from: writes).first })
        #expect(write.value == [1, 2, 3])
        #expect(write.bytes == [1, 2, 3])
        #expect(write.central?.address == .randomStatic(0x0BAD_0000 + 1))
        #expect(write.central?.handle == write.connectionHandle)
        #expect(try await link.gatt.read(handle: targets.characteristic.valueHandle) == [1, 2, 3])

        // A typed value decodes: 250 ms, 1500 ms.
        let timeWrites = service.$times.writes
        try await link.gatt.write(handle: times.characteristic.valueHandle, value: [0xFA, 0x00, 0xDC, 0x05])
        let timeWrite = try #require(try await Kit.within(20, "time write") { try await Kit.collect(1, from: timeWrites).first })
        #expect(timeWrite.value.milliseconds == [250, 1500])
        #expect(service.times.milliseconds == [250, 1500])
    }

    @Test func refusedWritesKeepTheValueAndReachTheClientWithTheATTError() async throws {
        let (world, service) = try await serving()
        let central = try await world.central(2)
        defer { Task { await world.close(central) } }
        let link = try await Kit.within(10, "connect") { try await central.connect(to: world.address, timeout: 5) }
        let punch = try await Kit.discoverPunch(on: link)
        let targets = try Kit.characteristic(PunchUUID.sequence, in: punch).characteristic.valueHandle
        let times = try Kit.characteristic(PunchUUID.timeSequence, in: punch).characteristic.valueHandle
        let writes = service.$targets.writes

        // Validation hook: target 9 is no valid PunchSequence → application error 0x80.
        await #expect(throws: GATTClientError.att(ATTErrorCode(0x80), handle: targets, request: .writeRequest)) {
            try await link.gatt.write(handle: targets, value: [1, 9])
        }
        await #expect(throws: GATTClientError.att(ATTErrorCode(0x80), handle: targets, request: .writeRequest)) {
            try await link.gatt.write(handle: targets, value: [])
        }
        #expect(service.targets == [0])
        #expect(try await link.gatt.read(handle: targets) == [0])

        // Decoding: a time of 0 ms is an invalid value (0x80); an odd byte count is a length
        // problem (0x0D).
        await #expect(throws: GATTClientError.att(ATTErrorCode(0x80), handle: times, request: .writeRequest)) {
            try await link.gatt.write(handle: times, value: [0x00, 0x00])
        }
        await #expect(throws: GATTClientError.att(.invalidAttributeValueLength, handle: times, request: .writeRequest)) {
            try await link.gatt.write(handle: times, value: [0xE8, 0x03, 0x01])
        }
        #expect(service.times.milliseconds == [1000])
        #expect(try await link.gatt.read(handle: times) == [0xE8, 0x03])

        // Refused writes never reached the writes sequence: the first thing on it is the next
        // accepted write.
        try await link.gatt.write(handle: targets, value: [5, 4])
        let first = try await Kit.within(20, "write delivery") { try await Kit.collect(1, from: writes) }
        #expect(first.map(\.value) == [[5, 4]])
    }

    @Test func assignmentsNotifySubscribersInOrder() async throws {
        let (world, service) = try await serving()
        let central = try await world.central(3)
        defer { Task { await world.close(central) } }
        let link = try await Kit.within(10, "connect") { try await central.connect(to: world.address, timeout: 5) }
        let punch = try await Kit.discoverPunch(on: link)
        let notifications = try await link.gatt.subscribe(to: Kit.characteristic(PunchUUID.response, in: punch).characteristic)

        for step in 0..<100 {
            service.response = PunchResponse(
                reactionTimeMilliseconds: UInt32(step * 10), target: UInt8(step % 6), hit: step % 3 != 0, step: UInt16(step))
        }
        let received = try await Kit.within(10, "100 notifications") { try await Kit.collect(100, from: notifications) }
        let steps = try received.map { try #require(try PunchResponse(exactly: $0).step) }
        #expect(steps == (0..<100).map { UInt16($0) })
        #expect(try PunchResponse(exactly: received[42]).reactionTimeMilliseconds == 420)
    }

    @Test func twoCentralsAtOnceBothGetNotifications() async throws {
        let (world, service) = try await serving()
        let first = try await world.central(4)
        let second = try await world.central(5)
        defer { Task { await world.close(first, second) } }
        let connections = world.peripheral.connections

        // Advertising resumes after the first connection, so the second central gets in too.
        let linkA = try await Kit.within(10, "connect A") { try await first.connect(to: world.address, timeout: 5) }
        let linkB = try await Kit.within(10, "connect B") { try await second.connect(to: world.address, timeout: 5) }
        let announced = try await Kit.within(20, "connections") { try await Kit.collect(2, from: connections) }
        let addresses: Set<BluetoothAddress> = [.randomStatic(0x0BAD_0000 + 4), .randomStatic(0x0BAD_0000 + 5)]
        #expect(Set(announced.map(\.address)) == addresses)
        #expect(Set(world.peripheral.connectedCentrals.map(\.address)) == addresses)

        let subscriptions = service.$response.subscriptions
        let streamA = try await linkA.gatt.subscribe(
            to: Kit.characteristic(PunchUUID.response, in: Kit.discoverPunch(on: linkA)).characteristic)
        let streamB = try await linkB.gatt.subscribe(
            to: Kit.characteristic(PunchUUID.response, in: Kit.discoverPunch(on: linkB)).characteristic)
        for step in 0..<10 {
            service.response = PunchResponse(reactionTimeMilliseconds: 300, target: 1, hit: true, step: UInt16(step))
        }
        let expected = (0..<10).map { PunchResponse(reactionTimeMilliseconds: 300, target: 1, hit: true, step: UInt16($0)).bytes }
        #expect(try await Kit.within(10, "notifications A") { try await Kit.collect(10, from: streamA) } == expected)
        #expect(try await Kit.within(10, "notifications B") { try await Kit.collect(10, from: streamB) } == expected)

        // Subscriptions are visible to the service, and end when a central leaves.
        let subscribed = try await Kit.within(20, "subscriptions") { try await Kit.collect(2, from: subscriptions) }
        #expect(subscribed.allSatisfy { $0.notifications && !$0.indications && $0.isSubscribed })
        #expect(Set(subscribed.compactMap { $0.central?.address }) == addresses)
        #expect(service.$response.subscriberCount == 2)
        try await linkA.disconnect()
        let ended = try await Kit.within(20, "subscription end") { try await Kit.collect(1, from: subscriptions) }
        #expect(ended.map(\.isSubscribed) == [false])
        #expect(ended.map(\.connectionHandle) == subscribed.filter { $0.central?.address == .randomStatic(0x0BAD_0000 + 4) }.map(\.connectionHandle))
        #expect(service.$response.subscriberCount == 1)
    }

    @Test func advertisingResumesAfterADisconnect() async throws {
        let (world, _) = try await serving()
        world.peripheral.maximumCentrals = 1
        let central = try await world.central(6)
        defer { Task { await world.close(central) } }

        let link = try await Kit.within(10, "connect") { try await central.connect(to: world.address, timeout: 5) }
        #expect(try await link.gatt.discoverDatabase().contains { $0.service.uuid == PunchUUID.service })
        try await link.disconnect()

        // Same central again: only possible if the peripheral advertises again.
        let again = try await Kit.within(10, "reconnect") { try await central.connect(to: world.address, timeout: 5) }
        #expect(try await again.gatt.discoverDatabase().contains { $0.service.uuid == PunchUUID.service })
        #expect(world.peripheral.isAdvertising)
    }

    @Test func advertisingDataTooLongForLegacyIsAClearError() async throws {
        let world = try await PeripheralTestWorld.start()
        defer { Task { await world.close() } }
        let name = String(repeating: "R", count: 30)
        do {
            try await world.peripheral.startAdvertising(name: name, serviceUUIDs: [PunchUUID.service])
            Issue.record("a 30-character name was accepted")
        } catch let error as PeripheralError {
            guard case let .advertisingDataTooLong(text) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(text.contains("local name"))
            #expect(text.contains("32 bytes"))
            #expect(text.contains("31"))
        }
        #expect(!world.peripheral.isAdvertising)
    }

    @Test func addingTheSameServiceTwiceOrAnEmptyServiceFails() async throws {
        let world = try await PeripheralTestWorld.start()
        defer { Task { await world.close() } }
        let service = PeripheralTestPunchService()
        try await world.peripheral.add(service)
        await #expect(throws: PeripheralError.serviceAlreadyAdded(PunchUUID.service)) {
            try await world.peripheral.add(service)
        }
        await #expect(throws: PeripheralError.serviceHasNoCharacteristics(PeripheralTestEmptyService.uuid)) {
            try await world.peripheral.add(PeripheralTestEmptyService())
        }
    }
}

/// A service without characteristics (refused).
final class PeripheralTestEmptyService: GATTService {
    static let uuid = BluetoothUUID(0xFFF0)
    var notACharacteristic = 3
}
