import Bluetide
@testable import BluetideCapture
@testable import BluetideCommands
import BluetideBase
import BluetideEmulation
import BluetideTestSupport
import Foundation
import Synchronization
import Testing

/// A device whose handles are not laid out as Bluetide lays out its own (a gap after GAP, the
/// GATT service last, a descriptor between a value and its CCCD), captured, cloned and served:
/// every handle a client discovers on the clone is the captured one, so clients that cached
/// handles and the central script (which names characteristics by handle) work against it.
@Suite(.timeLimit(.minutes(3))) struct CloneHandleTests {
    static let vendor = BluetoothUUID(high: 0x6E40_0001_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)
    static let command = BluetoothUUID(high: 0x6E40_0002_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)
    static let reply = BluetoothUUID(high: 0x6E40_0003_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)
    static let address = BluetoothAddress.randomStatic(0x00C1_0000_0DD1)

    /// GAP 0x0001–0x0005, a gap, the vendor service 0x0010–0x001A (command 0x0012; reply
    /// 0x0015, user description 0x0016, CCCD 0x0018), Battery 0x0020–0x0023, GATT 0x0030–0x0033.
    /// Each command is answered on the reply characteristic with its first byte | 0x80.
    static func serveOddDevice(link: String, clock: BluetideClock) async throws -> Bluetooth {
        await Bluetooth.prepareVirtualLink(named: link, clock: clock)
        var configuration = Bluetooth.Configuration(address: address, deviceName: "Odd Ring")
        configuration.clock = clock
        let bluetooth = try await Bluetooth.open(transport: "virtual:\(link)", configuration: configuration)
        let peripheral = bluetooth.peripheral
        let replyValue = ServedValue(valueHandle: 0x0015)
        let services = [
            GATTServicePlacement(
                definition: GATTServiceDefinition(uuid: .genericAccess, characteristics: [
                    GATTCharacteristicDefinition(uuid: .deviceName, properties: .read, value: Array("Odd Ring".utf8)),
                    GATTCharacteristicDefinition(uuid: .appearance, properties: .read, value: [0, 0]),
                ]),
                handle: 0x0001, endHandle: 0x0005, characteristics: [
                    GATTCharacteristicPlacement(declarationHandle: 0x0002, valueHandle: 0x0003),
                    GATTCharacteristicPlacement(declarationHandle: 0x0004, valueHandle: 0x0005),
                ]),
            GATTServicePlacement(
                definition: GATTServiceDefinition(uuid: vendor, characteristics: [
                    GATTCharacteristicDefinition(uuid: command, properties: [.write, .writeWithoutResponse], validateWrite: { context in
                        guard let first = context.value.first else { return nil }
                        peripheral.updateValue([first | 0x80] + context.value.dropFirst() + [0x03], of: replyValue)
                        return nil
                    }),
                    GATTCharacteristicDefinition(uuid: reply, properties: .notify, descriptors: [
                        GATTDescriptorDefinition(uuid: .characteristicUserDescription, value: Array("reply".utf8)),
                    ]),
                ]),
                handle: 0x0010, endHandle: 0x001A, characteristics: [
                    GATTCharacteristicPlacement(declarationHandle: 0x0011, valueHandle: 0x0012),
                    GATTCharacteristicPlacement(declarationHandle: 0x0014, valueHandle: 0x0015, configurationHandle: 0x0018, descriptorHandles: [0x0016]),
                ]),
            GATTServicePlacement(
                definition: GATTServiceDefinition(uuid: .battery, characteristics: [
                    GATTCharacteristicDefinition(uuid: .batteryLevel, properties: [.read, .notify], value: [77]),
                ]),
                handle: 0x0020, endHandle: 0x0023, characteristics: [
                    GATTCharacteristicPlacement(declarationHandle: 0x0021, valueHandle: 0x0022, configurationHandle: 0x0023),
                ]),
            GATTServicePlacement(
                definition: GATTServiceDefinition(uuid: .genericAttribute, characteristics: [
                    GATTCharacteristicDefinition(uuid: .serviceChanged, properties: .indicate, permissions: []),
                ]),
                handle: 0x0030, endHandle: 0x0033, characteristics: [
                    GATTCharacteristicPlacement(declarationHandle: 0x0031, valueHandle: 0x0032, configurationHandle: 0x0033),
                ]),
        ]
        try await peripheral.serve(placed: services)
        try await peripheral.startAdvertising(name: "Odd Ring")
        return bluetooth
    }

    /// What the client saw: the discovered outline (with handles), the battery, the replies.
    struct Session: Equatable {
        var outline: [String]
        var battery: [UInt8]
        var replies: [[UInt8]]
    }

    static func session(_ bluetooth: Bluetooth, address: BluetoothAddress) async throws -> Session {
        let connection = try await bluetooth.central.connect(to: address, timeout: .seconds(30))
        let outline = CloneRoundTripTests.outline(try await connection.services())
        let battery = try await connection.read(.batteryLevel)
        var values = try await connection.notifications(of: reply).makeAsyncIterator()
        var replies: [[UInt8]] = []
        for command: [UInt8] in [[0x01, 0x02], [0x05]] {
            try await connection.write(command, to: Self.command)
            if let value = try await values.next() { replies.append(value) }
        }
        await connection.disconnect()
        return Session(outline: outline, battery: battery, replies: replies)
    }

    /// The odd device driven once by a snooping client, cloned: the capture's document.
    static func capturedClone(clock: BluetideClock) async throws -> (CloneDocument, Session, String) {
        let capture = CloneRoundTripTests.temporaryPath("odd.btsnoop")
        let out = CloneRoundTripTests.temporaryPath("odd-out")
        defer { try? FileManager.default.removeItem(atPath: capture) }
        let link = "odd-\(UUID().uuidString)"
        let world = VirtualWorld(linkName: link, clock: clock)
        let device = try await serveOddDevice(link: link, clock: clock)
        let client = try await world.openHost(snoop: capture)
        let original = try await session(client, address: address)
        await world.close()
        await device.close()
        let analysis = CaptureAnalysis.analyze(try CaptureFile.read(path: capture), captureName: "odd.btsnoop")
        let (document, _) = try CloneDirectory.write(analysis, to: out)
        return (document, original, out)
    }

    @Test func theCloneServesEveryCapturedHandleAndAnswersTheSame() async throws {
        try await inVirtualTime(120, "odd layout round trip") { clock in
            let (document, original, out) = try await Self.capturedClone(clock: clock)
            defer { try? FileManager.default.removeItem(atPath: out) }
            #expect(original.replies == [[0x81, 0x02, 0x03], [0x85, 0x03]])
            let device = try #require(document.devices.first)
            #expect(device.services.map(\.startHandle) == [0x01, 0x10, 0x20, 0x30])
            #expect(device.services.map(\.endHandle) == [0x05, 0x1A, 0x23, 0x33])

            let world = VirtualWorld(clock: clock)
            let clone = try await world.serveClone(device, pace: .asFastAsPossible)
            #expect(clone.placements != nil, "\(clone.limitations)")
            #expect(!clone.limitations.contains { $0.contains("handles") }, "\(clone.limitations)")
            let client = try await world.openHost()
            let replayed = try await Self.session(client, address: Self.address)
            await world.close()
            // Handle by handle: services, declarations' value handles, descriptors.
            #expect(replayed.outline == original.outline)
            #expect(replayed.outline.contains("    2901 (Characteristic User Description) 22"), "the user description at 0x0016: \(replayed.outline)")
            #expect(replayed.outline.contains("    2902 (Client Characteristic Configuration) 24"), "the CCCD at 0x0018: \(replayed.outline)")
            #expect(replayed.outline.first == "service 1800 (Generic Access) 1-5")
            #expect(replayed.outline.last == "    2902 (Client Characteristic Configuration) 51", "the GATT service last, its CCCD at 0x0033: \(replayed.outline)")
            #expect(replayed.battery == original.battery)
            #expect(replayed.replies == original.replies)
        }
    }

    /// Runs `script` through `bluetide shell` (in this process) against `address` on the
    /// virtual link `link`; the JSON lines it printed. Throws when a command failed.
    static func shell(_ script: String, address: String, link: String, clock: BluetideClock) async throws -> [String] {
        let command = try ShellCommand.parse([address, "--transport", "virtual:\(link)", "--json", "--timeout", "20"])
        let lines = Mutex<[String]>([])
        let (input, sink) = AsyncStream<[UInt8]>.makeStream()
        sink.yield(Array(script.utf8))
        sink.finish()
        try await command.execute(input: input, interactive: false, output: CommandOutput(emit: { line in lines.withLock { $0.append(line) } }), clock: clock)
        return lines.withLock { $0 }
    }

    @Test func theCentralScriptRunsByHandleAgainstTheClone() async throws {
        try await inVirtualTime(120, "central script against the clone") { clock in
            let (document, _, out) = try await Self.capturedClone(clock: clock)
            defer { try? FileManager.default.removeItem(atPath: out) }
            let script = try String(contentsOfFile: out + "/central.shell", encoding: .utf8)
            #expect(script.contains("\nsubscribe handle:0x0015\n"), "\(script)")
            #expect(script.contains("\nwrite handle:0x0012 0x0102\nwait 1"), "\(script)")
            #expect(script.contains("\nread handle:0x0022\n"), "\(script)")

            let link = "odd-clone-\(UUID().uuidString)"
            let world = VirtualWorld(linkName: link, clock: clock)
            _ = try await world.serveClone(document.devices[0], pace: .asFastAsPossible)
            let printed = try await Self.shell(script, address: Self.address.string + "/R", link: link, clock: clock)
            await world.close()
            let objects = printed.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            let types = objects.compactMap { $0["type"] as? String }
            #expect(!types.contains("error"), "\(printed)")
            #expect(types.filter { $0 == "written" }.count == 2, "\(printed)")
            let notified = objects.filter { $0["type"] as? String == "notification" }
                .compactMap { ($0["value"] as? [String: Any])?["hex"] as? String }
            #expect(notified == ["810203", "8503"], "\(printed)")
            let read = objects.first { $0["type"] as? String == "read" }.flatMap { ($0["value"] as? [String: Any])?["hex"] as? String }
            #expect(read == "4d")
        }
    }
}

