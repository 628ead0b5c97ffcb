import Bluetide
import BluetideBase
import BluetideEmulation
import BluetideHost
import BluetideProfiles
import BluetideRecording
import Testing

@Suite struct ReplayPeripheralTests {
    /// The example of docs/value-log-format.md: two CSC notifications 1.103 s apart (13.73 km/h
    /// with a 2.105 m wheel), a battery read and a control point write.
    static let exampleLog = """
        {"format":"bluetide-values","version":1,"started_at":"2026-11-21T12:26:23.000Z","tool":"bluetide","tool_version":"0.1.0"}
        {"t":0.412,"wall_time":"2026-11-21T12:26:23.412Z","device":"C6:C5:C4:C3:C2:C1","device_name":"KICKR CORE 1234","service":"1816","characteristic":"2A5B","operation":"notify","value":"03a25e01006d0e4b63967f","profile":"csc"}
        {"t":1.515,"wall_time":"2026-11-21T12:26:24.515Z","device":"C6:C5:C4:C3:C2:C1","device_name":"KICKR CORE 1234","service":"1816","characteristic":"2A5B","operation":"notify","value":"03a45e0100d7124b63967f","profile":"csc"}
        {"t":2.0,"device":"C6:C5:C4:C3:C2:C1","service":"180F","characteristic":"2A19","operation":"read","value":"5f","profile":"battery"}
        {"t":2.25,"device":"C6:C5:C4:C3:C2:C1","service":"1816","characteristic":"2A55","operation":"write","value":"0100000000"}

        """

    @Test func replayNotifiesRecordedCSCValuesAtTenTimesSpeed() async throws {
        try await inVirtualTime { clock in
            let log = try ValueLogReader.read(bytes: Array(Self.exampleLog.utf8))
            let address = BluetoothAddress.randomStatic(0x1234_0000_0F0F)
            let (rig, peripheral) = try await EmulationRig.connect(address: address, clock: clock) { transport in
                let bluetooth = try await Bluetooth.start(
                    on: transport, spec: "virtual", configuration: .init(
                        address: address, deviceName: "Replay", commandTimeout: .seconds(testCommandTimeout), clock: clock))
                let peripheral = ReplayPeripheral(bluetooth: bluetooth, log: log, pace: .speed(10))
                try await peripheral.start()
                return peripheral
            }
            // The written control point is not served; the read battery level is, read-only.
            #expect(peripheral.advertisedName == "KICKR CORE 1234")
            #expect(rig.database.map(\.service.uuid).contains(.cyclingSpeedAndCadence))
            let battery = try rig.characteristic(.batteryLevel, in: .battery)
            #expect(!battery.properties.contains(.notify))
            #expect(rig.database.flatMap(\.characteristics).allSatisfy { $0.characteristic.uuid != .scControlPoint })

            let measurement = try rig.characteristic(.cscMeasurement, in: .cyclingSpeedAndCadence)
            // Measured on the clock the replay is paced on (virtual time).
            let start = clock.now
            let stream = try await rig.connection.gatt.subscribe(to: measurement)
            let values = try await take(2, from: stream, "two replayed CSC notifications")
            let elapsed = start.duration(to: clock.now)
            #expect(values == log.records.prefix(2).map(\.value))
            // Recorded 1.103 s apart; at 10× the second cannot come before 0.11 s.
            #expect(elapsed >= .milliseconds(100))

            var decoder = try #require(ProfileCatalog.named("csc")).makeDecoder(ProfileOptions(wheelCircumference: 2.105))
            _ = try decoder.decode(values[0], at: 0)
            let second = try decoder.decode(values[1], at: 0.11)
            #expect(second.summary.contains("13.73 km/h"), "decoded \(second.summary)")

            await peripheral.waitUntilPlayed()
            #expect(try await rig.connection.gatt.read(handle: battery.valueHandle) == [0x5F])
            #expect(try await rig.connection.gatt.read(handle: measurement.valueHandle) == values[1])
            await peripheral.stop()
            await peripheral.close()
            await rig.close()
        }
    }
}
