import BluetideBase
import BluetideEmulation
import BluetideDeviceModels
import BluetideHost
import BluetideProfiles
import Testing

@Suite struct EmulatedPeripheralTests {
    @Test func everyCatalogModelIsServedReadableAndSubscribable() async throws {
        try await inVirtualTime { clock in
            for (index, descriptor) in EmulatorCatalog.all.enumerated() {
                let model = descriptor.make(1, EmulatorOptions())
                let (rig, peripheral) = try await EmulationRig.serving([model], address: 0x1234_5600_0000 + UInt64(index), clock: clock)
                // Every service and characteristic of the model is in the served database.
                for service in model.services {
                    for c in service.characteristics {
                        let found = try rig.characteristic(c.uuid, in: service.uuid)
                        #expect(found.properties.rawValue == c.properties.rawValue, "\(descriptor.name) \(c.uuid)")
                        if c.properties.contains(.read) {
                            let value = try await rig.connection.gatt.read(handle: found.valueHandle)
                            if let expected = model.read(c.uuid, now: 0), model.name == "punch" || model.name == "hm10" {
                                #expect(value == expected, "\(descriptor.name) \(c.uuid)")
                            }
                        }
                    }
                }
                if let notifying = model.allCharacteristics.first(where: { !$0.properties.isDisjoint(with: [.notify, .indicate]) }) {
                    let found = try rig.characteristic(notifying.uuid)
                    _ = try await rig.connection.gatt.subscribe(to: found, preferIndications: !notifying.properties.contains(.notify))
                }
                #expect(peripheral.advertisedName == model.advertising.localName)
                await peripheral.stop()
                await peripheral.close()
                await rig.close()
            }
        }
    }

    @Test func heartRateNotificationsDecode() async throws {
        try await inVirtualTime { clock in
            let (rig, peripheral) = try await EmulationRig.serving([HeartRateModel(seed: 3)], clock: clock)
            let measurement = try rig.characteristic(.heartRateMeasurement)
            let stream = try await rig.connection.gatt.subscribe(to: measurement)
            let values = try await take(2, from: stream, "two heart-rate notifications")
            for bytes in values {
                let decoded = try HeartRateMeasurement(bytes: bytes)
                #expect((30...220).contains(decoded.beatsPerMinute))
            }
            let location = try rig.characteristic(.bodySensorLocation)
            #expect(try await rig.connection.gatt.read(handle: location.valueHandle) == BodySensorLocation.chest.bytes)
            // The peripheral saw the connection and the subscription.
            let events = try await within(30, "connection and subscription events") {
                var seen: [EmulationEvent] = []
                for await event in peripheral.events {
                    seen.append(event)
                    if case .subscribed = event { break }
                }
                return seen
            }
            #expect(events.contains { if case .connected = $0 { true } else { false } })
            await peripheral.stop()
            await peripheral.close()
            await rig.close()
        }
    }

    @Test func refusedWriteReachesTheClientAsTheModelsATTError() async throws {
        try await inVirtualTime { clock in
            let (rig, peripheral) = try await EmulationRig.serving([HeartRateModel(seed: 3)], clock: clock)
            let controlPoint = try rig.characteristic(.heartRateControlPoint)
            do {
                try await rig.connection.gatt.write(handle: controlPoint.valueHandle, value: [0x02])
                Issue.record("write of an unsupported control point command was accepted")
            } catch let GATTClientError.att(code, handle, _) {
                #expect(code.rawValue == HeartRateControlPoint.controlPointNotSupportedError)
                #expect(handle == controlPoint.valueHandle)
            }
            // The supported command is accepted.
            try await rig.connection.gatt.write(handle: controlPoint.valueHandle, value: [0x01])
            // Both writes are reported, the refused one with its code.
            let writes = try await within(30, "two write events") {
                var seen: [UInt8?] = []
                for await event in peripheral.events {
                    if case let .wrote(_, device, characteristic, _, code) = event {
                        #expect(device == "heart-rate" && characteristic == .heartRateControlPoint)
                        seen.append(code)
                    }
                    if seen.count == 2 { break }
                }
                return seen
            }
            #expect(writes == [HeartRateControlPoint.controlPointNotSupportedError, nil])
            await peripheral.stop()
            await peripheral.close()
            await rig.close()
        }
    }

