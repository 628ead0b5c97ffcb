import BluetideBase
import BluetideSupport
import BluetideTestSupport
import BluetideTransport
import Foundation
import Synchronization
import Testing

@testable import BluetideHost

/// Two Bluetide hosts on a virtual link (the virtual controllers perform the LTK request and
/// Encryption Change flows): pairing in both roles through the host core, encrypted reads, and a
/// bonded reconnect that encrypts from the bond file without SMP.
@Suite struct PairingVirtualLinkTests {
    static let service = try! BluetoothUUID("B1DE0100-0000-4000-8000-00000000B1DE")
    static let encrypted = try! BluetoothUUID("B1DE0101-0000-4000-8000-00000000B1DE")
    static let authenticated = try! BluetoothUUID("B1DE0102-0000-4000-8000-00000000B1DE")
    static let centralAddress = BluetoothAddress.randomStatic(0x0BAD_CAFE_0101)
    static let peripheralAddress = BluetoothAddress.randomStatic(0x1234_5678_0202)

    static var services: [GATTServiceDefinition] {
        [GATTServiceDefinition(uuid: service, characteristics: [
            GATTCharacteristicDefinition(uuid: encrypted, properties: .read, permissions: [.readable, .readEncrypted], value: Array("encrypted".utf8)),
            GATTCharacteristicDefinition(uuid: authenticated, properties: .read, permissions: [.readable, .readAuthenticated], value: Array("authenticated".utf8)),
        ])]
    }

    /// A folder for bond files, removed by the caller.
    static func folder() -> String {
        let path = NSTemporaryDirectory() + "bluetide-pairing-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    struct Hosts {
        let central: HostStack
        let peripheral: HostStack

        static func start(
            link: String, central: SecurityPolicy, peripheral: SecurityPolicy, folder: String
        ) async throws -> Hosts {
            let peripheralStack = HostStack(
                transport: await VirtualTransport.attach(toLinkNamed: link),
                configuration: .init(
                    randomAddress: PairingVirtualLinkTests.peripheralAddress, deviceName: "Pairing Peripheral",
                    services: PairingVirtualLinkTests.services, security: peripheral, bondFile: folder + "/peripheral-bonds.json"))
            let centralStack = HostStack(
                transport: await VirtualTransport.attach(toLinkNamed: link),
                configuration: .init(
                    randomAddress: PairingVirtualLinkTests.centralAddress, security: central, bondFile: folder + "/central-bonds.json"))
            try await peripheralStack.start()
            try await centralStack.start()
            try await peripheralStack.startAdvertising(AdvertisingData([.flags([.leGeneralDiscoverable, .brEdrNotSupported])]), intervalMilliseconds: 20)
            return Hosts(central: centralStack, peripheral: peripheralStack)
        }

        func connect() async throws -> (central: HostConnection, peripheral: HostConnection) {
            let c = try await central.connect(to: PairingVirtualLinkTests.peripheralAddress, timeout: 5)
            var incoming = peripheral.incomingConnections.makeAsyncIterator()
            let p = try #require(await incoming.next())
            return (c, p)
        }

        func close() async {
            await central.close()
            await peripheral.close()
        }
    }

    /// Reads a value handle, returning the ATT error code on an Error Response.
    static func read(_ connection: HostConnection, _ uuid: BluetoothUUID, on stack: HostStack) async throws -> Result<[UInt8], ATTErrorCode> {
        let services = try await connection.gatt.discoverDatabase()
        guard let handle = services.flatMap(\.characteristics).first(where: { $0.characteristic.uuid == uuid })?.characteristic.valueHandle else {
            throw HostError.malformed("characteristic \(uuid) not found")
        }
        do {
            return .success(try await connection.gatt.read(handle: handle))
        } catch let GATTClientError.att(code, _, _) {
            return .failure(code)
        }
    }

    /// Answers every prompt on `stack`: shows are remembered in `shown`, entries use it.
    static func answerPrompts(on stack: HostStack, shown: PasskeyBox, typed: UInt32? = nil) -> Task<Void, Never> {
        Task {
            for await event in stack.securityEvents {
                guard case let .prompt(handle, prompt) = event else { continue }
                switch prompt {
                case let .displayPasskey(value): shown.set(value)
                case .enterPasskey:
                    let value = await shown.wait()
                    await stack.answerPairing(.passkey(typed ?? value), on: handle)
                case .confirmNumber: await stack.answerPairing(.confirm(true), on: handle)
                }
            }
        }
    }

