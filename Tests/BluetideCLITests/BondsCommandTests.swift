import BluetideBase
import BluetideHost
import BluetideTestSupport
import Foundation
import Testing
@testable import BluetideCommands

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

    /// The default bond file follows the XDG rules: `$XDG_CONFIG_HOME` when absolute, else
    /// `$HOME/.config` — never a home directory from elsewhere.
    @Test func theDefaultBondFileIsInTheUsersConfigDirectory() {
        #expect(BondsOptions.defaultPath(environment: ["XDG_CONFIG_HOME": "/tmp/cfg", "HOME": "/home/ana"]) == "/tmp/cfg/bluetide/bonds.json")
        #expect(BondsOptions.defaultPath(environment: ["HOME": "/home/ana"]) == "/home/ana/.config/bluetide/bonds.json")
        #expect(BondsOptions.defaultPath(environment: ["XDG_CONFIG_HOME": "", "HOME": "/home/ana/"]) == "/home/ana/.config/bluetide/bonds.json")
        #expect(BondsOptions.defaultPath(environment: ["XDG_CONFIG_HOME": "relative", "HOME": "/home/ana"]) == "/home/ana/.config/bluetide/bonds.json")
        // Device commands use it unless told otherwise; with --emulate they keep no bonds.
        let plain = try? DeviceSessionOptions.parse([])
        #expect(plain?.bondFilePath == BondsOptions.defaultPath)
        #expect((try? DeviceSessionOptions.parse(["--bonds-file", "/tmp/b.json"]))?.bondFilePath == "/tmp/b.json")
        #expect((try? DeviceSessionOptions.parse(["--emulate", "heart-rate"]))?.bondFilePath == nil)
        #expect((try? DeviceSessionOptions.parse(["--emulate", "heart-rate", "--bonds-file", "/tmp/b.json"]))?.bondFilePath == "/tmp/b.json")
    }

    /// `bonds list` and `bonds remove` without --bonds-file read `$XDG_CONFIG_HOME/bluetide/bonds.json`,
    /// else `$HOME/.config/bluetide/bonds.json`, as the process's environment says.
    @Test func bondsListReadsTheFileTheEnvironmentNames() async throws {
        let path = try Self.bondFile()
        let folder = (path as NSString).deletingLastPathComponent
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // As XDG_CONFIG_HOME: FOLDER/bluetide/bonds.json.
        try FileManager.default.createDirectory(atPath: folder + "/xdg/bluetide", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: path, toPath: folder + "/xdg/bluetide/bonds.json")
        let viaXDG = try await BluetideExecutable.run(["bonds", "list"], environment: ["XDG_CONFIG_HOME": folder + "/xdg", "HOME": folder + "/nowhere"])
        #expect(viaXDG.status == 0, "\(viaXDG.stderr)")
        #expect(viaXDG.stdout.first?.hasPrefix("\(Self.device): ") == true, "\(viaXDG.stdout)")
        // As HOME, XDG_CONFIG_HOME unset: FOLDER/home/.config/bluetide/bonds.json.
        try FileManager.default.createDirectory(atPath: folder + "/home/.config/bluetide", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: path, toPath: folder + "/home/.config/bluetide/bonds.json")
        let viaHome = try await BluetideExecutable.run(["bonds", "list"], environment: ["XDG_CONFIG_HOME": "", "HOME": folder + "/home"])
        #expect(viaHome.stdout.first?.hasPrefix("\(Self.device): ") == true, "\(viaHome.stdout) \(viaHome.stderr)")
        let removed = try await BluetideExecutable.run(["bonds", "remove", "\(Self.device)"], environment: ["XDG_CONFIG_HOME": "", "HOME": folder + "/home"])
        #expect(removed.status == 0, "\(removed.stderr)")
        let empty = try await BluetideExecutable.run(["bonds", "list"], environment: ["XDG_CONFIG_HOME": "", "HOME": folder + "/home"])
        #expect(empty.stdout == ["no bonds in \(folder)/home/.config/bluetide/bonds.json"])
        // The XDG copy is untouched.
        #expect(try BondFile(path: folder + "/xdg/bluetide/bonds.json").load().bonds.count == 1)
    }

    /// Pairing in a device command keeps the bond in the default file without --bonds-file, and
    /// `bonds list` (same environment) shows it: a strap emulated in one process on linked
    /// virtual controllers, the shell pairing from another.
    @Test func pairingKeepsTheBondWhereBondsListLooks() async throws {
        let folder = NSTemporaryDirectory() + "bluetide-bonds-default-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let environment = ["XDG_CONFIG_HOME": folder]
        let timeout = BluetideExecutable.runTimeout
        let controllers = try BluetideExecutable.launch(
            ["controllers", "tcp-server:127.0.0.1:0", "tcp-server:127.0.0.1:0", "--json", "--exit-on-stdin-eof"], name: "controllers")
        var strap: BumbleProcess?
        do {
            let ready = try await controllers.firstJSON("type", "ready", timeout: timeout)
            let given = ready["ports"]?.array ?? []
            let ports = given.compactMap { $0.int }
            try #require(ports.count == 2)
            strap = try BluetideExecutable.launch(
                ["emulate", "heart-rate", "--transport", "tcp-client:127.0.0.1:\(ports[0])", "--name", "Bond Strap", "--json"], name: "strap")
            _ = try await strap?.firstLine(timeout: timeout, describing: "the strap advertising") { _ in true }
            let shell = try await BluetideExecutable.run(
                ["shell", "Bond Strap", "--transport", "tcp-client:127.0.0.1:\(ports[1])", "--timeout", "20"],
                stdin: "pair just-works\nquit\n", environment: environment)
            #expect(shell.status == 0, "\(shell.stdout) \(shell.stderr)")
            let file = folder + "/bluetide/bonds.json"
            #expect(shell.stdout.contains { $0.contains("bonded (kept in \(file))") }, "\(shell.stdout)")
            let stored = try BondFile(path: file).load()
            #expect(stored.bonds.count == 1)
            let listed = try await BluetideExecutable.run(["bonds", "list"], environment: environment)
            #expect(listed.status == 0)
            let address = try #require(stored.bonds.first?.address)
            #expect(listed.stdout.count == 1 && listed.stdout.first?.hasPrefix("\(address): ") == true, "\(listed.stdout)")
        } catch {
            await strap?.stop()
            await controllers.stop()
            throw error
        }
        await strap?.stop()
        await controllers.closeStdin()
        _ = await controllers.waitForCompletion(timeout: timeout)
        await controllers.stop()
    }

    @Test func aBadPairingModeIsAUsageErrorNamingTheForms() async throws {
        let run = try await BluetideExecutable.run(["read", "--pairing", "passkey:12", "--emulate", "battery", "x", "2A19"])
        #expect(run.status != 0)
        #expect(run.stderr.joined().contains("expected just-works, passkey:NNNNNN"))
    }
}