/// Handles the capture never showed (no discovery: the characteristics and their service are
/// inferred; a CCCD never discovered) get free handles next to what they belong to, and every
/// handle the capture did show stays where it was.
@Suite struct ClonePlacementTests {
    static func characteristic(_ value: Int, declaration: Int? = nil, properties: [String], descriptors: [CloneDescriptor] = []) -> CloneCharacteristic {
        CloneCharacteristic(
            uuid: BluetoothUUID(high: 0xB1DE_0000_0000_4000, low: 0x8000_0000_0000_0000 | UInt64(value)), name: nil,
            declarationHandle: declaration, valueHandle: value, properties: properties, inferred: declaration == nil, value: nil,
            descriptors: descriptors, counts: CloneCounts())
    }

    static func device(services: [CloneService]) -> ClonedDevice {
        ClonedDevice(
            address: "C4:00:00:00:00:01", addressType: "random", name: "Placed", side: "remote", role: "peripheral",
            advertising: nil, connections: [1], mtu: 23, services: services, exchanges: [], notifications: [], playbackOrigin: nil)
    }

    /// The clone as prepared for a host (not started: the placements are made up front).
    static func prepare(_ device: ClonedDevice) async throws -> ClonePeripheral {
        let world = VirtualWorld()
        let host = try await world.openHost()
        let clone = ClonePeripheral(bluetooth: host, device: device)
        await world.close()
        return clone
    }

