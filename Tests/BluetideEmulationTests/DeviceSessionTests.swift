import Bluetide
import BluetideBase
import BluetideEmulation
import BluetideDeviceModels
import BluetideHost
import BluetideProfiles
import BluetideTransport
import Foundation
import Testing

/// Whole sessions with a model over GATT: writes through real ATT, outputs as notifications.
@Suite struct DeviceSessionTests {
    @Test func punchRunsASequenceWrittenOverGATT() async throws {
        try await inVirtualTime { clock in
            var options = EmulatorOptions()
            options.reactionMeanMilliseconds = 80
            options.reactionStandardDeviationMilliseconds = 5
            options.missProbability = 0
            options.wrongTargetProbability = 0
            let (rig, peripheral) = try await EmulationRig.serving([PunchTrainerModel(seed: 9, options: options)], clock: clock)
            let gatt = rig.connection.gatt
            let response = try rig.characteristic(PunchUUID.response)
            let control = try rig.characteristic(PunchUUID.control)
            let sequence = try rig.characteristic(PunchUUID.sequence)
            let timeSequence = try rig.characteristic(PunchUUID.timeSequence)

            // An invalid target (6) is refused with the Punch "invalid sequence" ATT error.
            do {
                try await gatt.write(handle: sequence.valueHandle, value: [0, 6])
                Issue.record("target 6 was accepted")
            } catch let GATTClientError.att(code, _, _) {
                #expect(code.rawValue == PunchUUID.invalidSequenceATTError)
            }
            let targets: [UInt8] = [2, 0, 5]
            try await gatt.write(handle: sequence.valueHandle, value: targets)
            try await gatt.write(handle: timeSequence.valueHandle, value: [0x2C, 0x01, 0x2C, 0x01, 0x2C, 0x01])  // 300 ms each
            #expect(try await gatt.read(handle: sequence.valueHandle) == targets)

            let responses = try await gatt.subscribe(to: response)
            let statuses = try await gatt.subscribe(to: control)
            try await gatt.write(handle: control.valueHandle, value: [0x01])
            let steps = try await take(3, from: responses, "three punch responses").map { try PunchResponse(exactly: $0) }
            #expect(steps.map(\.step) == [0, 1, 2])
            #expect(steps.map(\.target) == targets)
            #expect(steps.allSatisfy { $0.hit && $0.reactionTimeMilliseconds < 300 })
            let status = try await take(3, from: statuses, "armed, running, finished").map { try PunchControlStatus(exactly: $0) }
            #expect(Array(status.prefix(2)) == [.armed, .running])
            #expect(try await gatt.read(handle: response.valueHandle) == steps.last?.bytes)
            await peripheral.stop()
            await peripheral.close()
            await rig.close()
        }
    }

    @Test func colmiBatteryRequestIsAnsweredOverTheUARTCharacteristics() async throws {
        try await inVirtualTime { clock in
            let (rig, peripheral) = try await EmulationRig.serving([COLMIRingModel(seed: 2)], clock: clock)
            let gatt = rig.connection.gatt
            let write = try rig.characteristic(COLMIUUID.write, in: COLMIUUID.service)
            let notify = try rig.characteristic(COLMIUUID.notify, in: COLMIUUID.service)
            let stream = try await gatt.subscribe(to: notify)
            let request = COLMIRequest.battery.packet.bytes
            if write.properties.contains(.write) {
                try await gatt.write(handle: write.valueHandle, value: request)
            } else {
                try await gatt.writeWithoutResponse(handle: write.valueHandle, value: request)
            }
            let frames = try await take(1, from: stream, "the battery response")
            let response = try COLMIResponse(packet: COLMIPacket(exactly: frames[0]))
            guard case let .battery(battery) = response else {
                Issue.record("expected a battery response, got \(response)")
                return
            }
            #expect(battery.levelPercent <= 100)
            await peripheral.stop()
            await peripheral.close()
            await rig.close()
        }
    }

    @Test func twoModelsOnOneStackKeepTheirOwnHandles() async throws {
        try await inVirtualTime { clock in
            // Both have a Battery service (0x180F); each model's values go to its own characteristic.
            let (rig, peripheral) = try await EmulationRig.serving([HeartRateModel(seed: 1), BatteryModel(seed: 1)], clock: clock)
            let batteries = rig.database.filter { $0.service.uuid == .battery }
            #expect(batteries.count == 2)
            #expect(peripheral.deviceNames == ["heart-rate", "battery"])
            for service in batteries {
                let level = try #require(service.characteristics.first { $0.characteristic.uuid == .batteryLevel })
                let value = try await rig.connection.gatt.read(handle: level.characteristic.valueHandle)
                #expect(value.count == 1)
            }
            await peripheral.stop()
            await peripheral.close()
            await rig.close()
        }
    }
}

/// Several centrals, and a central coming back after a disconnection.
@Suite struct ConnectionLifecycleTests {
    @Test func twoCentralsAreServedAndAReturningCentralIsAcceptedAgain() async throws {
        try await inVirtualTime { clock in
            let link = "emulation-\(UUID().uuidString)"
            await Bluetooth.prepareVirtualLink(named: link, clock: clock)
            let address = BluetoothAddress.randomStatic(0x1234_5678_0ABC)
            let peripheral = try await EmulatedPeripheral.launch(
                transport: await VirtualTransport.attach(toLinkNamed: link), models: [HeartRateModel(seed: 4)], address: address,
                commandTimeout: testCommandTimeout, clock: clock)
            var centrals: [HostStack] = []
            for index in 0..<2 {
                let stack = HostStack(
                    transport: await VirtualTransport.attach(toLinkNamed: link),
                    configuration: .init(randomAddress: .randomStatic(0x0BAD_0000_0000 + UInt64(index)), commandTimeout: testCommandTimeout), clock: clock)
                try await stack.start()
                centrals.append(stack)
            }
            var streams: [AsyncStream<[UInt8]>] = []
            var connections: [HostConnection] = []
            for central in centrals {
                let connection = try await central.connect(to: address, timeout: 60)
                let services = try await connection.gatt.discoverDatabase()
                let measurement = try #require(services.flatMap(\.characteristics).first { $0.characteristic.uuid == .heartRateMeasurement })
                streams.append(try await connection.gatt.subscribe(to: measurement.characteristic))
                connections.append(connection)
            }
            for stream in streams {
                let value = try await take(1, from: stream, "a notification on each central")
                #expect(try HeartRateMeasurement(bytes: value[0]).beatsPerMinute > 0)
            }
            // The first central leaves and comes back: the peripheral advertises again.
            try await connections[0].disconnect(timeout: 30)
            let again = try await centrals[0].connect(to: address, timeout: 60)
            #expect(await again.isOpen())
            let reasons = try await within(30, "connection events") {
                var connected = 0
                for await event in peripheral.events {
                    if case .connected = event { connected += 1 }
                    if connected == 3 { break }
                }
                return connected
            }
            #expect(reasons == 3)
            await peripheral.stop()
            await peripheral.close()
            for central in centrals { await central.close() }
        }
    }
}
