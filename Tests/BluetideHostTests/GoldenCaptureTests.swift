import BluetideBase
import BluetideHCI
import BluetideSupport
import BluetideTransport
import Foundation
import Testing
@testable import BluetideHost

/// Golden tests: captures of real sessions (`Fixtures/*.btsnoop`) are played back to a host whose
/// time stands still (a `ManualClock` nobody advances). The controller→host packets go in, and
/// every host→controller packet must equal the captured one byte for byte, in order, until the
/// capture ends — commands, ACL fragmentation, L2CAP framing, ATT requests, confirmations.
///
/// Re-record after an intended change of the host's bytes with
/// `BLUETIDE_RECORD_GOLDEN=1 swift test --filter GoldenCaptureTests` (the Bumble one needs the
/// venv with bumble on PATH), then review the fixtures' diff with `bluetide decode` or tshark.
@Suite(.timeLimit(.minutes(2))) struct GoldenCaptureTests {
    static let recording = ProcessInfo.processInfo.environment["BLUETIDE_RECORD_GOLDEN"] != nil
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    static let central = BluetoothAddress.randomStatic(0x51_5E_ED)
    static let virtualPeer = BluetoothAddress.randomStatic(0x1234_5678_9ABC)

    static func fixture(_ name: String) -> String { fixtures.appendingPathComponent(name + ".btsnoop").path }

    // MARK: Replays

    @Test func gattDumpOfABumblePeerReplaysByteForByte() async throws {
        let peer = try BluetoothAddress(BumblePeripheralOptions().address, type: .random)
        let summary = try await Self.replay("gatt-dump-bumble") { try await Script.gattDump($0, peer: peer) }
        #expect(summary.services.contains(.heartRate))
        #expect(summary.reads >= 4)
    }

    @Test func aReconnectReplaysByteForByte() async throws {
        let values = try await Self.replay("reconnect") { try await Script.reconnect($0, peer: Self.virtualPeer) }
        #expect(values == [[1], [2]])
    }

    @Test func aLongWriteAndLongReadReplayByteForByte() async throws {
        let echoed = try await Self.replay("long-write") { try await Script.longWrite($0, peer: Self.virtualPeer) }
        #expect(echoed == Script.longValue)
    }

    /// A passkey pairing (LE Secure Connections, our central displays, the peer types) replays
    /// byte for byte: with its randomness seeded, the central draws the same passkey, nonces,
    /// key pair and distributed keys, so its confirm values, DHKey check and LE Enable Encryption
    /// with the LTK are the captured ones.
    @Test func aPasskeyPairingReplaysByteForByteWithItsSeed() async throws {
        let level = try await Self.replay("pairing-passkey", configuration: Self.pairingCentral(seed: Self.pairingSeed)) {
            try await Script.pair($0, peer: Self.virtualPeer)
        }
        #expect(level == .authenticatedSecureConnections)
    }

    /// The same capture with another seed: the central's first random-dependent packet (its
    /// public key) differs from the captured one, so the replay reports a mismatch — the seed
    /// is what makes the pairing replayable.
    @Test func aPasskeyPairingWithAnotherSeedDoesNotReplay() async throws {
        let records = try BTSnoopReader.records(atPath: Self.fixture("pairing-passkey"))
        let transport = ReplayTransport(records: records)
        let stack = HostStack(transport: transport, configuration: Self.pairingCentral(seed: Self.pairingSeed &+ 1), clock: ManualClock())
        _ = try? await within(30, "replay with another seed") { try await Script.pair(stack, peer: Self.virtualPeer) }
        await stack.close()
        #expect(transport.mismatch != nil, "a different seed must give different pairing bytes")
    }

    static let pairingSeed: UInt64 = 0xB1E7_1DE5_EED0_0001

    /// Our central for the pairing capture: displays a passkey, seeded randomness.
    static func pairingCentral(seed: UInt64) -> HostConfiguration {
        .init(randomAddress: central, security: SecurityPolicy(pairing: SMPConfiguration(ioCapability: .displayOnly)), randomness: .seeded(seed))
    }

    /// Runs `script` on a host fed from the fixture `name`, and checks it sent exactly the
    /// captured packets.
    static func replay<T: Sendable>(
        _ name: String, configuration: HostConfiguration = .init(randomAddress: central),
        _ script: @escaping @Sendable (HostStack) async throws -> T,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> T {
        let records = try BTSnoopReader.records(atPath: fixture(name))
        let transport = ReplayTransport(records: records)
        let stack = HostStack(transport: transport, configuration: configuration, clock: ManualClock())
        let result: T
        do {
            result = try await within(30, "replay of \(name)") { try await script(stack) }
        } catch {
            await stack.close()
            Issue.record("replay of \(name) failed: \(error); \(transport.mismatch ?? "no mismatch")", sourceLocation: sourceLocation)
            throw error
        }
        await stack.close()
        #expect(transport.mismatch == nil, sourceLocation: sourceLocation)
        #expect(transport.unsentHostPackets == 0, "the host stopped before the capture's end", sourceLocation: sourceLocation)
        return result
    }

    // MARK: Recording

    @Test(.enabled(if: recording), .bumbleInterop) func recordGattDumpOfABumblePeer() async throws {
        try await withBumble { bumble in
            let (_, ports) = try await bumble.startControllers(legacyReports: false)
            let options = BumblePeripheralOptions()
            let (peripheral, _) = try await bumble.startPeripheral(port: ports[1], options: options)
            let transport = try await Transport.open("tcp-client:127.0.0.1:\(ports[0])+snoop:\(Self.fixture("gatt-dump-bumble"))")
            let stack = HostStack(transport: transport, configuration: .init(randomAddress: Self.central))
            let peer = try BluetoothAddress(options.address, type: .random)
            _ = try await within(60, "gatt dump") { try await Script.gattDump(stack, peer: peer) }
            _ = await peripheral.waitForExit(timeout: .seconds(10))
        }
    }

    @Test(.enabled(if: recording)) func recordReconnectAndLongWrite() async throws {
        for name in ["reconnect", "long-write"] {
            let linkName = "golden-\(UUID().uuidString)"
            let transport = try await Transport.open("virtual:\(linkName)+snoop:\(Self.fixture(name))")
            let peripheralTransport = await VirtualTransport.attach(toLinkNamed: linkName)
            let peripheral = HostStack(
                transport: peripheralTransport,
                configuration: .init(randomAddress: Self.virtualPeer, deviceName: "Golden", services: [TestService.definition]))
            try await peripheral.start()
            let advertising = AdvertisingData([.completeLocalName("Golden")])
            try await peripheral.startAdvertising(advertising, intervalMilliseconds: 20)
            let stack = HostStack(transport: transport, configuration: .init(randomAddress: Self.central))
            if name == "reconnect" {
                let notify = try #require(await peripheral.valueHandle(of: TestService.notify))
                // The peripheral notifies once the central subscribed, and advertises again after
                // each disconnection.
                let serve = Task {
                    var round: UInt8 = 0
                    for await event in peripheral.serverEvents {
                        guard case .subscriptionChanged = event.event else { continue }
                        round += 1
                        await peripheral.updateValue([round], at: notify)
                    }
                }
                let readvertise = Task {
                    for await connection in peripheral.incomingConnections {
                        _ = await connection.waitForDisconnection()
                        try? await peripheral.startAdvertising(advertising, intervalMilliseconds: 20)
                    }
                }
                #expect(try await within(60, "reconnect") { try await Script.reconnect(stack, peer: Self.virtualPeer) } == [[1], [2]])
                serve.cancel()
                readvertise.cancel()
            } else {
                #expect(try await within(60, "long write") { try await Script.longWrite(stack, peer: Self.virtualPeer) } == Script.longValue)
            }
            await peripheral.close()
        }
    }

    @Test(.enabled(if: recording)) func recordPasskeyPairing() async throws {
        let linkName = "golden-\(UUID().uuidString)"
        let transport = try await Transport.open("virtual:\(linkName)+snoop:\(Self.fixture("pairing-passkey"))")
        let peripheralTransport = await VirtualTransport.attach(toLinkNamed: linkName)
        let peripheral = HostStack(
            transport: peripheralTransport,
            configuration: .init(
                randomAddress: Self.virtualPeer, deviceName: "Golden", services: [TestService.definition],
                security: SecurityPolicy(pairing: SMPConfiguration(ioCapability: .keyboardOnly))))
        try await peripheral.start()
        try await peripheral.startAdvertising(AdvertisingData([.completeLocalName("Golden")]), intervalMilliseconds: 20)
        let stack = HostStack(transport: transport, configuration: Self.pairingCentral(seed: Self.pairingSeed))
        // The passkey our central displays is what the peer's user types.
        let (displayed, shown) = AsyncStream.makeStream(of: UInt32.self)
        let show = Task {
            for await case let .prompt(_, .displayPasskey(value)) in stack.securityEvents { shown.yield(value) }
        }
        let type = Task {
            var passkeys = displayed.makeAsyncIterator()
            for await case let .prompt(handle, .enterPasskey) in peripheral.securityEvents {
                let passkey = await passkeys.next()
                await peripheral.answerPairing(.passkey(passkey), on: handle)
            }
        }
        #expect(try await within(60, "pairing") { try await Script.pair(stack, peer: Self.virtualPeer) } == .authenticatedSecureConnections)
        show.cancel()
        type.cancel()
        await peripheral.close()
    }

    // MARK: The sessions

    /// The central side of each captured session. Each closes the stack at its end.
    enum Script {
        static let longValue = (0..<100).map { UInt8($0 ^ 0x5A) }

        /// `gatt`-style dump: MTU exchange, every service, characteristic and descriptor, every
        /// readable value.
        static func gattDump(_ stack: HostStack, peer: BluetoothAddress) async throws -> (services: [BluetoothUUID], reads: Int) {
            try await stack.start()
            let link = try await stack.connect(to: peer, timeout: 15)
            _ = try await link.gatt.exchangeMTU()
            let services = try await link.gatt.discoverDatabase()
            var reads = 0
            for characteristic in services.flatMap(\.characteristics).map(\.characteristic)
            where characteristic.properties.contains(.read) {
                // One of Bumble's refuses reads (ATT error 0x02): that exchange is captured too.
                if (try? await link.gatt.read(handle: characteristic.valueHandle)) != nil { reads += 1 }
            }
            try await link.disconnect()
            await stack.close()
            return (services.map(\.service.uuid), reads)
        }

        /// Connect, discover, subscribe, take one notification, disconnect — twice.
        static func reconnect(_ stack: HostStack, peer: BluetoothAddress) async throws -> [[UInt8]] {
            try await stack.start()
            var values: [[UInt8]] = []
            for _ in 0..<2 {
                let link = try await stack.connect(to: peer, timeout: 10)
                let services = try await link.gatt.discoverDatabase()
                let notify = try #require(services.flatMap(\.characteristics).map(\.characteristic).first { $0.uuid == TestService.notify })
                var iterator = try await link.gatt.subscribe(to: notify).makeAsyncIterator()
                values.append(await iterator.next() ?? [])
                try await link.disconnect()
            }
            await stack.close()
            return values
        }

        /// Connect, pair (the central's policy picks the method), disconnect.
        static func pair(_ stack: HostStack, peer: BluetoothAddress) async throws -> SMPSecurityLevel {
            try await stack.start()
            let link = try await stack.connect(to: peer, timeout: 10)
            let level = try await stack.pair(link.handle)
            try await link.disconnect()
            await stack.close()
            return level
        }

        /// At the default ATT MTU (23): a 100-byte long write (Prepare Write parts, Execute
        /// Write) and the long read back (Read Blob).
        static func longWrite(_ stack: HostStack, peer: BluetoothAddress) async throws -> [UInt8] {
            try await stack.start()
            let link = try await stack.connect(to: peer, timeout: 10)
            let services = try await link.gatt.discoverPrimaryServices(uuid: TestService.service)
            let service = try #require(services.first)
            let echo = try #require(try await link.gatt.discoverCharacteristics(in: service).first { $0.uuid == TestService.echo })
            try await link.gatt.writeLong(handle: echo.valueHandle, value: longValue)
            let echoed = try await link.gatt.read(handle: echo.valueHandle)
            try await link.disconnect()
            await stack.close()
            return echoed
        }
    }
}
