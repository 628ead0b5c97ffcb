import BluetideBase
import Foundation
import Testing

@testable import BluetideHost

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct BondStoreTests {
    static let irk = wire("ec0234a3 57c8ad05 341010a6 0a397d9b")

    static func bond(_ value: UInt64, irk: [UInt8]? = nil, level: SMPSecurityLevel = .authenticatedSecureConnections) -> Bond {
        let ltk = SMPLongTermKey(key: (0..<16).map { UInt8($0) ^ UInt8(value & 0xFF) }, ediv: 0xBEEF, random: 0x0123_4567_89AB_CDEF)
        return Bond(
            address: BluetoothAddress(value: value, type: .public), securityLevel: level, secureConnections: true, keySize: 16,
            peerKeys: SMPKeySet(longTermKey: ltk, identityResolvingKey: irk, identityAddress: BluetoothAddress(value: value), signatureKey: [UInt8](repeating: 7, count: 16)),
            localKeys: SMPKeySet(longTermKey: SMPLongTermKey(key: [UInt8](repeating: 9, count: 16), ediv: 1, random: 2)))
    }

    /// The spec's ah sample as an address: prand 0x708194 in the top 24 bits, hash 0x0dfbaa below.
    @Test func sampleResolvablePrivateAddressResolves() {
        let rpa = BluetoothAddress(value: 0x7081_940D_FBAA, type: .random)
        #expect(rpa.randomKind == .resolvablePrivate)
        #expect(SMPCrypto.resolves(rpa, identityResolvingKey: Self.irk))
        #expect(!SMPCrypto.resolves(BluetoothAddress(value: 0x7081_940D_FBAB, type: .random), identityResolvingKey: Self.irk))
    }

    @Test func bondsAreFoundByIdentityOrPrivateAddress() {
        var store = BondStore(bonds: [Self.bond(0x0011_2233_4455, irk: Self.irk), Self.bond(0x0011_2233_4466)])
        #expect(store.bonds.count == 2)
        let rpa = SMPCrypto.resolvablePrivateAddress(identityResolvingKey: Self.irk, prand: 0x12_3456)
        #expect(rpa.randomKind == .resolvablePrivate)
        #expect(store.bond(for: rpa)?.address == BluetoothAddress(value: 0x0011_2233_4455))
        let other = SMPCrypto.resolvablePrivateAddress(identityResolvingKey: [UInt8](repeating: 1, count: 16), prand: 0x12_3456)
        #expect(store.bond(for: other) == nil)
        #expect(store.bond(for: BluetoothAddress(value: 0x0011_2233_4466))?.peerKeys.identityResolvingKey == nil)
        // A new bond with the same peer replaces the old one.
        store.save(Self.bond(0x0011_2233_4455, irk: Self.irk, level: .encrypted))
        #expect(store.bonds.count == 2)
        #expect(store.bond(for: rpa)?.securityLevel == .encrypted)
        // Removing by a private address removes the identity's bond.
        #expect(store.remove(rpa)?.address == BluetoothAddress(value: 0x0011_2233_4455))
        #expect(store.remove(rpa) == nil)
        #expect(store.bonds.map(\.address) == [BluetoothAddress(value: 0x0011_2233_4466)])
    }

    @Test func keysForReconnecting() {
        let bond = Self.bond(0x0011_2233_4455)
        #expect(bond.centralEncryptionKey?.ediv == 0xBEEF)
        #expect(bond.peripheralKey(ediv: 1, random: 2)?.key == [UInt8](repeating: 9, count: 16))
        #expect(bond.peripheralKey(ediv: 1, random: 3) == nil)
    }

    @Test func bondFromPairingIsFiledUnderTheIdentityAddress() {
        let identity = BluetoothAddress(value: 0xC0DE_C0DE_C0DE, type: .random)
        let connection = BluetoothAddress(value: 0x4000_0000_0001, type: .random)
        let result = SMPPairingResult(
            method: .justWorks, secureConnections: true, securityLevel: .encrypted, keySize: 16, bonded: true,
            localKeys: SMPKeySet(), peerKeys: SMPKeySet(identityAddress: identity), peerUsedDebugKey: false)
        #expect(Bond(pairing: result, peerAddress: connection).address == identity)
        var anonymous = result
        anonymous.peerKeys.identityAddress = nil
        #expect(Bond(pairing: anonymous, peerAddress: connection).address == connection)
    }
}

