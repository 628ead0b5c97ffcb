import Bluetide
import BluetideBase
import BluetideEmulation
import BluetideDeviceModels
import BluetideHCI
import BluetideRecording
import BluetideSupport
import BluetideTransport
import Foundation
import Testing

/// What a btsnoop capture holds, for checking whose traffic it is.
struct CaptureSummary {
    let records: [BTSnoopRecord]

    init(path: String) throws { records = try BTSnoopReader.records(atPath: path) }

    /// How many times the command `opcode` was sent.
    func count(of opcode: HCIOpcode) -> Int {
        records.count { if case let .command(sent, _) = $0.packet { sent == opcode } else { false } }
    }

    /// ACL packets in `direction`.
    func acl(_ direction: SnoopDirection) -> Int {
        records.count { if case .acl = $0.packet { $0.direction == direction } else { false } }
    }

    /// Whether every timestamp is at or after the one before it.
    var isMonotonic: Bool { zip(records, records.dropFirst()).allSatisfy { $0.timestamp <= $1.timestamp } }
}

/// Hosts and emulated devices on one virtual link, each captured on its own.
@Suite(.timeLimit(.minutes(2))) struct VirtualWorldTests {
    /// The first advertisement named `name` (a scan that stops there, at most 10 s).
    static func find(_ name: String, on bluetooth: Bluetooth) async throws -> Advertisement {
        for await advertisement in try await bluetooth.central.scan(filter: ScanFilter(name: .exact(name)), timeout: .seconds(10)) {
            return advertisement
        }
        throw BluetideError.timedOut(operation: "scan for \(name)", seconds: 10)
    }

    static func temporaryCapture(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("world-\(name)-\(UUID().uuidString).btsnoop").path
    }

    @Test func aWorldOnAManualClockRunsInVirtualTime() async throws {
        let manual = ManualClock()
        let world = VirtualWorld(clock: BluetideClock(manual))
        defer { Task { await world.close() } }
        let strap = try await world.emulate([HeartRateModel(seed: 5)], name: "Virtual HRM", rssi: -50)
        // The host opened by the world runs on the world's clock, whatever its configuration said.
        let bluetooth = try await world.openHost(configuration: .init(deviceName: "Virtual host"))
        #expect(bluetooth.central.clock.manual === manual)
        try await manual.advancing {
            let start = manual.now
            // A 30 s scan: 30 s of virtual time and almost no wall time. The upper bound leaves room
            // for the virtual time a starved machine lets pass while the scan's end crosses tasks.
            let found = try await bluetooth.central.discover(filter: ScanFilter(name: .exact("Virtual HRM")), timeout: .seconds(30))
            let scanned = start.duration(to: manual.now)
            #expect(scanned >= .seconds(30) && scanned < .seconds(40), "\(scanned)")
            #expect(found.map(\.address) == [strap.address])
            // Connecting, with its time limits on the same clock.
            let connection = try await bluetooth.central.connect(to: strap.address, policy: .resilient)
            #expect(try await connection.services().contains { $0.service.uuid == BluetoothUUID(0x180D) })
            await connection.disconnect()
        }
    }

    /// `loseLink(of:)` cuts the device's link from its side: the host sees the disconnect as a
    /// supervision timeout (0x08), and, the device still being there, its reconnect policy gets
    /// the link back. A Bluetooth that is not of the world is refused.
    @Test func aDeviceThatLosesItsLinkIsSeenDisconnectedByTheHostAndCanBeReconnected() async throws {
        let manual = ManualClock()
        let world = VirtualWorld(clock: BluetideClock(manual))
        let outsider = VirtualWorld(clock: BluetideClock(manual))
        let events: [ConnectionEvent]
        do {
            events = try await withRunTimeLimit(60, onTimeout: { BluetideError.timedOut(operation: "link loss and reconnect", seconds: 60) }) {
                try await manual.advancing {
                    let strap = try await world.emulate([HeartRateModel(seed: 9)], name: "Dropping HRM")
                    let bluetooth = try await world.openHost()
                    let stranger = try await outsider.openHost()
                    await #expect(throws: BluetideError.self) { try await world.loseLink(of: stranger) }
                    let connection = try await bluetooth.central.connect(
                        to: strap.address,
                        policy: ConnectionPolicy(reconnect: .init(maximumAttempts: 5, delay: .milliseconds(500), maximumDelay: .seconds(1))))
                    var seen: [ConnectionEvent] = []
                    for await event in connection.events {
                        seen.append(event)
                        if event == .connected, seen.count == 1 { try await world.loseLink(of: strap) }
                        if event == .reconnected { break }
                        if case .failed = event { break }
                    }
                    #expect(await connection.isConnected)
                    await connection.disconnect()
                    return seen
                }
            }
        } catch {
            await world.close()
            await outsider.close()
            throw error
        }
        await world.close()
        await outsider.close()
        #expect(events.first == .connected, "\(events)")
        #expect(events.dropFirst().first == .disconnected(reason: .connectionTimeout), "\(events)")
        #expect(events.last == .reconnected, "\(events)")
    }

    @Test func eachHostAndDeviceCapturesOnlyItsOwnTraffic() async throws {
        let hostCapture = Self.temporaryCapture("host")
        let deviceCapture = Self.temporaryCapture("device")
        defer {
            try? FileManager.default.removeItem(atPath: hostCapture)
            try? FileManager.default.removeItem(atPath: deviceCapture)
        }
        let world = VirtualWorld()
        let address = BluetoothAddress.randomStatic(0x00C0_0000_5EE0)
        let strap = try await world.emulate(
            [HeartRateModel(seed: 3)], name: "World HRM", address: address, rssi: -61, snoop: deviceCapture)
        #expect(strap.address == address)
        let bluetooth = try await world.openHost(snoop: hostCapture)
        #expect(bluetooth.transportSpec == "\(world.transportSpec)+snoop:\(hostCapture)")

        let found = try await Self.find("World HRM", on: bluetooth)
        #expect(found.address == address)
        #expect(found.rssi == -61, "the world places the device at the RSSI asked for")
        let connection = try await bluetooth.central.connect(to: found)
        var values = try await connection.notifications(of: .heartRateMeasurement).makeAsyncIterator()
        let first = try await values.next()
        #expect(first?.isEmpty == false)
        await connection.disconnect()
        await world.close()

        let host = try CaptureSummary(path: hostCapture)
        let device = try CaptureSummary(path: deviceCapture)
        // One controller each: one reset, and the other side's commands never appear.
        #expect(host.count(of: HCIReset.opcode) == 1)
        #expect(device.count(of: HCIReset.opcode) == 1)
        #expect(host.count(of: LECreateConnection.opcode) == 1)
        #expect(device.count(of: LECreateConnection.opcode) == 0)
        #expect(host.count(of: LESetAdvertisingData.opcode) == 0)
        #expect(device.count(of: LESetAdvertisingData.opcode) >= 1)
        // The notification went out of the device and into the host.
        #expect(host.acl(.received) > 0 && host.acl(.sent) > 0)
        #expect(device.acl(.sent) > 0 && device.acl(.received) > 0)
        #expect(host.isMonotonic, "host capture timestamps run backwards")
        #expect(device.isMonotonic, "device capture timestamps run backwards")
    }

    @Test func twoWorldsOnPrivateLinksNeverSeeEachOther() async throws {
        let first = VirtualWorld()
        let second = VirtualWorld()
        #expect(first.linkName != second.linkName)
        _ = try await first.emulate([HeartRateModel(seed: 1)], name: "First HRM", address: .randomStatic(0x00C0_0000_F157))
        let bluetooth = try await second.openHost()
        let seen = try await bluetooth.central.discover(timeout: .seconds(1))
        #expect(seen.isEmpty, "\(seen)")
        await first.close()
        await second.close()
    }

    @Test func replayedDevicesJoinTheWorldThroughThePeripheralAPI() async throws {
        let log = try ValueLogReader.read(bytes: Array("""
            {"format":"bluetide-values","version":1,"started_at":"2026-11-21T12:26:23.000Z","tool":"bluetide","tool_version":"0.1.0"}
            {"t":0.0,"device":"C6:C5:C4:C3:C2:C1","device_name":"Replayed Strap","service":"180D","characteristic":"2A37","operation":"notify","value":"0648"}
            {"t":0.1,"device":"C6:C5:C4:C3:C2:C1","device_name":"Replayed Strap","service":"180D","characteristic":"2A37","operation":"notify","value":"0649"}

            """.utf8))
        let world = VirtualWorld()
        let replay = try await world.replay(log, pace: .asFastAsPossible, address: .randomStatic(0x00C0_0000_4E91))
        let bluetooth = try await world.openHost()
        let found = try await Self.find("Replayed Strap", on: bluetooth)
        let connection = try await bluetooth.central.connect(to: found)
        var values = try await connection.notifications(of: .heartRateMeasurement).makeAsyncIterator()
        #expect(try await values.next() == [0x06, 0x48])
        #expect(try await values.next() == [0x06, 0x49])
        await replay.waitUntilPlayed()
        await connection.disconnect()
        await world.close()
    }

    @Test func aClosedWorldRefusesNewMembersSayingWhy() async throws {
        let world = VirtualWorld()
        await world.close()
        await #expect(throws: BluetideError.self) { _ = try await world.openHost() }
        do {
            _ = try await world.openHost()
        } catch {
            #expect("\(error)".contains("closed"), "\(error)")
        }
    }
}
