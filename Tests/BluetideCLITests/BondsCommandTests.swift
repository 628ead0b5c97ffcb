import BluetideCore
import BluetideHost
import BluetideTestSupport
import Foundation
import Testing

/// `bluetide bonds list|remove` on a bond file, and `--pairing`'s usage errors.
@Suite(.timeLimit(.minutes(2))) struct BondsCommandTests {
    static let device = BluetoothAddress.randomStatic(0x1234_5678_0404)

    /// A bond file with one Secure Connections bond, in a fresh folder.
    static func bondFile() throws -> String {
        let folder = NSTemporaryDirectory() + "bluetide-bonds-cli-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/bonds.json"
        let keys = SMPKeySet(longTermKey: SMPLongTermKey(key: Array(repeating: 0x11, count: 16)))
        var store = BondStore()
        store.save(Bond(address: device, securityLevel: .authenticatedSecureConnections, secureConnections: true, keySize: 16, peerKeys: keys, localKeys: keys))
        try BondFile(path: path).save(store)
        return path
    }

    @Test func listsAndRemovesBonds() async throws {
        let path = try Self.bondFile()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let listed = try await BluetideExecutable.run(["bonds", "list", "--bonds-file", path])
        #expect(listed.status == 0)
        #expect(listed.stdout == ["\(Self.device): encrypted and authenticated (Secure Connections, 128-bit key), LE Secure Connections, 16-octet key"])
        let json = try await BluetideExecutable.run(["bonds", "list", "--bonds-file", path, "--json"])
        #expect(json.stdout.count == 1)
        let record = try #require(json.stdout.first)
        #expect(record.contains("\"type\":\"bond\""))
        #expect(record.contains("\"securityLevel\":4"))
        #expect(record.contains("\"address\":\"\(Self.device)\""))
        let missing = try await BluetideExecutable.run(["bonds", "remove", "C0:00:00:00:00:09/R", "--bonds-file", path])
        #expect(missing.status == 1)
        #expect(missing.stderr.joined().contains("no bond with C0:00:00:00:00:09/R"))
        let removed = try await BluetideExecutable.run(["bonds", "remove", "\(Self.device)", "--bonds-file", path])
        #expect(removed.status == 0)
        #expect(removed.stdout == ["removed the bond with \(Self.device): it must pair again"])
        let empty = try await BluetideExecutable.run(["bonds", "list", "--bonds-file", path])
        #expect(empty.stdout == ["no bonds in \(path)"])
    }

    @Test func aMalformedBondFileOrAddressIsOneLineSayingWhat() async throws {
        let folder = NSTemporaryDirectory() + "bluetide-bonds-cli-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data("{\"bonds\": 3}".utf8).write(to: URL(fileURLWithPath: folder + "/bad.json"))
        let bad = try await BluetideExecutable.run(["bonds", "list", "--bonds-file", folder + "/bad.json"])
        #expect(bad.status == 1)
        #expect(bad.stderr.count == 1)
        #expect(bad.stderr.first?.contains("bad.json") == true)
        let address = try await BluetideExecutable.run(["bonds", "remove", "nonsense", "--bonds-file", folder + "/bad.json"])
        #expect(address.status == 2)
        #expect(address.stderr.joined().contains("\"nonsense\" is not an address"))
    }

    @Test func aBadPairingModeIsAUsageErrorNamingTheForms() async throws {
        let run = try await BluetideExecutable.run(["read", "--pairing", "passkey:12", "--emulate", "battery", "x", "2A19"])
        #expect(run.status != 0)
        #expect(run.stderr.joined().contains("expected just-works, passkey:NNNNNN"))
    }
}
