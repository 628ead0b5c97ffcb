import Bluetide
import BluetideTestSupport
import Foundation
import Testing

/// Bluetide's peripheral on the `bluez` transport in the guest (bluetoothd running, nothing
/// stopped: the issue's done-when), read, written and subscribed by the HOST's Bluetide central
/// over the virtual radio. A rig of its own (own controllers, ports and guest boot), so it runs
/// beside ``BlueZGuestTests``.
@Suite(.bluezGuest, .serialized) struct BlueZPeripheralGuestTests {
    private actor Setup {
        static let shared = Setup()
        private var task: Task<BlueZRig, any Error>?
        func value() async throws -> BlueZRig {
            if let task { return try await task.value }
            let task = Task { try await BlueZRig.make(tag: "peripheral") }
            self.task = task
            return try await task.value
        }
    }

    /// Runs `body` with this suite's rig under a hang guard of `seconds` (boot included on first use).
    func withRig(_ name: String, _ seconds: Double, _ body: @escaping @Sendable (BlueZRig) async throws -> Void) async throws {
        try await withRunTimeLimit(seconds, onTimeout: { BumbleHarnessError(description: "\(name) did not finish within \(Int(seconds)) s") }) {
            let rig = try await Setup.shared.value()
            _ = try await rig.guest.run("sh /share/guest/bluetoothd.sh start", timeout: .seconds(40))
            let started = ContinuousClock.now
            try await body(rig)
            print("bluez peripheral rig: \(name) took \(BlueZRig.seconds(since: started)) s")
        }
    }

    /// `bluetide ARGUMENTS` in the guest, with the host's Swift runtime.
    static func inGuest(_ arguments: String) -> String {
        "LD_LIBRARY_PATH=/opt/swiftlib exec /share/bin/bluetide \(arguments)"
    }

    /// The host's central on its own controller, finding `name` and connecting.
    static func connect(_ rig: BlueZRig, to name: String) async throws -> (Bluetooth, Connection) {
        let bluetooth = try await Bluetooth.open(transport: "tcp-client:127.0.0.1:\(rig.hostPort)")
        do {
            let found = try await bluetooth.central.discover(filter: ScanFilter(name: .exact(name)), timeout: .seconds(15))
            let advertisement = try #require(found.first, "\(name) (served through bluetoothd) not seen in 15 s")
            return (bluetooth, try await bluetooth.central.connect(to: advertisement, timeout: .seconds(20)))
        } catch {
            await bluetooth.close()
            throw error
        }
    }

    /// The first `count` values of `stream`, or fewer when `seconds` pass first.
    static func first(_ count: Int, of stream: AsyncThrowingStream<[UInt8], any Error>, within seconds: Double) async -> [[UInt8]] {
        await withTaskGroup(of: [[UInt8]]?.self) { group in
            group.addTask {
                var values: [[UInt8]] = []
                do {
                    for try await value in stream {
                        values.append(value)
                        if values.count == count { break }
                    }
                } catch {}
                return values
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(seconds))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? []
        }
    }

    @Test func theReflexDeviceRunsOnBlueZAndTheHostsCentralUsesIt() async throws {
        try await withRig("reflex device --transport bluez", 420) { rig in
            let device = try await rig.guest.start(
                Self.inGuest("reflex device --gpio sim --transport bluez --name G-Reflex --json --duration 150"), timeout: .seconds(180))
            defer { Task { try? await rig.guest.kill(device) } }
            let advertising = try await rig.guest.line(of: device, timeout: .seconds(60)) { $0.contains("\"advertising\"") }
            #expect(advertising.contains("G-Reflex"))
            let (bluetooth, connection) = try await Self.connect(rig, to: "G-Reflex")
            do {
                // The Punch service as the DSL declares it, through bluetoothd's GATT server.
                let response = try await connection.read(PunchUUID.response)
                #expect(!response.isEmpty)
                let responses = try await connection.notifications(of: PunchUUID.response)
                // A sequence naming target 9 fails the DSL's decoding: 0x80 on the air (org.bluez.Error.Failed).
                do {
                    try await connection.write([UInt8]([9]), to: PunchUUID.sequence)
                    Issue.record("a sequence with target 9 was accepted")
                } catch {
                    #expect("\(error)".contains("0x80"), "\(error)")
                }
                // A good sequence, 2 s a step, started: the simulated athlete punches and a
                // PunchResponse is notified per step.
                try await connection.write([UInt8]([1, 2]), to: PunchUUID.sequence)
                #expect(try await connection.read(PunchUUID.sequence) == [1, 2])
                try await connection.write([UInt8]([0xD0, 0x07, 0xD0, 0x07]), to: PunchUUID.timeSequence)
                try await connection.write([UInt8]([0x01]), to: PunchUUID.control)
                let notified = await Self.first(2, of: responses, within: 60)
                #expect(notified.count == 2 && notified.allSatisfy { !$0.isEmpty }, "\(notified)")
                await connection.disconnect()
            } catch {
                await bluetooth.close()
                throw error
            }
            await bluetooth.close()
            try await rig.guest.kill(device)
            let result = try await rig.guest.result(of: device, timeout: .seconds(30))
            #expect(result.json.contains { ($0["type"] as? String)?.contains("connect") == true }, "\(result.stdout.suffix(8)) \(result.stderr.suffix(5))")
            #expect(result.stdout.contains { $0.contains("sequence") }, "\(result.stdout.suffix(8))")
        }
    }