    @Test func ftmsControlPointSequencesThroughATTWritesAndIndications() async throws {
        try await inVirtualTime { clock in
            let (rig, peripheral) = try await EmulationRig.serving([FTMSBikeModel(seed: 5)], clock: clock)
            let controlPoint = try rig.characteristic(.fitnessMachineControlPoint)
            let indications = try await rig.connection.gatt.subscribe(to: controlPoint, preferIndications: true)
            // Collect responses in order through one iterator.
            let responses = try await within(30, "three control point responses") {
                var stream = indications.makeAsyncIterator()
                var out: [[UInt8]] = []
                try await rig.connection.gatt.write(handle: controlPoint.valueHandle, value: [0x05, 0xC8, 0x00])
                out.append(await stream.next() ?? [])
                try await rig.connection.gatt.write(handle: controlPoint.valueHandle, value: [0x00])
                out.append(await stream.next() ?? [])
                try await rig.connection.gatt.write(handle: controlPoint.valueHandle, value: [0x05, 0xC8, 0x00])
                out.append(await stream.next() ?? [])
                return out
            }
            let decoded = try responses.map { try FitnessMachineControlPointResponse(bytes: $0) }
            // Set Target Power before Request Control is refused; after it, accepted.
            #expect(decoded.map(\.requestOpcode) == [0x05, 0x00, 0x05])
            #expect(decoded.map(\.result) == [.controlNotPermitted, .success, .success])
            await peripheral.stop()
            await peripheral.close()
            await rig.close()
        }
    }

    /// Issue 21 item 2: a central discovering an emulated trainer finds Device Information
    /// (0x180A) and its values decode; devices served together share one 0x180A.
    @Test func discoveryFindsDeviceInformationAndItsValuesDecode() async throws {
        try await inVirtualTime { clock in
            for model in [FTMSBikeModel(seed: 2) as any DeviceModel, TacxFECModel(seed: 2)] {
                let (rig, peripheral) = try await EmulationRig.serving([model], clock: clock)
                #expect(rig.database.filter { $0.service.uuid == .deviceInformation }.count == 1, "\(model.name)")
                var texts: [BluetoothUUID: String] = [:]
                for uuid in [BluetoothUUID.manufacturerName, .modelNumber, .serialNumber, .firmwareRevision] {
                    let found = try rig.characteristic(uuid, in: .deviceInformation)
                    let bytes = try await rig.connection.gatt.read(handle: found.valueHandle)
                    texts[uuid] = try DeviceInformationString(bytes: bytes).text
                }
                #expect(texts[.manufacturerName] == (model.name == "tacx-fec" ? "Tacx" : "Bluetide"), "\(model.name)")
                #expect(texts[.modelNumber] == (model.name == "tacx-fec" ? "Neo (emulated)" : "FTMS Bike"), "\(model.name)")
                #expect(texts[.serialNumber]?.isEmpty == false && texts[.firmwareRevision]?.isEmpty == false)
                await peripheral.stop()
                await peripheral.close()
                await rig.close()
            }
            // A strap and a sensor in one device: one Device Information service, the first model's.
            let (rig, peripheral) = try await EmulationRig.serving([HeartRateModel(seed: 1), CSCModel(seed: 1)], address: 0x1234_5678_0180, clock: clock)
            #expect(rig.database.filter { $0.service.uuid == .deviceInformation }.count == 1)
            let model = try rig.characteristic(.modelNumber, in: .deviceInformation)
            #expect(try DeviceInformationString(bytes: try await rig.connection.gatt.read(handle: model.valueHandle)).text == "HRM")
            await peripheral.stop()
            await peripheral.close()
            await rig.close()
        }
    }
}
