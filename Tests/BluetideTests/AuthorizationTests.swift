// Authorisation (ATT Insufficient Authorization 0x08) through the public API only, Bluetide ↔
// Bluetide on a private virtual link: the peripheral's app decides per central, the central
// reports one clear error and never pairs for it.
import Bluetide
import Foundation
import Testing

/// A service whose values need the app's permission.
final class AuthorizationTestService: GATTService {
    static let uuid = try! BluetoothUUID("B1DE0400-0000-4000-8000-00000000B1DE")
    static let doorUUID = try! BluetoothUUID("B1DE0401-0000-4000-8000-00000000B1DE")
    static let vaultUUID = try! BluetoothUUID("B1DE0402-0000-4000-8000-00000000B1DE")
    static let openUUID = try! BluetoothUUID("B1DE0403-0000-4000-8000-00000000B1DE")

    @Characteristic(AuthorizationTestService.doorUUID, [.read, .write], security: .authorized)
    var door: [UInt8] = Array("door".utf8)

    @Characteristic(AuthorizationTestService.vaultUUID, [.read], security: [.encrypted, .authorized])
    var vault: [UInt8] = Array("vault".utf8)

    @Characteristic(AuthorizationTestService.openUUID, [.read])
    var open: [UInt8] = Array("open".utf8)
}

/// A peripheral serving ``AuthorizationTestService`` and a central, on a fresh virtual link.
struct AuthorizationTestHosts {
    static let peripheralAddress = BluetoothAddress.randomStatic(0x1234_5678_0404)
    static let centralAddress = BluetoothAddress.randomStatic(0x0BAD_CAFE_0404)

    let peripheral: Bluetooth
    let central: Bluetooth
    let service: AuthorizationTestService
    let folder: String

    static func start(central centralPolicy: PairingPolicy = .justWorks) async throws -> AuthorizationTestHosts {
        let link = "authz-\(UUID().uuidString)"
        let folder = PairingTestHosts.newFolder()
        let peripheral = try await Bluetooth.open(
            transport: "virtual:\(link)",
            configuration: .init(address: peripheralAddress, pairing: .justWorks, bondFile: folder + "/peripheral.json"))
        let central = try await Bluetooth.open(
            transport: "virtual:\(link)",
            configuration: .init(address: centralAddress, pairing: centralPolicy, bondFile: folder + "/central.json"))
        let service = AuthorizationTestService()
        try await peripheral.peripheral.add(service)
        try await peripheral.peripheral.startAdvertising(name: "Authz", interval: .milliseconds(20))
        return AuthorizationTestHosts(peripheral: peripheral, central: central, service: service, folder: folder)
    }

    func connect() async throws -> Connection {
        try await central.central.connect(to: Self.peripheralAddress, timeout: .seconds(5))
    }

    func close() async {
        await central.close()
        await peripheral.close()
        try? FileManager.default.removeItem(atPath: folder)
    }
}

/// Answers every authorisation request of a peripheral with `answer`, recording each request
/// and the link's security level when it was asked.
final class AuthorizationAnswerer: Sendable {
    struct Asked: Sendable {
        let central: BluetoothAddress
        let characteristic: BluetoothUUID
        let access: AuthorizationRequest.Access
        let securityLevel: SecurityLevel
        let text: String
    }

    private let log = Recorded()
    private let task: Task<Void, Never>

    actor Recorded {
        var asked: [Asked] = []
        func append(_ item: Asked) { asked.append(item) }
    }

    init(_ peripheral: Peripheral, answer: @escaping @Sendable (AuthorizationRequest) async -> Void) {
        let requests = peripheral.authorizationRequests
        let log = log
        task = Task {
            for await request in requests {
                await log.append(Asked(
                    central: request.central.address, characteristic: request.characteristic, access: request.access,
                    securityLevel: await request.central.securityLevel(), text: request.description))
                await answer(request)
            }
        }
    }

    /// What was asked so far (every request is recorded before it is answered).
    var asked: [Asked] { get async { await log.asked } }

    func stop() { task.cancel() }
}

