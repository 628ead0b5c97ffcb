import Bluetide
import BluetideTestSupport
import Foundation
import Testing

/// The Linux kernel, BlueZ and Bleak in a Debian 12 guest (qemu) as Bluetide's peer, in both
/// roles, with nothing between the guest and Bluetide's controller: qemu wires the guest's serial
/// port to a `bluetide controllers` port and `btattach -P h4` makes it the guest's hci0.
///
/// One guest boot serves every test here (see `BlueZRig`), so the tests run one at a time.
@Suite(.bluezGuest, .serialized) struct BlueZGuestTests {
    static let bodySensorLocation = try! BluetoothUUID("2A38")
    static let heartRateMeasurement = try! BluetoothUUID("2A37")
    static let heartRateControlPoint = try! BluetoothUUID("2A39")

    /// Runs `body` with the rig under a hang guard of `seconds` (boot included on first use).
    func withRig(_ name: String, _ seconds: Double, _ body: @escaping @Sendable (BlueZRig) async throws -> Void) async throws {
        try await withRunTimeLimit(seconds, onTimeout: { BumbleHarnessError(description: "\(name) did not finish within \(Int(seconds)) s") }) {
            let rig = try await BlueZRig.shared()
            _ = try await rig.guest.run("sh /share/guest/bluetoothd.sh start", timeout: .seconds(40))
            let started = ContinuousClock.now
            try await body(rig)
            print("bluez rig: \(name) took \(BlueZRig.seconds(since: started)) s")
        }
    }

    // MARK: BlueZ as central

    @Test func bluetoothctlScansConnectsReadsWritesAndSubscribesToAHeartRateStrap() async throws {
        try await withRig("bluetoothctl vs heart-rate", 420) { rig in
            let address = "C1:B1:7E:00:00:10"
            let strap = try await rig.emulate("heart-rate", on: 0, address: address, name: "Rig HRM")
            defer { Task { await strap.stop() } }
            let result = try await rig.guest.run(
                "python3 /share/guest/bluetoothctl_central.py --address \(address)", timeout: .seconds(180))
            let steps = result.json
            let failed = steps.filter { $0["ok"] as? Bool == false }
            #expect(result.status == 0, "bluetoothctl steps failed: \(failed) stderr: \(result.stderr.suffix(5))")
            let names = Set(steps.compactMap { $0["step"] as? String })
            for step in ["scan", "connect", "read body sensor location", "write 0x01 (accepted)", "write 0x02 (refused)",
                         "ATT error 0x80 on the air (btmon)", "notify on", "notification", "disconnect"] {
                #expect(names.contains(step), "bluetoothctl never got to \(step): \(result.stdout.suffix(3))")
            }
            // The strap's side of the same exchange.
            await strap.stop()
            let events = await strap.output().compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
            // `emulate --json` records (docs/json-output.md): `written` and `subscription`.
            let writes = events.filter { $0["type"] as? String == "written" && Self.uuid(of: $0) == "2A39" }
            #expect(writes.contains { Self.hex(of: $0) == "01" && $0["attError"] == nil }, "\(writes)")
            #expect(writes.contains { Self.hex(of: $0) == "02" && $0["attError"] as? Int == 0x80 }, "\(writes)")
            #expect(events.contains { $0["type"] as? String == "subscription" && Self.uuid(of: $0) == "2A37" && $0["configuration"] as? Int == 1 })
        }
    }

    @Test func bleakReadsAndSubscribesToEveryEmulatedProfileThreeTimes() async throws {
        try await withRig("Bleak vs every profile x3", 900) { rig in
            var devices: [(profile: String, address: String, process: BumbleProcess)] = []
            defer { let all = devices.map(\.process); Task { for process in all { await process.stop() } } }
            for (index, profile) in BlueZRig.emulatedProfiles.enumerated() {
                let address = String(format: "C1:B1:7E:00:01:%02X", index)
                devices.append((profile, address, try await rig.emulate(profile, on: index, address: address)))
            }
            let arguments = devices.map { "--device \($0.address)=\($0.profile)" }.joined(separator: " ")
            let result = try await rig.guest.run("python3 /share/guest/bleak_all.py --rounds 3 \(arguments)", timeout: .seconds(720))
            let visits = result.json.filter { $0["event"] as? String == "device" }
            let summaryLine = try #require(result.stdout.first { $0.contains("\"summary\"") }, "no summary: \(result.stdout.suffix(5)) \(result.stderr.suffix(5))")
            let summary = try JSONDecoder().decode(BleakSummary.self, from: Data(summaryLine.utf8))
            #expect(summary.attempts == 3 * devices.count)
            #expect(summary.connections == 3 * devices.count, "\(summaryLine)")
            #expect(summary.failures == 0, "failed visits: \(result.stdout.filter { $0.contains("\"ok\": false") })")
            for device in devices {
                let mine = visits.filter { $0["name"] as? String == device.profile }
                #expect(mine.count == 3, "\(device.profile): \(mine.count) visits")
                // Every profile has something to read (a characteristic or at least a descriptor) and
                // something that notifies or indicates; each visit read and subscribed to all of it.
                #expect(mine.allSatisfy { Self.count($0["reads"]) + Self.count($0["descriptor_reads"]) > 0 }, "\(device.profile): \(mine)")
                #expect(mine.allSatisfy { Self.count($0["subscriptions"]) > 0 }, "\(device.profile): \(mine)")
            }
            #expect(result.status == 0)
        }
    }

    /// bleak_all.py's closing line.
    struct BleakSummary: Decodable {
        var attempts: Int
        var connections: Int
        var failures: Int
    }