    @Test func whatTheCaptureDidNotShowIsPlacedNextToWhatItBelongsTo() async throws {
        let device = Self.device(services: [
                CloneService(uuid: .battery, name: nil, startHandle: 0x0001, endHandle: 0x0004, primary: true, inferred: false, characteristics: [
                    // Discovered, notifying, its CCCD never discovered.
                    Self.characteristic(0x0003, declaration: 0x0002, properties: ["read", "notify"]),
                ]),
                // Inferred from handles used: start and end as the analysis writes them.
                CloneService(uuid: BluetoothUUID(high: 0xB1DE_0000_0000_4000, low: 0x8001_0000_0000_000F), name: nil,
                             startHandle: 0x000F, endHandle: 0x0014, primary: true, inferred: true, characteristics: [
                    Self.characteristic(0x0010, properties: ["write"]),
                    Self.characteristic(0x0013, properties: ["notify"], descriptors: [
                        CloneDescriptor(handle: 0x0014, uuid: .clientCharacteristicConfiguration, name: nil, value: "0100"),
                    ]),
                ]),
            ])
        let clone = try await Self.prepare(device)
        let placements = try #require(clone.placements, "\(clone.limitations)")
        #expect(placements.map(\.handle) == [0x0001, 0x000E])
        #expect(placements.map(\.endHandle) == [0x0004, 0x0014])
        let battery = placements[0].characteristics[0]
        #expect((battery.declarationHandle, battery.valueHandle, battery.configurationHandle) == (0x0002, 0x0003, 0x0004))
        let inferred = placements[1].characteristics
        #expect(inferred.map(\.declarationHandle) == [0x000F, 0x0012])
        #expect(inferred.map(\.valueHandle) == [0x0010, 0x0013])
        #expect(inferred.map(\.configurationHandle) == [nil, 0x0014])
    }

