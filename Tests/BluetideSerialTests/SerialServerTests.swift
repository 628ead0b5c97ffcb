import Bluetide
import BluetideSerial
import BluetideTestSupport
import Foundation
import Synchronization
import Testing

/// `SerialServer`: the computer as a Nordic UART / HM-10 peripheral, with Bluetide's own
/// `SerialLink` as the central, on a private virtual link.
@Suite struct SerialServerTests {
    /// A server host and a central host on one private virtual link.
    struct Rig {
        let server: SerialServer
        let serverHost: Bluetooth
        let world: SerialWorld

        static func start(_ profile: SerialProfile, name: String, maximumCentrals: Int? = nil) async throws -> Rig {
            let world = try await SerialWorld()
            let host = try await Bluetooth.open(
                transport: "virtual:\(world.linkName)", configuration: .init(address: .randomStatic(0xC0DE_0000_0001), deviceName: name))
            let server = try await SerialServer.start(
                on: host.peripheral, options: SerialServerOptions(name: name, profile: profile, maximumCentrals: maximumCentrals))
            return Rig(server: server, serverHost: host, world: world)
        }

        func close() async {
            await server.close()
            await serverHost.close()
            await world.close()
        }
    }

    /// What the server received, in order; tests wait on it as it arrives.
    final class ServerRecorder: Sendable {
        struct Log: Sendable {
            var bytes: [UInt8] = []
            var centrals: Set<String> = []
            var events: [SerialServerEvent] = []
        }
        let log = Observed(Log())
        var bytes: [UInt8] { log.value.bytes }
        var centrals: Set<String> { log.value.centrals }
        var events: [SerialServerEvent] { log.value.events }
        let tasks: [Task<Void, Never>]
        init(_ server: SerialServer, echo: Bool) {
            let log = log
            tasks = [
                Task {
                    for await chunk in server.received {
                        log.update { log in
                            log.bytes += chunk.bytes
                            if let central = chunk.central { log.centrals.insert("\(central)") }
                        }
                        if echo { try? await server.send(chunk.bytes) }
                    }
                },
                Task { for await event in server.events { log.update { $0.events.append(event) } } },
            ]
        }
        /// Waits until `condition` holds for what arrived (checked on each arrival; put a hang guard around it).
        func wait(until condition: @escaping @Sendable (Log) -> Bool) async throws {
            try await log.wait(until: condition)
        }
        func stop() { for task in tasks { task.cancel() } }
    }

    /// 20 KB of random bytes from the client come back through the server's echo, and 20 KB from
    /// the server come back through the client's echo: complete and in order, both profiles.
    @Test(arguments: [SerialProfile.nordicUART, SerialProfile.hm10])
    func twentyKilobytesEchoBothWays(profile: SerialProfile) async throws {
        let rig = try await Rig.start(profile, name: "PC")
        let server = ServerRecorder(rig.server, echo: true)
        let link = try await rig.world.connect("PC")
        #expect(await link.profile.kind == profile.kind)
        #expect(await link.writeSize == (profile.kind == .hm10 ? 20 : 244))
        let recorder = LinkRecorder(link)
        let payload = randomBytes(20_000, seed: 28)
        try await within(120, "20 KB client → server → client") {
            try await link.send(payload)
            try await link.drain()
            try await recorder.wait { $0.bytes.count >= payload.count }
        }
        #expect(recorder.bytes == payload, "first difference at \(zip(recorder.bytes, payload).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? -1)")
        #expect(server.bytes == payload)
        #expect(server.centrals == ["\(rig.world.bluetooth.address)"], "each chunk names the central that wrote it")
        let chunk = server.events.compactMap { event -> Int? in
            if case let .subscribed(_, size) = event { size } else { nil }
        }
        #expect(chunk == [profile.kind == .hm10 ? 20 : 244], "notifications of MTU − 3 (HM-10: 20)")
        recorder.stop()
        server.stop()

        // The other way: the server sends, the client echoes what it gets.
        let second = try await Rig.start(profile, name: "PC2")
        let watcher = ServerRecorder(second.server, echo: false)
        let client = try await second.world.connect("PC2")
        let echo = Task { for await chunk in client.bytes { try? await client.send(chunk) } }
        let outgoing = randomBytes(20_000, seed: 82)
        try await within(120, "20 KB server → client → server") {
            try await second.server.waitForSubscriber()
            try await second.server.send(outgoing)
            try await second.server.drain()
            try await watcher.wait { $0.bytes.count >= outgoing.count }
        }
        #expect(watcher.bytes == outgoing)
        #expect(await second.server.notifiedBytes == outgoing.count)
        echo.cancel()
        watcher.stop()
        await client.close()
        await link.close()
        await second.close()
        await rig.close()
    }