@Suite struct BondFileTests {
    static func temporaryFolder() -> String {
        let path = NSTemporaryDirectory() + "bluetide-bonds-\(UInt64.random(in: 0 ... .max))"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static let store = BondStore(
        localIdentity: SMPIdentity(identityResolvingKey: [UInt8](repeating: 0xAB, count: 16), address: BluetoothAddress(value: 0xC1C2_C3C4_C5C6, type: .random)),
        bonds: [BondStoreTests.bond(0x0011_2233_4455, irk: BondStoreTests.irk), BondStoreTests.bond(0x0011_2233_4466, level: .encrypted)])

    @Test func missingFileIsAnEmptyStore() throws {
        let folder = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(try BondFile(path: folder + "/bonds.json").load() == BondStore())
    }

    @Test func roundTripWithMode0600() throws {
        let folder = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = BondFile(path: folder + "/sub/bonds.json")
        try file.save(Self.store)
        #expect(try file.load() == Self.store)
        var info = stat()
        #expect(stat(file.path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(!FileManager.default.fileExists(atPath: file.temporaryPath))
        let text = try String(contentsOfFile: file.path, encoding: .utf8)
        #expect(text.contains("\"addressType\" : \"public\""))
        #expect(text.contains("\"rand\" : \"0123456789abcdef\""))
    }

    /// A process killed in the middle of a write leaves a torn temporary file: the stored bonds
    /// are the previous ones, and the next write goes through.
    @Test func tornTemporaryFileLeavesTheOldBonds() throws {
        let folder = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = BondFile(path: folder + "/bonds.json")
        try file.save(Self.store)
        let torn = Array(try Data(contentsOf: URL(fileURLWithPath: file.path))).prefix(57)
        try Data(torn).write(to: URL(fileURLWithPath: file.temporaryPath))
        chmod(file.temporaryPath, 0o644)
        #expect(try file.load() == Self.store)
        var fewer = Self.store
        fewer.remove(BluetoothAddress(value: 0x0011_2233_4466))
        try file.save(fewer)
        #expect(try file.load() == fewer)
        var info = stat()
        #expect(stat(file.path, &info) == 0 && info.st_mode & 0o777 == 0o600)
    }

    @Test func corruptFilesAreNamedWithTheField() throws {
        let folder = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = BondFile(path: folder + "/bonds.json")
        try file.save(Self.store)
        let good = try String(contentsOfFile: file.path, encoding: .utf8)

        try good.replacingOccurrences(of: "\"securityLevel\" : 4", with: "\"securityLevel\" : 9").write(toFile: file.path, atomically: false, encoding: .utf8)
        #expect(throws: BondFileError(path: file.path, reason: "bonds[0].securityLevel: expected 1…4, found 9; fix or remove the file (its devices must pair again)")) {
            try file.load()
        }
        try good.replacingOccurrences(of: "\"public\"", with: "\"publik\"").write(toFile: file.path, atomically: false, encoding: .utf8)
        #expect(throws: BondFileError(path: file.path, reason: "bonds[0].address.addressType: expected \"public\" or \"random\", found \"publik\"; fix or remove the file (its devices must pair again)")) {
            try file.load()
        }
        try String(good.prefix(40)).write(toFile: file.path, atomically: false, encoding: .utf8)
        do {
            _ = try file.load()
            Issue.record("a truncated file loaded")
        } catch {
            #expect(error.description.hasPrefix("bond file \(file.path): not a bond file"))
        }
    }
}
