import Bluetide
import BluetideHost
import BluetideProfiles
import Testing

/// A Punch-like service whose characteristics are `let` constants: it conforms to `Sendable`
/// with the compiler's check (no `@unchecked`), and is served exactly like a wrapper-form one.
final class PeripheralTestSendablePunchService: GATTService, Sendable {
    static let uuid = PunchUUID.service

    let response = Characteristic(
        PunchUUID.response, [.read, .notify], value: PunchResponse(reactionTimeMilliseconds: 0, target: 0, hit: false, step: 0),
        description: "Punch response")
    let times = Characteristic(PunchUUID.timeSequence, [.read, .write], value: try! PunchTimeSequence(milliseconds: [1000]))
    let targets = Characteristic(PunchUUID.sequence, [.read, .write], value: [UInt8]([0]), validate: { targets in
        (try? PunchSequence(targets: targets)) == nil ? ATTErrorCode(PunchUUID.invalidSequenceATTError) : nil
    })
}

/// The `let` form of ``Characteristic``: declaration order is handle order, values are served,
/// assignments from another task notify, writes arrive and validation refuses as with the wrapper.
@Suite(.timeLimit(.minutes(1))) struct PeripheralSendableServiceTests {
    typealias Kit = PeripheralTestKit

    @Test func aServiceOfConstantsIsServedAndSharedAcrossTasks() async throws {
        let world = try await PeripheralTestWorld.start()
        let service = PeripheralTestSendablePunchService()
        try await world.peripheral.add(service)
        try await world.peripheral.startAdvertising(name: "Reflex-TEST", serviceUUIDs: [PunchUUID.service], interval: .milliseconds(20))
        let central = try await world.central(11)
        defer { Task { await world.close(central) } }
        let link = try await Kit.within(10, "connect") { try await central.connect(to: world.address, timeout: 5) }

        let punch = try await Kit.discoverPunch(on: link)
        #expect(punch.characteristics.map(\.characteristic.uuid) == [PunchUUID.response, PunchUUID.timeSequence, PunchUUID.sequence])
        let response = try Kit.characteristic(PunchUUID.response, in: punch)
        let targets = try Kit.characteristic(PunchUUID.sequence, in: punch).characteristic.valueHandle
        let description = try #require(response.descriptors.first { $0.uuid == .characteristicUserDescription })
        #expect(try await link.gatt.read(handle: description.handle) == Array("Punch response".utf8))
        #expect(try await link.gatt.read(handle: try Kit.characteristic(PunchUUID.timeSequence, in: punch).characteristic.valueHandle)
            == [0xE8, 0x03])

        // The service itself crosses into another task (checked Sendable) and assigns there.
        let notifications = try await link.gatt.subscribe(to: response.characteristic)
        let assigner = Task.detached {
            for step in 0..<5 {
                service.response.value = PunchResponse(reactionTimeMilliseconds: 100, target: 1, hit: true, step: UInt16(step))
            }
        }
        await assigner.value
        let received = try await Kit.within(10, "5 notifications") { try await Kit.collect(5, from: notifications) }
        #expect(try received.map { try PunchResponse(exactly: $0).step } == [0, 1, 2, 3, 4])
        #expect(service.response.value.step == 4)

        // Writes: accepted ones update the value and arrive on `writes`; refused ones do neither.
        let writes = service.targets.writes
        await #expect(throws: GATTClientError.att(ATTErrorCode(0x80), handle: targets, request: .writeRequest)) {
            try await link.gatt.write(handle: targets, value: [1, 9])
        }
        #expect(service.targets.value == [0])
        try await link.gatt.write(handle: targets, value: [2, 3])
        #expect(service.targets.value == [2, 3])
        let first = try await Kit.within(20, "write delivery") { try await Kit.collect(1, from: writes) }
        #expect(first.map(\.value) == [[2, 3]])
    }
}