    /// Nothing is notified before a central subscribes: bytes sent first wait and arrive whole.
    @Test func bytesSentBeforeAnyCentralWaitForOne() async throws {
        let rig = try await Rig.start(.nordicUART, name: "Early")
        try await rig.server.send(Array("sent before anyone came\n".utf8))
        #expect(await rig.server.queuedBytes == 24)
        let link = try await rig.world.connect("Early")
        let recorder = LinkRecorder(link)
        try await within(30, "the early bytes") { try await recorder.wait { $0.bytes.count >= 24 } }
        #expect(String(decoding: recorder.bytes, as: UTF8.self) == "sent before anyone came\n")
        recorder.stop()
        await link.close()
        await rig.close()
    }

    /// HM-10 takes one central, as the module does (advertising pauses while it is connected);
    /// Nordic UART takes several, and what the server sends reaches each subscribed one.
    @Test func hm10TakesOneCentralNordicUARTSeveral() async throws {
        #expect(SerialServerOptions(name: "x", profile: .hm10).maximumCentrals == 1)
        #expect(SerialServerOptions(name: "x", profile: .nordicUART).maximumCentrals == 4)
        let rig = try await Rig.start(.nordicUART, name: "Many")
        let events = ServerRecorder(rig.server, echo: false)
        let first = try await rig.world.connect("Many")
        let otherHost = try await Bluetooth.open(transport: "virtual:\(rig.world.linkName)")
        let second = try await within(30, "second central") {
            try await SerialLink.connect(to: try await SerialScanner(central: otherHost.central).find("Many"), on: otherHost.central)
        }
        let one = LinkRecorder(first), two = LinkRecorder(second)
        // The server counts a subscriber before it reports it.
        try await within(30, "two subscribers") {
            try await events.wait { log in
                Set(log.events.compactMap { if case let .subscribed(central, _) = $0 { central } else { nil } }).count >= 2
            }
        }
        #expect(await rig.server.subscribers.count == 2)
        try await rig.server.send(Array("to everyone\n".utf8))
        try await within(30, "both get it") { try await one.wait { $0.bytes.count >= 12 }; try await two.wait { $0.bytes.count >= 12 } }
        #expect(one.bytes == Array("to everyone\n".utf8))
        #expect(two.bytes == one.bytes)
        one.stop(); two.stop()
        await first.close(); await second.close()
        await otherHost.close()
        events.stop()
        await rig.close()
    }
}

/// `SerialLinkOptions.writeWithResponse`: a device that refuses every write (ATT 0x80) shows
/// which kind of write went out — a refused Write Request fails the link ("write failed"), a
/// Write Command is never answered, so its refusal goes unseen.
@Suite struct SerialWriteWithResponseTests {
    @Test(arguments: [true, false])
    func writeRequestsAreUsedWhenAskedFor(withResponse: Bool) async throws {
        let world = try await SerialWorld()
        let device = try await Bluetooth.open(transport: "virtual:\(world.linkName)", configuration: .init(address: .randomStatic(0xC0DE_0000_0002)))
        await device.peripheral.add(definitions: [GATTServiceDefinition(uuid: SerialProfile.nordicUART.service, characteristics: [
            GATTCharacteristicDefinition(
                uuid: SerialProfile.nordicUART.write, properties: [.write, .writeWithoutResponse],
                validateWrite: { _ in ATTErrorCode(rawValue: 0x80) }),
            GATTCharacteristicDefinition(uuid: SerialProfile.nordicUART.notify, properties: [.notify]),
        ])])
        try await device.peripheral.startAdvertising(name: "Refuser", serviceUUIDs: [SerialProfile.nordicUART.service])
        let link = try await world.connect("Refuser", options: SerialLinkOptions(reconnectTries: 0, writeWithResponse: withResponse))
        try await link.send(Array("refused?".utf8))
        if withResponse {
            let reason = try await within(30, "the refusal") { await link.waitForClose() }
            #expect(reason?.contains("write failed") == true, "\(reason ?? "nil")")
        } else {
            try await within(30, "drain") { try await link.drain() }
            #expect(await link.isConnected, "Write Commands are not answered, so nothing failed")
            #expect(await link.writtenBytes == 8)
        }
        await link.close()
        await device.close()
        await world.close()
    }
}