    @Test func capturedHandlesThatDoNotHoldTogetherFallBackToTheHostLayoutSayingWhy() async throws {
        let device = Self.device(services: [
                // A hand-edited file: the second service starts inside the first.
                CloneService(uuid: .battery, name: nil, startHandle: 0x0001, endHandle: 0x0008, primary: true, inferred: false, characteristics: [
                    Self.characteristic(0x0003, declaration: 0x0002, properties: ["read"]),
                ]),
                CloneService(uuid: .heartRate, name: nil, startHandle: 0x0005, endHandle: 0x0009, primary: true, inferred: false, characteristics: [
                    Self.characteristic(0x0007, declaration: 0x0006, properties: ["read"]),
                ]),
            ])
        let clone = try await Self.prepare(device)
        #expect(clone.placements == nil)
        #expect(clone.limitations.contains { $0.contains("service 180D at 0x0005") && $0.contains("host lays out") }, "\(clone.limitations)")
    }
}

/// Bumble's GATT client (Interop/bumble/central.py) discovers the served clone of the odd
/// device: every service range, characteristic value and descriptor at the captured handle.
@Suite(.serialized, .bumbleInterop, .timeLimit(.minutes(3))) struct CloneHandleBumbleTests {
    @Test func bumblesClientDiscoversTheCapturedHandles() async throws {
        // The capture is made in virtual time; the Bumble part runs on the wall clock.
        let (document, _, out) = try await inVirtualTime(120, "odd device capture") { try await CloneHandleTests.capturedClone(clock: $0) }
        defer { try? FileManager.default.removeItem(atPath: out) }
        let device = try #require(document.devices.first)
        let (controllers, ports) = try await BumbleLinkedControllers.start()
        defer { Task { await controllers.stop() } }
        let bluetooth = try await Bluetooth.open(
            transport: "tcp-client:127.0.0.1:\(ports[0])", configuration: ClonePeripheral.hostConfiguration(for: device))
        let clone = ClonePeripheral(bluetooth: bluetooth, device: device, pace: .asFastAsPossible)
        try await clone.start()
        let central = try await BumbleProcess.launchPython(
            .interopScript("central.py"),
            arguments: [
                String(ports[1]), "--address", CloneHandleTests.address.string + "/R", "--no-read-all", "--no-descriptor-reads",
                "--step-timeout", "20", "--connect-timeout", "20", "--timeout", "60", "--exit-on-stdin-eof",
            ])
        defer { Task { await central.stop() } }
        let discovered = try await central.firstLine(timeout: .seconds(60), describing: "discovered") {
            JSONValue(line: $0)?["step"]?.string == "discovered"
        }
        _ = await central.waitForExit(timeout: .seconds(20))
        await clone.close()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(discovered.utf8)) as? [String: Any])
        let services = try #require(object["services"] as? [[String: Any]])
        func text(_ service: [String: Any]) -> [String] {
            ["\(service["uuid"] ?? "") \(service["handle"] ?? "")-\(service["end_handle"] ?? "")"]
                + ((service["characteristics"] as? [[String: Any]]) ?? []).flatMap { c in
                    ["  \(c["uuid"] ?? "") \(c["handle"] ?? "")"]
                        + ((c["descriptors"] as? [[String: Any]]) ?? []).map { "    \($0["uuid"] ?? "") \($0["handle"] ?? "")" }
                }
        }
        let captured = device.services.flatMap { service in
            ["\(service.uuid.shortString) \(service.startHandle)-\(service.endHandle)"]
                + service.characteristics.flatMap { c in
                    ["  \(c.uuid.shortString) \(c.valueHandle)"] + c.descriptors.map { "    \($0.uuid.shortString) \($0.handle)" }
                }
        }
        let seen = services.flatMap(text)
        #expect(seen.count == captured.count, "\(seen)")
        for (bumble, capture) in zip(seen, captured) { #expect(bumble == capture) }
    }
}

