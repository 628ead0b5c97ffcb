// Pairing through the public API only, Bluetide ↔ Bluetide on a private virtual link: the
// virtual controllers run the LTK Request and Encryption Change flows, the host's SMP pairs.
import Bluetide
import Foundation
import Testing

/// A service whose values need a secured link.
final class PairingTestService: GATTService {
    static let uuid = try! BluetoothUUID("B1DE0200-0000-4000-8000-00000000B1DE")
    static let encryptedUUID = try! BluetoothUUID("B1DE0201-0000-4000-8000-00000000B1DE")
    static let authenticatedUUID = try! BluetoothUUID("B1DE0202-0000-4000-8000-00000000B1DE")
    static let openUUID = try! BluetoothUUID("B1DE0203-0000-4000-8000-00000000B1DE")

    @Characteristic(PairingTestService.encryptedUUID, [.read, .write], security: .encrypted)
    var secret: [UInt8] = Array("secret".utf8)

    @Characteristic(PairingTestService.authenticatedUUID, [.read], security: .authenticated)
    var pin: [UInt8] = Array("pin".utf8)

    @Characteristic(PairingTestService.openUUID, [.read])
    var open: [UInt8] = Array("open".utf8)
}

/// A peripheral and a central host on a fresh virtual link, each with its own pairing policy
/// and bond file.
struct PairingTestHosts {
    static let peripheralAddress = BluetoothAddress.randomStatic(0x1234_5678_0303)
    static let centralAddress = BluetoothAddress.randomStatic(0x0BAD_CAFE_0303)

    let peripheral: Bluetooth
    let central: Bluetooth
    let service: PairingTestService
    let folder: String

    /// Starts both hosts on `link` (a fresh one by default) with bond files in `folder`.
    static func start(
        central centralPolicy: PairingPolicy, peripheral peripheralPolicy: PairingPolicy,
        folder: String = PairingTestHosts.newFolder(), link: String = "pairing-\(UUID().uuidString)"
    ) async throws -> PairingTestHosts {
        let peripheral = try await Bluetooth.open(
            transport: "virtual:\(link)",
            configuration: .init(address: peripheralAddress, pairing: peripheralPolicy, bondFile: folder + "/peripheral.json"))
        let central = try await Bluetooth.open(
            transport: "virtual:\(link)",
            configuration: .init(address: centralAddress, pairing: centralPolicy, bondFile: folder + "/central.json"))
        let service = PairingTestService()
        try await peripheral.peripheral.add(service)
        try await peripheral.peripheral.startAdvertising(name: "Pairing", interval: .milliseconds(20))
        return PairingTestHosts(peripheral: peripheral, central: central, service: service, folder: folder)
    }

    static func newFolder() -> String {
        let path = NSTemporaryDirectory() + "bluetide-pairapi-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    func connect() async throws -> Connection {
        try await central.central.connect(to: Self.peripheralAddress, timeout: .seconds(5))
    }

    /// Closes both hosts (the bond files stay for the caller).
    func close() async {
        await central.close()
        await peripheral.close()
    }
}

/// Answers every prompt of `bluetooth` with `answer` and records what was asked.
final class PromptAnswerer: Sendable {
    private let task: Task<[PairingPrompt.Kind], Never>

    init(_ bluetooth: Bluetooth, answer: @escaping @Sendable (PairingPrompt) async -> Void) {
        task = Task {
            var asked: [PairingPrompt.Kind] = []
            for await prompt in bluetooth.pairingPrompts {
                asked.append(prompt.kind)
                await answer(prompt)
            }
            return asked
        }
    }

    /// What was asked (once the host closed).
    var asked: [PairingPrompt.Kind] { get async { await task.value } }
}

/// Passes a displayed passkey from one side's prompt to the other side's entry.
actor PasskeyBoard {
    private var shown: UInt32?
    private var waiters: [CheckedContinuation<UInt32, Never>] = []

    func show(_ passkey: UInt32) {
        shown = passkey
        for waiter in waiters { waiter.resume(returning: passkey) }
        waiters = []
    }

    func read() async -> UInt32 {
        if let shown { return shown }
        return await withCheckedContinuation { waiters.append($0) }
    }
}