    /// A JSON count (a number from JSONSerialization), 0 when absent.
    static func count(_ value: Any?) -> Int { (value as? NSNumber)?.intValue ?? 0 }

    // MARK: BlueZ as peripheral

    @Test func bluetideCentralReadsWritesAndSubscribesToABlueZGATTServer() async throws {
        try await withRig("Bluetide central vs BlueZ GATT server", 420) { rig in
            let server = try await rig.guest.start("python3 /share/guest/bluez_peripheral.py --name BlueZ-Rig --timeout 120", timeout: .seconds(150))
            _ = try await rig.guest.line(of: server, timeout: .seconds(60)) { $0.contains("\"ready\"") }
            let bluetooth = try await Bluetooth.open(transport: "tcp-client:127.0.0.1:\(rig.hostPort)")
            do {
                let found = try await bluetooth.central.discover(filter: ScanFilter(name: .exact("BlueZ-Rig")), timeout: .seconds(10))
                let advertisement = try #require(found.first, "BlueZ's advertisement not seen in 10 s")
                #expect(advertisement.serviceUUIDs.contains(try BluetoothUUID("7e570001-b5a3-f393-e0a9-e50e24dcca9e")))
                let connection = try await bluetooth.central.connect(to: advertisement, timeout: .seconds(20))
                let text = try await connection.read(try BluetoothUUID("7e570002-b5a3-f393-e0a9-e50e24dcca9e"))
                #expect(String(decoding: text, as: UTF8.self) == "hello from BlueZ")
                let writable = try BluetoothUUID("7e570003-b5a3-f393-e0a9-e50e24dcca9e")
                try await connection.write([UInt8]([0x01, 0x02, 0x03]), to: writable)
                #expect(try await connection.read(writable) == [0x01, 0x02, 0x03])
                var values: [[UInt8]] = []
                for try await value in try await connection.notifications(of: try BluetoothUUID("7e570004-b5a3-f393-e0a9-e50e24dcca9e")) {
                    values.append(value)
                    if values.count == 3 { break }
                }
                #expect(values.count == 3 && values.allSatisfy { $0.count == 1 }, "\(values)")
                await connection.disconnect()
            } catch {
                await bluetooth.close()
                try? await rig.guest.kill(server)
                throw error
            }
            await bluetooth.close()
            let result = try await rig.guest.result(of: server, timeout: .seconds(60))
            #expect(result.status == 0, "BlueZ GATT server: \(result.stdout.suffix(4)) \(result.stderr.suffix(4))")
            #expect(result.json.contains { $0["event"] as? String == "written" && $0["value"] as? String == "010203" })
            #expect(result.json.contains { $0["event"] as? String == "subscribed" })
        }
    }

    // MARK: Bluetide in the guest on the HCI user channel

    @Test func bluetideInTheGuestOnHCISocketServesTheHostsCentral() async throws {
        try await withRig("Bluetide on hci-socket:0 in the guest", 420) { rig in
            // bluetoothd lets go of hci0 (the user channel needs the adapter down and unmanaged).
            let device = try await rig.guest.start(
                "sh /share/guest/bluetoothd.sh stop && LD_LIBRARY_PATH=/opt/swiftlib exec /share/bin/bluetide emulate heart-rate"
                    + " --transport hci-socket:0 --name Guest-HRM --address C1:B1:7E:00:02:00 --json --duration 180",
                timeout: .seconds(200))
            defer { Task { try? await rig.guest.kill(device) } }
            _ = try await rig.guest.line(of: device, timeout: .seconds(60)) { $0.contains("\"started\"") }
            let bluetooth = try await Bluetooth.open(transport: "tcp-client:127.0.0.1:\(rig.hostPort)")
            do {
                let found = try await bluetooth.central.discover(filter: ScanFilter(name: .exact("Guest-HRM")), timeout: .seconds(10))
                let advertisement = try #require(found.first, "the guest's Bluetide advertisement not seen in 10 s")
                #expect(advertisement.address.description.hasPrefix("C1:B1:7E:00:02:00"))
                let connection = try await bluetooth.central.connect(to: advertisement, timeout: .seconds(20))
                #expect(try await connection.read(Self.bodySensorLocation) == [0x01])
                for try await value in try await connection.notifications(of: Self.heartRateMeasurement) {
                    #expect(value.count >= 2)
                    break
                }
                try await connection.write([UInt8]([0x01]), to: Self.heartRateControlPoint)
                await #expect(throws: (any Error).self) {
                    try await connection.write([UInt8]([0x02]), to: Self.heartRateControlPoint)
                }
                await connection.disconnect()
            } catch {
                await bluetooth.close()
                throw error
            }
            await bluetooth.close()
            try await rig.guest.kill(device)
            let result = try await rig.guest.result(of: device, timeout: .seconds(30))
            #expect(result.json.contains { $0["type"] as? String == "connected" }, "\(result.stdout.suffix(5)) \(result.stderr.suffix(5))")
            #expect(result.json.contains { $0["type"] as? String == "subscription" && Self.uuid(of: $0) == "2A37" })
            // BlueZ gets its adapter back for whatever runs next.
            let restart = try await rig.guest.run("sh /share/guest/bluetoothd.sh start", timeout: .seconds(40))
            #expect(restart.status == 0, "\(restart.stderr)")
        }
    }

    /// The characteristic's short UUID in an `emulate --json` record.
    static func uuid(of record: [String: Any]) -> String? { (record["characteristic"] as? [String: Any])?["uuid"] as? String }

    /// The value's hex in an `emulate --json` record.
    static func hex(of record: [String: Any]) -> String? { (record["value"] as? [String: Any])?["hex"] as? String }
}