/// The clone comes up at the captured address: a public one as its virtual controller's public
/// address, a resolvable private one as the same random address (no IRK: never renewed).
@Suite(.timeLimit(.minutes(2))) struct CloneAddressTests {
    static func device(address: String, type: String) -> ClonedDevice {
        var device = ClonePlacementTests.device(services: [
            CloneService(uuid: .battery, name: nil, startHandle: 0x0001, endHandle: 0x0003, primary: true, inferred: false, characteristics: [
                ClonePlacementTests.characteristic(0x0003, declaration: 0x0002, properties: ["read"]),
            ]),
        ])
        device.address = address
        device.addressType = type
        device.name = "Addressed \(type)"
        device.services[0].characteristics[0].value = "2a"
        return device
    }

    /// Scans for the clone by name, connects, reads its one value: the address it was seen at.
    static func seen(_ device: ClonedDevice, clock: BluetideClock) async throws -> (BluetoothAddress, [UInt8], [String]) {
        let world = VirtualWorld(clock: clock)
        let clone = try await world.serveClone(device, pace: .asFastAsPossible)
        let client = try await world.openHost()
        let found = try await CloneRoundTripTests.find(device.name ?? "", on: client)
        let connection = try await client.central.connect(to: found)
        let value = try await connection.read(BluetoothUUID(high: 0xB1DE_0000_0000_4000, low: 0x8000_0000_0000_0003))
        await connection.disconnect()
        await world.close()
        return (found.address, value, clone.limitations)
    }

    @Test func aPublicAddressIsServedAsTheControllersPublicAddress() async throws {
        try await inVirtualTime(60, "public clone") { clock in
            let (address, value, limitations) = try await Self.seen(Self.device(address: "00:1B:DC:12:34:56", type: "public"), clock: clock)
            #expect(address == (try BluetoothAddress("00:1B:DC:12:34:56", type: .public)))
            #expect(value == [0x2A])
            #expect(!limitations.contains { $0.contains("address") }, "\(limitations)")
        }
    }

    @Test func aResolvablePrivateAddressIsServedUnchangedAndSaidSo() async throws {
        try await inVirtualTime(60, "RPA clone") { clock in
            let (address, value, limitations) = try await Self.seen(Self.device(address: "4A:11:22:33:44:55", type: "random"), clock: clock)
            #expect(address == (try BluetoothAddress("4A:11:22:33:44:55", type: .random)))
            #expect(address.randomKind == .resolvablePrivate)
            #expect(value == [0x2A])
            #expect(limitations.contains { $0.contains("resolvable private") && $0.contains("IRK") }, "\(limitations)")
            let document = CloneDocument(
                source: CloneSource(capture: "rpa", format: "test", records: 0, packets: 0, startUnixMicroseconds: 0, durationSeconds: 0),
                devices: [Self.device(address: "4A:11:22:33:44:55", type: "random")], connections: [], warnings: [])
            #expect(CloneReport.summary(document).contains("address: 4A:11:22:33:44:55 resolvable private (the clone serves it as the same random address"))
        }
    }

    @Test func onAControllerWithAnotherPublicAddressTheCloneSaysWhereItAdvertisesFrom() async throws {
        let device = Self.device(address: "00:1B:DC:12:34:56", type: "public")
        let world = VirtualWorld()
        let host = try await world.openHost(configuration: ClonePeripheral.hostConfiguration(for: device))
        let clone = ClonePeripheral(bluetooth: host, device: device)
        await world.close()
        #expect(host.address.randomKind == .static)
        #expect(clone.limitations.contains { $0.contains("captured public address 00:1B:DC:12:34:56") && $0.contains("virtual controller") },
                "\(clone.limitations)")
    }
}