    @Test func anEmulatedHeartRateStrapRunsOnBlueZAndTheHostsCentralReadsWritesAndSubscribes() async throws {
        try await withRig("emulate heart-rate --transport bluez", 420) { rig in
            let strap = try await rig.guest.start(
                Self.inGuest("emulate heart-rate --transport bluez --name G-HRM --json --duration 150"), timeout: .seconds(180))
            defer { Task { try? await rig.guest.kill(strap) } }
            _ = try await rig.guest.line(of: strap, timeout: .seconds(60)) { $0.contains("\"started\"") }
            let (bluetooth, connection) = try await Self.connect(rig, to: "G-HRM")
            do {
                #expect(try await connection.read(BlueZGuestTests.bodySensorLocation) == [0x01])
                var measured = 0
                for try await value in try await connection.notifications(of: BlueZGuestTests.heartRateMeasurement) {
                    #expect(value.count >= 2)
                    measured += 1
                    if measured == 2 { break }
                }
                try await connection.write([UInt8]([0x01]), to: BlueZGuestTests.heartRateControlPoint)
                do {
                    try await connection.write([UInt8]([0x02]), to: BlueZGuestTests.heartRateControlPoint)
                    Issue.record("control point 0x02 was accepted")
                } catch {
                    #expect("\(error)".contains("0x80"), "\(error)")
                }
                await connection.disconnect()
            } catch {
                await bluetooth.close()
                throw error
            }
            await bluetooth.close()
            try await rig.guest.kill(strap)
            let result = try await rig.guest.result(of: strap, timeout: .seconds(30))
            let events = result.json
            #expect(events.contains { $0["type"] as? String == "connected" }, "\(result.stdout.suffix(6)) \(result.stderr.suffix(5))")
            #expect(events.contains { $0["type"] as? String == "subscription" && BlueZGuestTests.uuid(of: $0) == "2A37" }, "\(result.stdout.suffix(6))")
            let writes = events.filter { $0["type"] as? String == "written" && BlueZGuestTests.uuid(of: $0) == "2A39" }
            #expect(writes.contains { BlueZGuestTests.hex(of: $0) == "01" && $0["attError"] == nil }, "\(writes)")
            #expect(writes.contains { BlueZGuestTests.hex(of: $0) == "02" && $0["attError"] as? Int == 0x80 }, "\(writes)")
        }
    }

    @Test func aValueLogIsReplayedAsAPeripheralOnBlueZ() async throws {
        try await withRig("replay --as-peripheral --transport bluez", 300) { rig in
            let log = rig.guest.shareDirectory.appendingPathComponent("replay-bluez.jsonl")
            try Data("""
                {"format":"bluetide-values","version":1}
                {"t":0.4,"device":"C6:C5:C4:C3:C2:C1","service":"1816","characteristic":"2A5B","operation":"notify","value":"03a25e01006d0e4b63967f","profile":"csc"}
                {"t":1.5,"device":"C6:C5:C4:C3:C2:C1","service":"1816","characteristic":"2A5B","operation":"notify","value":"03a45e0100d7124b63967f","profile":"csc"}
                {"t":2.0,"device":"C6:C5:C4:C3:C2:C1","service":"180F","characteristic":"2A19","operation":"read","value":"5f","profile":"battery"}

                """.utf8).write(to: log)
            let replay = try await rig.guest.start(
                Self.inGuest("replay /share/replay-bluez.jsonl --as-peripheral --name G-Replay --transport bluez"), timeout: .seconds(120))
            defer { Task { try? await rig.guest.kill(replay) } }
            _ = try await rig.guest.line(of: replay, timeout: .seconds(60)) { $0.contains("advertising") }
            let (bluetooth, connection) = try await Self.connect(rig, to: "G-Replay")
            do {
                // The battery level is served (its value comes at t = 2 s of playback).
                let battery = try await connection.read(try BluetoothUUID("2A19"))
                #expect(battery.isEmpty || battery == [0x5F], "\(battery)")
                // Playback starts when a central subscribes (BlueZ's StartNotify).
                let values = await Self.first(2, of: try await connection.notifications(of: try BluetoothUUID("2A5B")), within: 60)
                #expect(values.map(\.hexString) == ["03a25e01006d0e4b63967f", "03a45e0100d7124b63967f"], "\(values)")
                await connection.disconnect()
            } catch {
                await bluetooth.close()
                throw error
            }
            await bluetooth.close()
            let result = try await rig.guest.result(of: replay, timeout: .seconds(60))
            #expect(result.status == 0, "\(result.stdout.suffix(6)) \(result.stderr.suffix(5))")
        }
    }

    @Test func theRideBridgeServesFTMSThroughBlueZ() async throws {
        try await withRig("ride bridge --serve-transport bluez", 300) { rig in
            let bridge = try await rig.guest.start(
                Self.inGuest("ride bridge --emulate ftms-bike,heart-rate --serve-transport bluez --name G-Bridge --json --duration 150"),
                timeout: .seconds(180))
            defer { Task { try? await rig.guest.kill(bridge) } }
            _ = try await rig.guest.line(of: bridge, timeout: .seconds(90)) { $0.contains("\"bridge-") }
            let (bluetooth, connection) = try await Self.connect(rig, to: "G-Bridge")
            do {
                #expect(!(try await connection.read(try BluetoothUUID("2ACC"))).isEmpty, "FTMS feature")
                let data = await Self.first(2, of: try await connection.notifications(of: try BluetoothUUID("2AD2")), within: 60)
                #expect(data.count == 2, "Indoor Bike Data: \(data)")
                await connection.disconnect()
            } catch {
                await bluetooth.close()
                throw error
            }
            await bluetooth.close()
            try await rig.guest.kill(bridge)
            let result = try await rig.guest.result(of: bridge, timeout: .seconds(30))
            #expect(result.stdout.contains { $0.contains("bridge-") }, "\(result.stdout.suffix(6)) \(result.stderr.suffix(5))")
        }
    }
}
