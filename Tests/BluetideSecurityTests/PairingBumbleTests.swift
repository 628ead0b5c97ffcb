import BluetideBase
import BluetideTestSupport
import BluetideTransport
import Foundation
import Testing

@testable import BluetideHost

/// Bluetide's pairing against Bumble's SMP (Secure Connections and legacy) over Bumble's
/// linked virtual controllers, in both roles, with `Bumble/pairing_peer.py` as the peer.
@Suite("Pairing ↔ Bumble", .serialized, .bumbleInterop, .timeLimit(.minutes(3)))
struct PairingBumbleTests {
    static let ourAddress = BluetoothAddress.randomStatic(0x31C2_C3C4_C5C6)
    static let peerAddress = "F1:F2:F3:F4:F5:F6"
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Bumble/pairing_peer.py")

    /// Controllers, the peer and our stack; everything is stopped when `body` ends.
    static func withPeer<T: Sendable>(
        peerArguments: [String], configuration: HostStack.Configuration,
        _ body: @Sendable (HostStack, BumbleProcess) async throws -> T
    ) async throws -> T {
        let (controllers, ports) = try await BumbleLinkedControllers.start(count: 2)
        var processes = [controllers]
        var stack: HostStack?
        do {
            let peer = try await BumbleProcess.launchPython(
                .script(script), arguments: ["\(ports[1])", "--address", peerAddress, "--exit-on-stdin-eof"] + peerArguments,
                name: "pairing-peer")
            processes.append(peer)
            _ = try await peer.firstJSON("event", "ready", timeout: .seconds(30))
            let transport = try await Transport.open("tcp-client:127.0.0.1:\(ports[0])")
            let started = HostStack(transport: transport, configuration: configuration)
            stack = started
            try await started.start()
            let value = try await body(started, peer)
            await started.close()
            for process in processes.reversed() { await process.stop() }
            return value
        } catch {
            await stack?.close()
            for process in processes.reversed() { await process.stop() }
            throw error
        }
    }

    static func read(_ connection: HostConnection, _ uuid: BluetoothUUID) async throws -> Result<[UInt8], ATTErrorCode> {
        try await PairingVirtualLinkTests.read(connection, uuid, on: connection.stack)
    }

    static var peer: BluetoothAddress { try! BluetoothAddress(peerAddress, type: .random) }

    /// Answers our passkey prompts with the passkey the Bumble peer shows (plus `offBy`, to
    /// type a wrong one).
    static func typePasskeyShown(by peer: BumbleProcess, on stack: HostStack, offBy: UInt32 = 0) -> Task<Void, Never> {
        Task {
            for await event in stack.securityEvents {
                guard case let .prompt(handle, .enterPasskey) = event else { continue }
                guard let shown = try? await peer.firstJSON("event", "display", timeout: .seconds(20)),
                      let passkey = shown["passkey"]?.int else { return }
                await stack.answerPairing(.passkey((UInt32(passkey) + offBy) % 1_000_000), on: handle)
            }
        }
    }

    // MARK: Bluetide central ↔ Bumble peripheral

    @Test(arguments: [false, true])
    func centralJustWorks(legacy: Bool) async throws {
        try await Self.withPeer(
            peerArguments: ["--role", "peripheral", "--io", "no-io"] + (legacy ? ["--legacy"] : []),
            configuration: .init(randomAddress: Self.ourAddress)
        ) { stack, peer in
            let connection = try await stack.connect(to: Self.peer, timeout: 10)
            guard case .failure = try await Self.read(connection, PairingVirtualLinkTests.encrypted) else {
                Issue.record("the encrypted value was readable before pairing")
                return
            }
            #expect(try await stack.pair(connection.handle) == .encrypted)
            #expect(try await Self.read(connection, PairingVirtualLinkTests.encrypted) == .success(Array("encrypted".utf8)))
            let paired = try await peer.firstJSON("event", "pairing", timeout: .seconds(20))
            #expect(paired["authenticated"]?.bool == false)
            _ = try await connection.disconnect()
        }
    }

