import Bluetide
import BluetideHost
import BluetideProfiles
import BluetideTransport
import Testing

// MARK: - README example (the same text is in docs/peripheral-example.md)

/// The reflex trainer's Punch service, as a Raspberry Pi serves it.
final class PunchService: GATTService {
    static let uuid = PunchUUID.service

    @Characteristic(PunchUUID.response, [.read, .notify])
    var response = PunchResponse(reactionTimeMilliseconds: 0, target: 0, hit: false, step: 0)

    // Invalid sequences are refused with ATT error 0x80; the property keeps its value.
    @Characteristic(PunchUUID.sequence, [.read, .write],
                    validate: { (try? PunchSequence(targets: $0)) == nil ? ATTErrorCode(0x80) : nil })
    var targets: [UInt8] = []
}

func serveReflexTrainer(on bluetooth: Bluetooth) async throws {
    let peripheral = bluetooth.peripheral   // bluetooth = try await Bluetooth.open(transport: "hci-socket:0")
    let punch = PunchService()
    try await peripheral.add(punch)
    try await peripheral.startAdvertising(name: "Reflex-1A2B", serviceUUIDs: [PunchUUID.service])
    for await write in punch.$targets.writes {  // a coach wrote a sequence
        print("\(write.central?.address.description ?? "?") wants \(write.value.count) steps")
        punch.response = PunchResponse(reactionTimeMilliseconds: 412, target: write.value[0], hit: true, step: 0)
    }
}

// MARK: - The test that runs it

@Suite(.timeLimit(.minutes(1))) struct PeripheralReadmeExampleTests {
    @Test func theReadmeExampleServesAndNotifies() async throws {
        let world = try await PeripheralTestWorld.start()
        let central = try await world.central(42)
        defer { Task { await world.close(central) } }
        // The example serves on a host of its own; the world's peripheral is not used here.
        let bluetooth = try await Bluetooth.open(
            transport: "virtual:\(world.linkName)", configuration: .init(address: .randomStatic(0x00C0_FFEE_00EE)))
        let server = Task { try await serveReflexTrainer(on: bluetooth) }
        defer { server.cancel() }

        let address = BluetoothAddress.randomStatic(0x00C0_FFEE_00EE)
        let link = try await PeripheralTestKit.within(10, "connect") { try await central.connect(to: address, timeout: 5) }
        let punch = try await PeripheralTestKit.discoverPunch(on: link)
        let response = try PeripheralTestKit.characteristic(PunchUUID.response, in: punch).characteristic
        let targets = try PeripheralTestKit.characteristic(PunchUUID.sequence, in: punch).characteristic
        let notifications = try await link.gatt.subscribe(to: response)

        await #expect(throws: GATTClientError.att(ATTErrorCode(0x80), handle: targets.valueHandle, request: .writeRequest)) {
            try await link.gatt.write(handle: targets.valueHandle, value: [7])
        }
        try await link.gatt.write(handle: targets.valueHandle, value: [3, 1, 4])
        let first = try await PeripheralTestKit.within(20, "notification") {
            try await PeripheralTestKit.collect(1, from: notifications)
        }
        #expect(first == [[0x9C, 0x01, 0x00, 0x00, 0x03, 0x01, 0x00, 0x00]])
        #expect(try await link.gatt.read(handle: targets.valueHandle) == [3, 1, 4])
        await bluetooth.close()
    }
}
