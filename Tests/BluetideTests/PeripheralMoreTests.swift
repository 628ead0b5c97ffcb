import Bluetide
import BluetideHost
import BluetideProfiles
import Testing

/// A second service: a write-without-response command and an indicated status.
final class PeripheralTestLogService: GATTService {
    static let uuid = BluetoothUUID(high: 0xB1DE_1001_0000_4000, low: 0x8000_0000_0000_B1DE)
    static let command = BluetoothUUID(high: 0xB1DE_1002_0000_4000, low: 0x8000_0000_0000_B1DE)
    static let status = BluetoothUUID(high: 0xB1DE_1003_0000_4000, low: 0x8000_0000_0000_B1DE)

    @Characteristic(PeripheralTestLogService.command, [.write, .writeWithoutResponse])
    var command: [UInt8] = []

    @Characteristic(PeripheralTestLogService.status, [.read, .indicate])
    var status: UInt16 = 0
}

/// Several services, long writes, write commands and indications.
@Suite(.timeLimit(.minutes(1))) struct PeripheralMoreTests {
    typealias Kit = PeripheralTestKit

    @Test func longWritesWriteCommandsAndIndicationsAcrossTwoServices() async throws {
        let world = try await PeripheralTestWorld.start()
        let central = try await world.central(7)
        defer { Task { await world.close(central) } }
        let punch = PeripheralTestPunchService()
        let log = PeripheralTestLogService()
        try await world.peripheral.add(services: [punch, log])
        try await world.peripheral.startAdvertising(name: "Reflex-TEST", interval: .milliseconds(20))

        let link = try await Kit.within(10, "connect") { try await central.connect(to: world.address, timeout: 5) }
        let database = try await link.gatt.discoverDatabase()
        let logService = try #require(database.first { $0.service.uuid == PeripheralTestLogService.uuid })
        let command = try Kit.characteristic(PeripheralTestLogService.command, in: logService).characteristic
        let status = try Kit.characteristic(PeripheralTestLogService.status, in: logService).characteristic
        let targets = try await Kit.characteristic(PunchUUID.sequence, in: Kit.discoverPunch(on: link)).characteristic

        // The longest sequence a trainer holds (256 steps) needs prepared writes at the default
        // MTU: applied once, whole.
        let long = (0..<PunchSequence.maxSteps).map { UInt8($0 % 6) }
        let targetWrites = punch.$targets.writes
        try await link.gatt.writeLong(handle: targets.valueHandle, value: long)
        #expect(punch.targets == long)
        #expect(try await Kit.within(20, "long write") { try await Kit.collect(1, from: targetWrites) }.map(\.value) == [long])
        // An invalid long write is refused as a whole (target 6 in the last part).
        await #expect(throws: GATTClientError.att(ATTErrorCode(0x80), handle: targets.valueHandle, request: .executeWriteRequest)) {
            try await link.gatt.writeLong(handle: targets.valueHandle, value: long.dropLast() + [6])
        }
        #expect(punch.targets == long)

        // Write commands land too (no response: wait for the delivery).
        let commandWrites = log.$command.writes
        try await link.gatt.writeWithoutResponse(handle: command.valueHandle, value: [0xC0, 0xDE])
        let written = try await Kit.within(20, "write command") { try await Kit.collect(1, from: commandWrites) }
        #expect(written.map(\.value) == [[0xC0, 0xDE]])
        #expect(log.command == [0xC0, 0xDE])

        // Indications, one at a time and confirmed, in assignment order.
        let indications = try await link.gatt.subscribe(to: status)
        for value in UInt16(1)...5 { log.status = value }
        let received = try await Kit.within(10, "indications") { try await Kit.collect(5, from: indications) }
        #expect(received == (UInt16(1)...5).map(\.bytes))
        #expect(try await link.gatt.read(handle: status.valueHandle) == [5, 0])
    }

    @Test func servicesAddedLaterKeepTheEarlierHandlesWorking() async throws {
        let world = try await PeripheralTestWorld.start()
        let central = try await world.central(8)
        defer { Task { await world.close(central) } }
        let punch = PeripheralTestPunchService()
        try await world.peripheral.add(punch)
        try await world.peripheral.add(PeripheralTestLogService())
        try await world.peripheral.startAdvertising(name: "Reflex-TEST", interval: .milliseconds(20))

        let link = try await Kit.within(10, "connect") { try await central.connect(to: world.address, timeout: 5) }
        let database = try await link.gatt.discoverDatabase()
        #expect(database.map(\.service.uuid).suffix(2) == [PunchUUID.service, PeripheralTestLogService.uuid])
        let response = try await Kit.characteristic(PunchUUID.response, in: Kit.discoverPunch(on: link)).characteristic
        let notifications = try await link.gatt.subscribe(to: response)
        punch.response = PunchResponse(reactionTimeMilliseconds: 1500, target: 0, hit: false, step: 2)
        let received = try await Kit.within(20, "notification") { try await Kit.collect(1, from: notifications) }
        #expect(received == [[0xDC, 0x05, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00]])
    }

    @Test func maximumCentralsPausesAdvertisingUntilOneLeaves() async throws {
        let world = try await PeripheralTestWorld.start()
        world.peripheral.maximumCentrals = 1
        let first = try await world.central(10)
        let second = try await world.central(11)
        defer { Task { await world.close(first, second) } }
        try await world.peripheral.add(PeripheralTestPunchService())
        try await world.peripheral.startAdvertising(name: "Reflex-TEST", interval: .milliseconds(20))

        let link = try await Kit.within(10, "connect") { try await first.connect(to: world.address, timeout: 5) }
        // The controller stopped advertising at the connection and the peripheral, full, did
        // not resume it: the second central finds nobody to connect to.
        await #expect(throws: HostError.self) { try await second.connect(to: world.address, timeout: 1) }
        try await link.disconnect()
        let late = try await Kit.within(10, "connect after the first left") { try await second.connect(to: world.address, timeout: 5) }
        #expect(late.peer == world.address)
    }
}