    @Test(arguments: [false, true])
    func centralPasskeyShownByBumble(legacy: Bool) async throws {
        try await Self.withPeer(
            peerArguments: ["--role", "peripheral", "--io", "display"] + (legacy ? ["--legacy"] : []),
            configuration: .init(randomAddress: Self.ourAddress, security: SecurityPolicy(pairing: SMPConfiguration(ioCapability: .keyboardOnly)))
        ) { stack, peer in
            let connection = try await stack.connect(to: Self.peer, timeout: 10)
            let answering = Self.typePasskeyShown(by: peer, on: stack)
            defer { answering.cancel() }
            #expect(try await stack.pair(connection.handle) == (legacy ? .authenticated : .authenticatedSecureConnections))
            #expect(try await Self.read(connection, PairingVirtualLinkTests.authenticated) == .success(Array("authenticated".utf8)))
            let paired = try await peer.firstJSON("event", "pairing", timeout: .seconds(20))
            #expect(paired["authenticated"]?.bool == true)
            _ = try await connection.disconnect()
        }
    }

    @Test func centralNumericComparison() async throws {
        try await Self.withPeer(
            peerArguments: ["--role", "peripheral", "--io", "display-yes-no"],
            configuration: .init(randomAddress: Self.ourAddress, security: SecurityPolicy(pairing: SMPConfiguration(ioCapability: .displayYesNo)))
        ) { stack, peer in
            let connection = try await stack.connect(to: Self.peer, timeout: 10)
            let answering = Task { () -> UInt32? in
                for await event in stack.securityEvents {
                    guard case let .prompt(handle, .confirmNumber(number)) = event else { continue }
                    await stack.answerPairing(.confirm(true), on: handle)
                    return number
                }
                return nil
            }
            async let paired = stack.pair(connection.handle)
            let compare = try await peer.firstJSON("event", "compare", timeout: .seconds(20))
            try await peer.writeToStdin("confirm yes\n")
            #expect(try await paired == .authenticatedSecureConnections)
            #expect(await answering.value.map(Int.init) == compare["number"]?.int, "both sides show the same number")
            _ = try await connection.disconnect()
        }
    }

    @Test func centralWrongPasskeyFailsOnBothSides() async throws {
        try await Self.withPeer(
            peerArguments: ["--role", "peripheral", "--io", "display"],
            configuration: .init(randomAddress: Self.ourAddress, security: SecurityPolicy(pairing: SMPConfiguration(ioCapability: .keyboardOnly)))
        ) { stack, peer in
            let connection = try await stack.connect(to: Self.peer, timeout: 10)
            let answering = Self.typePasskeyShown(by: peer, on: stack, offBy: 1)
            defer { answering.cancel() }
            await #expect(throws: SMPPairingError.peerFailure(.confirmValueFailed)) { try await stack.pair(connection.handle) }
            let failed = try await peer.firstJSON("event", "pairing failed", timeout: .seconds(20))
            #expect(failed["reason"]?.int == 4)
            _ = try? await connection.disconnect()
        }
    }

    /// A Security Request from the Bumble peripheral makes our central pair by itself.
    @Test func centralPairsOnSecurityRequest() async throws {
        try await Self.withPeer(
            peerArguments: ["--role", "peripheral", "--io", "no-io", "--request-security"],
            configuration: .init(randomAddress: Self.ourAddress)
        ) { stack, peer in
            let outcome = Task { () -> SMPSecurityLevel? in
                for await event in stack.securityEvents {
                    if case let .paired(_, result) = event { return result.securityLevel }
                    if case .pairingFailed = event { return nil }
                }
                return nil
            }
            let connection = try await stack.connect(to: Self.peer, timeout: 10)
            #expect(await outcome.value == .encrypted)
            _ = try await peer.firstJSON("event", "pairing", timeout: .seconds(20))
            #expect(try await Self.read(connection, PairingVirtualLinkTests.encrypted) == .success(Array("encrypted".utf8)))
            _ = try await connection.disconnect()
        }
    }