@Suite(.timeLimit(.minutes(2))) struct PairingTests {
    @Test func aCentralPairsByItselfOnInsufficientEncryptionAndRetriesTheRead() async throws {
        let hosts = try await PairingTestHosts.start(central: .justWorks, peripheral: .justWorks)
        defer { try? FileManager.default.removeItem(atPath: hosts.folder) }
        let connection = try await hosts.connect()
        #expect(await connection.securityLevel == .none)
        // Open values need nothing.
        #expect(try await connection.read(PairingTestService.openUUID) == Array("open".utf8))
        // The server answers 0x0F; the central pairs Just Works and reads again.
        #expect(try await connection.read(PairingTestService.encryptedUUID) == Array("secret".utf8))
        #expect(await connection.securityLevel == .encrypted)
        let centrals = hosts.peripheral.peripheral.connectedCentrals
        #expect(centrals.count == 1)
        #expect(await centrals.first?.securityLevel() == .encrypted)
        // Just Works keys are not authenticated: 0x05 stays, and a host that cannot authenticate
        // (NoInputNoOutput) does not pair again for it (that would only replace good keys).
        let bondBefore = try Data(contentsOf: URL(fileURLWithPath: hosts.folder + "/central.json"))
        do {
            _ = try await connection.read(PairingTestService.authenticatedUUID)
            Issue.record("the authenticated value was read over Just Works keys")
        } catch let BluetideError.attError(code, characteristic, _) {
            #expect(code == .insufficientAuthentication)
            #expect(characteristic == PairingTestService.authenticatedUUID)
        } catch {
            Issue.record("expected ATT 0x05, got \(error)")
        }
        #expect(await connection.securityLevel == .encrypted)
        #expect(try Data(contentsOf: URL(fileURLWithPath: hosts.folder + "/central.json")) == bondBefore, "no second pairing")
        // Both sides bonded.
        #expect(await hosts.central.bonds().map(\.address) == [PairingTestHosts.peripheralAddress])
        #expect(await hosts.peripheral.bonds().map(\.address) == [PairingTestHosts.centralAddress])
        await connection.disconnect()
        await hosts.close()
    }

    @Test func withoutPairingWhenRequiredTheErrorIsReportedAndPairFixesIt() async throws {
        var central = PairingPolicy.justWorks
        central.pairsWhenRequired = false
        let hosts = try await PairingTestHosts.start(central: central, peripheral: .justWorks)
        defer { try? FileManager.default.removeItem(atPath: hosts.folder) }
        let connection = try await hosts.connect()
        do {
            _ = try await connection.read(PairingTestService.encryptedUUID)
            Issue.record("an encrypted value was read on an unencrypted link")
        } catch let BluetideError.attError(code, characteristic, _) {
            #expect(code == ATTErrorCode(0x0F))
            #expect(characteristic == PairingTestService.encryptedUUID)
        }
        #expect(try await connection.pair() == .encrypted)
        #expect(try await connection.read(PairingTestService.encryptedUUID) == Array("secret".utf8))
        try await connection.write(Array("new".utf8), to: PairingTestService.encryptedUUID)
        #expect(hosts.service.secret == Array("new".utf8))
        await connection.disconnect()
        await hosts.close()
    }

    @Test func passkeyEntryGivesAnAuthenticatedLink() async throws {
        let board = PasskeyBoard()
        let hosts = try await PairingTestHosts.start(
            central: PairingPolicy(ioCapability: .keyboardOnly), peripheral: PairingPolicy(ioCapability: .displayOnly))
        defer { try? FileManager.default.removeItem(atPath: hosts.folder) }
        let shows = PromptAnswerer(hosts.peripheral) { prompt in
            if case let .displayPasskey(passkey) = prompt.kind { await board.show(passkey) }
        }
        let types = PromptAnswerer(hosts.central) { prompt in
            if case .enterPasskey = prompt.kind { try? await prompt.enter(passkey: await board.read()) }
        }
        let connection = try await hosts.connect()
        let level = try await connection.pair()
        #expect(level >= .authenticated)
        #expect(try await connection.read(PairingTestService.authenticatedUUID) == Array("pin".utf8))
        await connection.disconnect()
        await hosts.close()
        #expect(await types.asked == [.enterPasskey])
        let shown = await board.read()
        #expect(await shows.asked == [.displayPasskey(shown)])
    }

    @Test func aWrongPasskeyFailsWithOneLineSayingSo() async throws {
        let hosts = try await PairingTestHosts.start(
            central: PairingPolicy(ioCapability: .keyboardOnly), peripheral: PairingPolicy(ioCapability: .displayOnly))
        defer { try? FileManager.default.removeItem(atPath: hosts.folder) }
        let shows = PromptAnswerer(hosts.peripheral) { _ in }
        let types = PromptAnswerer(hosts.central) { prompt in
            // Whatever was shown, type a different number.
            if case .enterPasskey = prompt.kind { try? await prompt.enter(passkey: 1_000_000 - 1) }
        }
        let connection = try await hosts.connect()
        do {
            try await connection.pair()
            Issue.record("pairing with a wrong passkey succeeded")
        } catch let BluetideError.pairingFailed(error) {
            #expect(error.reason == .confirmValueFailed)
            #expect("\(BluetideError.pairingFailed(error))".contains("passkey did not match"))
        }
        #expect(await connection.securityLevel == .none)
        #expect(await hosts.central.bonds().isEmpty)
        await connection.disconnect()
        await hosts.close()
        _ = await (shows.asked, types.asked)
    }

    @Test func numericComparisonAsksBothSidesTheSameNumber() async throws {
        let policy = PairingPolicy(ioCapability: .displayYesNo)
        let hosts = try await PairingTestHosts.start(central: policy, peripheral: policy)
        defer { try? FileManager.default.removeItem(atPath: hosts.folder) }
        let confirm: @Sendable (PairingPrompt) async -> Void = { prompt in await prompt.confirm(true) }
        let peripheralSide = PromptAnswerer(hosts.peripheral, answer: confirm)
        let centralSide = PromptAnswerer(hosts.central, answer: confirm)
        let connection = try await hosts.connect()
        #expect(try await connection.pair() == .authenticatedSecureConnections)
        await connection.disconnect()
        await hosts.close()
        let asked = await centralSide.asked
        #expect(asked.count == 1)
        #expect(await peripheralSide.asked == asked)
        if case .confirmNumber = asked.first {} else { Issue.record("expected a number to confirm, got \(asked)") }
    }

    @Test func aPeripheralAsksForSecurityAndTheCentralPairs() async throws {
        let hosts = try await PairingTestHosts.start(central: .justWorks, peripheral: .justWorks)
        defer { try? FileManager.default.removeItem(atPath: hosts.folder) }
        var incoming = hosts.peripheral.peripheral.connections.makeAsyncIterator()
        let connection = try await hosts.connect()
        let central = try #require(await incoming.next())
        #expect(try await central.requestSecurity() == .encrypted)
        #expect(await central.securityLevel() == .encrypted)
        await connection.disconnect()
        await hosts.close()
    }

    @Test func aBondedReconnectEncryptsFromTheBondFilesWithoutPrompts() async throws {
        let folder = PairingTestHosts.newFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let passkeyCentral = PairingPolicy(ioCapability: .keyboardOnly)
        let passkeyPeripheral = PairingPolicy(ioCapability: .displayOnly)
        do {
            let board = PasskeyBoard()
            let hosts = try await PairingTestHosts.start(central: passkeyCentral, peripheral: passkeyPeripheral, folder: folder)
            let shows = PromptAnswerer(hosts.peripheral) { prompt in
                if case let .displayPasskey(passkey) = prompt.kind { await board.show(passkey) }
            }
            let types = PromptAnswerer(hosts.central) { prompt in
                if case .enterPasskey = prompt.kind { try? await prompt.enter(passkey: await board.read()) }
            }
            let connection = try await hosts.connect()
            #expect(try await connection.pair() >= .authenticated)
            await connection.disconnect()
            await hosts.close()
            _ = await (shows.asked, types.asked)
        }
        // New hosts (new processes, as far as the hosts know) reading the same bond files.
        let records = try BondRecords(path: folder + "/central.json").list()
        #expect(records.map(\.address) == [PairingTestHosts.peripheralAddress])
        #expect(records.first?.securityLevel ?? .none >= .authenticated)
        let hosts = try await PairingTestHosts.start(central: passkeyCentral, peripheral: passkeyPeripheral, folder: folder)
        let centralPrompts = PromptAnswerer(hosts.central) { prompt in await prompt.cancel() }
        let peripheralPrompts = PromptAnswerer(hosts.peripheral) { prompt in await prompt.cancel() }
        let connection = try await hosts.connect()
        // The bond's keys were authenticated: the authenticated value reads without pairing.
        #expect(try await connection.read(PairingTestService.authenticatedUUID) == Array("pin".utf8))
        #expect(await connection.securityLevel >= .authenticated)
        await connection.disconnect()
        await hosts.close()
        #expect(await centralPrompts.asked.isEmpty)
        #expect(await peripheralPrompts.asked.isEmpty)
    }

    @Test func bondRecordsListAndRemoveWithoutAController() async throws {
        let hosts = try await PairingTestHosts.start(central: .justWorks, peripheral: .justWorks)
        defer { try? FileManager.default.removeItem(atPath: hosts.folder) }
        let connection = try await hosts.connect()
        try await connection.pair()
        await connection.disconnect()
        await hosts.close()
        let file = BondRecords(path: hosts.folder + "/central.json")
        let listed = try file.list()
        #expect(listed.count == 1)
        #expect(listed.first?.address == PairingTestHosts.peripheralAddress)
        #expect(listed.first?.secureConnections == true)
        #expect(listed.first?.keySize == 16)
        #expect("\(listed[0])".hasPrefix("\(PairingTestHosts.peripheralAddress): encrypted"))
        #expect(try file.remove(.randomStatic(0x0000_0000_0001)) == nil)
        #expect(try file.remove(PairingTestHosts.peripheralAddress)?.address == PairingTestHosts.peripheralAddress)
        #expect(try file.list().isEmpty)
        // A file that does not exist holds no bonds; a malformed one says so.
        #expect(try BondRecords(path: hosts.folder + "/none.json").list().isEmpty)
        try Data("{\"bonds\": 3}".utf8).write(to: URL(fileURLWithPath: hosts.folder + "/bad.json"))
        #expect(throws: BluetideError.self) { try BondRecords(path: hosts.folder + "/bad.json").list() }
    }

    @Test func promptsReadAsOneLineWithSixDigits() {
        #expect(PairingPrompt.sixDigits(4711) == "004711")
        #expect(PairingPrompt.sixDigits(999_999) == "999999")
        #expect(PairingPrompt.sixDigits(0) == "000000")
    }

    @Test func characteristicSecurityMapsOntoThePermissions() {
        let encrypted = Characteristic(wrappedValue: [UInt8](), BluetoothUUID(0x2A00), [.read, .write], security: .encrypted)
        #expect(encrypted.permissions == [.readable, .writable, .readEncrypted, .writeEncrypted])
        let authenticated = Characteristic(wrappedValue: [UInt8](), BluetoothUUID(0x2A00), [.read], security: .authenticated)
        #expect(authenticated.permissions == [.readable, .readAuthenticated])
        let open = Characteristic(wrappedValue: [UInt8](), BluetoothUUID(0x2A00), [.read])
        #expect(open.permissions == [.readable])
    }
}