    @Test func justWorksEncryptedReadAndBondedReconnect() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let identityC = SMPIdentity(identityResolvingKey: [UInt8](repeating: 0x11, count: 16), address: Self.centralAddress)
        let identityP = SMPIdentity(identityResolvingKey: [UInt8](repeating: 0x22, count: 16), address: Self.peripheralAddress)
        let link = "pairing-\(UUID().uuidString)"
        try await withRunTimeLimit(60, onTimeout: { HostError.timedOut("pairing over the virtual link", seconds: 60) }) {
            var hosts = try await Hosts.start(
                link: link, central: SecurityPolicy(pairing: SMPConfiguration(identity: identityC)),
                peripheral: SecurityPolicy(pairing: SMPConfiguration(identity: identityP)), folder: folder)
            var (central, _) = try await hosts.connect()
            #expect(try await Self.read(central, Self.encrypted, on: hosts.central) == .failure(.insufficientEncryption))
            let level = try await hosts.central.pair(central.handle)
            #expect(level == .encrypted)
            #expect(await hosts.central.securityLevel(of: central.handle) == .encrypted)
            #expect(try await Self.read(central, Self.encrypted, on: hosts.central) == .success(Array("encrypted".utf8)))
            // Just Works is not authenticated.
            #expect(try await Self.read(central, Self.authenticated, on: hosts.central) == .failure(.insufficientAuthentication))
            #expect(await hosts.central.bonds.map(\.address) == [Self.peripheralAddress])
            #expect(await hosts.peripheral.bonds.map(\.address) == [Self.centralAddress])
            _ = try await central.disconnect()
            await hosts.close()

            // New hosts from the bond files: the central encrypts on connect, without pairing.
            hosts = try await Hosts.start(
                link: link + "-2", central: SecurityPolicy(pairing: SMPConfiguration(identity: identityC)),
                peripheral: SecurityPolicy(pairing: SMPConfiguration(identity: identityP)), folder: folder)
            #expect(await hosts.central.bonds.count == 1)
            let events = Task { [central = hosts.central] in
                var seen: [HostSecurityEvent] = []
                for await event in central.securityEvents {
                    seen.append(event)
                    if case .securityChanged = event { break }
                }
                return seen
            }
            (central, _) = try await hosts.connect()
            #expect(try await hosts.central.pair(central.handle) == .encrypted)
            #expect(try await Self.read(central, Self.encrypted, on: hosts.central) == .success(Array("encrypted".utf8)))
            let seen = await events.value
            #expect(!seen.contains { if case .paired = $0 { true } else { false } }, "reconnect paired again: \(seen)")
            await hosts.close()
        }
    }

    @Test(arguments: [true, false])
    func passkeyEntryBothWays(secureConnections: Bool) async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await withRunTimeLimit(60, onTimeout: { HostError.timedOut("passkey pairing over the virtual link", seconds: 60) }) {
            let hosts = try await Hosts.start(
                link: "passkey-\(UUID().uuidString)",
                central: SecurityPolicy(pairing: SMPConfiguration(ioCapability: .keyboardOnly, secureConnections: secureConnections)),
                peripheral: SecurityPolicy(pairing: SMPConfiguration(ioCapability: .displayOnly)), folder: folder)
            let shown = PasskeyBox()
            let answering = [Self.answerPrompts(on: hosts.central, shown: shown), Self.answerPrompts(on: hosts.peripheral, shown: shown)]
            defer { for task in answering { task.cancel() } }
            let (central, _) = try await hosts.connect()
            let level = try await hosts.central.pair(central.handle)
            #expect(level == (secureConnections ? .authenticatedSecureConnections : .authenticated))
            #expect(try await Self.read(central, Self.authenticated, on: hosts.central) == .success(Array("authenticated".utf8)))
            await hosts.close()
        }
    }

    @Test func wrongPasskeyFailsOnBothSides() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await withRunTimeLimit(60, onTimeout: { HostError.timedOut("wrong passkey over the virtual link", seconds: 60) }) {
            let hosts = try await Hosts.start(
                link: "wrong-\(UUID().uuidString)", central: SecurityPolicy(pairing: SMPConfiguration(ioCapability: .keyboardOnly)),
                peripheral: SecurityPolicy(pairing: SMPConfiguration(ioCapability: .displayOnly)), folder: folder)
            let shown = PasskeyBox()
            let answering = [
                Self.answerPrompts(on: hosts.central, shown: shown, typed: 1), Self.answerPrompts(on: hosts.peripheral, shown: shown),
            ]
            defer { for task in answering { task.cancel() } }
            let peripheralOutcome = Task { [peripheral = hosts.peripheral] in
                for await event in peripheral.securityEvents {
                    if case let .pairingFailed(_, error) = event { return Optional(error) }
                }
                return nil
            }
            let (central, _) = try await hosts.connect()
            do {
                _ = try await hosts.central.pair(central.handle)
                if await shown.wait() != 1 { Issue.record("pairing with a wrong passkey succeeded") }
            } catch let error as SMPPairingError {
                #expect(error == .peerFailure(.confirmValueFailed))
                #expect(await peripheralOutcome.value == .localFailure(.confirmValueFailed))
            }
            #expect(await hosts.central.securityLevel(of: central.handle) == .none)
            await hosts.close()
        }
    }
}

/// A passkey shown on one host, awaited by the other.
final class PasskeyBox: Sendable {
    private let state = Mutex<(value: UInt32?, waiters: [CheckedContinuation<UInt32, Never>])>((nil, []))

    func set(_ value: UInt32) {
        let waiters = state.withLock { state in
            state.value = value
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: value) }
    }

    func wait() async -> UInt32 {
        await withCheckedContinuation { continuation in
            let value = state.withLock { state -> UInt32? in
                if let value = state.value { return value }
                state.waiters.append(continuation)
                return nil
            }
            if let value { continuation.resume(returning: value) }
        }
    }
}