    /// Pair once; on the next connection (new processes, the bonds read back from their files)
    /// our central encrypts from the bond and Bumble reports encryption without pairing.
    @Test func centralBondedReconnectWithoutPairing() async throws {
        let folder = PairingVirtualLinkTests.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let arguments = ["--role", "peripheral", "--io", "no-io", "--keystore", folder + "/bumble-keys.json"]
        let configuration = HostStack.Configuration(randomAddress: Self.ourAddress, bondFile: folder + "/bonds.json")
        try await Self.withPeer(peerArguments: arguments, configuration: configuration) { stack, peer in
            let connection = try await stack.connect(to: Self.peer, timeout: 10)
            #expect(try await stack.pair(connection.handle) == .encrypted)
            _ = try await peer.firstJSON("event", "pairing", timeout: .seconds(20))
            _ = try await connection.disconnect()
        }
        try await Self.withPeer(peerArguments: arguments, configuration: configuration) { stack, peer in
            #expect(await stack.bonds.map(\.address) == [Self.peer])
            let connection = try await stack.connect(to: Self.peer, timeout: 10)
            #expect(try await stack.pair(connection.handle) == .encrypted)
            #expect(try await Self.read(connection, PairingVirtualLinkTests.encrypted) == .success(Array("encrypted".utf8)))
            let encrypted = try await peer.firstLine(timeout: .seconds(20), describing: "encryption or pairing") {
                let event = JSONValue(line: $0)?["event"]?.string
                return event == "encryption" || event == "pairing" || event == "pairing failed"
            }
            #expect(JSONValue(line: encrypted)?["event"]?.string == "encryption", "Bumble paired again: \(encrypted)")
            _ = try await connection.disconnect()
        }
    }

    // MARK: Bumble central ↔ Bluetide peripheral

    @Test(arguments: [false, true])
    func peripheralPasskeyTypedOnBumble(legacy: Bool) async throws {
        let (controllers, ports) = try await BumbleLinkedControllers.start(count: 2)
        let transport = try await Transport.open("tcp-client:127.0.0.1:\(ports[0])")
        let stack = HostStack(transport: transport, configuration: .init(
            randomAddress: Self.ourAddress, services: PairingVirtualLinkTests.services,
            security: SecurityPolicy(pairing: SMPConfiguration(ioCapability: .displayOnly))))
        var peer: BumbleProcess?
        do {
            try await stack.start()
            try await stack.startAdvertising(AdvertisingData([.flags([.leGeneralDiscoverable, .brEdrNotSupported])]), intervalMilliseconds: 20)
            let central = try await BumbleProcess.launchPython(
                .script(Self.script),
                arguments: ["\(ports[1])", "--role", "central", "--address", "C9:C8:C7:C6:C5:C4", "--peer", Self.ourAddress.description,
                            "--io", "keyboard", "--pair", "--exit-on-stdin-eof"] + (legacy ? ["--legacy"] : []),
                name: "pairing-central")
            peer = central
            var shown: UInt32?
            for await event in stack.securityEvents {
                if case let .prompt(_, .displayPasskey(value)) = event { shown = value; break }
            }
            _ = try await central.firstJSON("event", "enter passkey", timeout: .seconds(20))
            try await central.writeToStdin("passkey \(try #require(shown))\n")
            let paired = try await central.firstJSON("event", "pairing", timeout: .seconds(20))
            #expect(paired["authenticated"]?.bool == true)
            let read = try await central.firstJSON("event", "read", timeout: .seconds(20))
            #expect(read["value"]?.string == "encrypted")
            let second = try await central.firstJSON("event", "read", timeout: .seconds(20))
            #expect(second["value"]?.string == "authenticated")
            #expect(await stack.bonds.count == 1)
        } catch {
            await stack.close()
            await peer?.stop()
            await controllers.stop()
            throw error
        }
        await stack.close()
        await peer?.stop()
        await controllers.stop()
    }
}