@Suite(.timeLimit(.minutes(2))) struct AuthorizationTests {
    @Test func withNobodyToAskTheCentralIsRefusedWithOneClearErrorAndDoesNotPair() async throws {
        let hosts = try await AuthorizationTestHosts.start()
        let connection = try await hosts.connect()
        #expect(try await connection.read(AuthorizationTestService.openUUID) == Array("open".utf8))
        do {
            _ = try await connection.read(AuthorizationTestService.doorUUID)
            Issue.record("an authorised value was read without the app's permission")
        } catch let error as BluetideError {
            guard case let .attError(code, characteristic, _) = error else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(code == .insufficientAuthorization)
            #expect(characteristic == AuthorizationTestService.doorUUID)
            #expect("\(error)".contains("not authorised for \(AuthorizationTestService.doorUUID) (ATT 0x08)"))
        }
        // pairsWhenRequired is on, but pairing cannot grant authorisation: the link stays open.
        #expect(await connection.securityLevel == .none)
        #expect(await hosts.central.bonds().isEmpty)
        await #expect(throws: BluetideError.self) {
            try await connection.write(Array("x".utf8), to: AuthorizationTestService.doorUUID)
        }
        #expect(hosts.service.door == Array("door".utf8))
        await connection.disconnect()
        await hosts.close()
    }

    @Test func theAppAllowsAWaitingReadAndLaterReadsGoStraightThrough() async throws {
        let hosts = try await AuthorizationTestHosts.start()
        let answerer = AuthorizationAnswerer(hosts.peripheral.peripheral) { await $0.allow() }
        let connection = try await hosts.connect()
        // The read waits for the app, which allows it: the first attempt succeeds.
        #expect(try await connection.read(AuthorizationTestService.doorUUID) == Array("door".utf8))
        let asked = await answerer.asked
        #expect(asked.count == 1)
        #expect(asked.first?.central == AuthorizationTestHosts.centralAddress)
        #expect(asked.first?.characteristic == AuthorizationTestService.doorUUID)
        #expect(asked.first?.access == .read)
        #expect(asked.first?.text.contains("asks to read \(AuthorizationTestService.doorUUID)") == true)
        // Allowed until the connection closes: no second question for reading.
        #expect(try await connection.read(AuthorizationTestService.doorUUID) == Array("door".utf8))
        #expect(await answerer.asked.count == 1)
        // Writing is asked separately.
        try await connection.write(Array("open sesame".utf8), to: AuthorizationTestService.doorUUID)
        #expect(hosts.service.door == Array("open sesame".utf8))
        #expect(await answerer.asked.map(\.access) == [.read, .write])
        answerer.stop()
        await connection.disconnect()
        await hosts.close()
    }

    @Test func aDeniedRequestFailsWithInsufficientAuthorizationAndAsksAgainNextTime() async throws {
        let hosts = try await AuthorizationTestHosts.start()
        let answerer = AuthorizationAnswerer(hosts.peripheral.peripheral) { await $0.deny() }
        let connection = try await hosts.connect()
        for _ in 0..<2 {
            do {
                _ = try await connection.read(AuthorizationTestService.doorUUID)
                Issue.record("a denied read succeeded")
            } catch let BluetideError.attError(code, _, _) {
                #expect(code == .insufficientAuthorization)
            }
        }
        #expect(await answerer.asked.count == 2)
        #expect(await connection.securityLevel == .none, "no pairing for 0x08")
        answerer.stop()
        await connection.disconnect()
        await hosts.close()
    }

    /// `[.encrypted, .authorized]`: the link's security comes first (0x0F), and the app is
    /// asked only on the encrypted link.
    @Test func encryptionIsRequiredBeforeTheAppIsAsked() async throws {
        var policy = PairingPolicy.justWorks
        policy.pairsWhenRequired = false
        let hosts = try await AuthorizationTestHosts.start(central: policy)
        let answerer = AuthorizationAnswerer(hosts.peripheral.peripheral) { await $0.allow() }
        let connection = try await hosts.connect()
        do {
            _ = try await connection.read(AuthorizationTestService.vaultUUID)
            Issue.record("the vault was read on an unencrypted link")
        } catch let BluetideError.attError(code, _, _) {
            #expect(code == .insufficientEncryption)
        }
        #expect(await answerer.asked.isEmpty, "not asked before the link is encrypted")
        #expect(try await connection.pair() == .encrypted)
        #expect(try await connection.read(AuthorizationTestService.vaultUUID) == Array("vault".utf8))
        let asked = await answerer.asked
        #expect(asked.map(\.characteristic) == [AuthorizationTestService.vaultUUID])
        #expect(asked.first?.securityLevel == .encrypted)
        answerer.stop()
        await connection.disconnect()
        await hosts.close()
    }

    @Test func aCentralPairsByItselfForEncryptionAndThenTheAppIsAsked() async throws {
        let hosts = try await AuthorizationTestHosts.start()
        let answerer = AuthorizationAnswerer(hosts.peripheral.peripheral) { await $0.central.authorize() }
        let connection = try await hosts.connect()
        // 0x0F → the central pairs Just Works and retries → the app authorises the central.
        #expect(try await connection.read(AuthorizationTestService.vaultUUID) == Array("vault".utf8))
        #expect(await connection.securityLevel == .encrypted)
        #expect(await answerer.asked.map(\.securityLevel) == [.encrypted])
        // authorize() covered everything: the door needs no question.
        #expect(try await connection.read(AuthorizationTestService.doorUUID) == Array("door".utf8))
        #expect(await answerer.asked.count == 1)
        answerer.stop()
        await connection.disconnect()
        await hosts.close()
    }

    @Test func aCentralAuthorisedAheadIsNotAskedAndIsForgottenOnReconnect() async throws {
        let hosts = try await AuthorizationTestHosts.start()
        let peripheral = hosts.peripheral.peripheral
        var incoming = peripheral.connections.makeAsyncIterator()
        let connection = try await hosts.connect()
        let central = try #require(await incoming.next())
        await central.authorize()
        #expect(try await connection.read(AuthorizationTestService.doorUUID) == Array("door".utf8))
        try await connection.write(Array("ajar".utf8), to: AuthorizationTestService.doorUUID)
        #expect(hosts.service.door == Array("ajar".utf8))
        await connection.disconnect()
        _ = await central.waitForDisconnection()

        // A new connection of the same central starts unauthorised (nobody asked: denied).
        let again = try await hosts.connect()
        let next = try #require(await incoming.next())
        #expect(next.address == AuthorizationTestHosts.centralAddress)
        do {
            _ = try await again.read(AuthorizationTestService.doorUUID)
            Issue.record("authorisation outlived its connection")
        } catch let BluetideError.attError(code, _, _) {
            #expect(code == .insufficientAuthorization)
        }
        await again.disconnect()
        await hosts.close()
    }

    @Test func theCentralsErrorSaysWhoMustAllowIt() {
        let uuid = AuthorizationTestService.doorUUID
        let error = BluetideError.attError(.insufficientAuthorization, characteristic: uuid, operation: "read")
        #expect(error.description
                == "read of \(uuid): the device refused: this central is not authorised for \(uuid) (ATT 0x08); the device's owner must allow it, then try again")
        // Other ATT errors keep their wording.
        #expect(BluetideError.attError(.readNotPermitted, characteristic: uuid, operation: "read").description
                == "read of \(uuid) refused by the device: ATT error 0x02 (Read Not Permitted)")
    }

    @Test func securityRequirementsCombineOntoThePermissions() {
        let both = Characteristic(wrappedValue: [UInt8](), BluetoothUUID(0x2A00), [.read, .write], security: [.encrypted, .authorized])
        #expect(both.permissions == [.readable, .writable, .readEncrypted, .writeEncrypted, .readAuthorized, .writeAuthorized])
        let readOnly = Characteristic(wrappedValue: [UInt8](), BluetoothUUID(0x2A00), [.read], security: .authorized)
        #expect(readOnly.permissions == [.readable, .readAuthorized])
        let none = Characteristic(wrappedValue: [UInt8](), BluetoothUUID(0x2A00), [.read], security: .none)
        #expect(none.permissions == [.readable])
        #expect(CharacteristicSecurity.none.isEmpty)
    }
}
