import BluetideBase
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Why the bond file could not be read or written: the path and what is wrong, one line.
public struct BondFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file.
    public var path: String
    /// What went wrong.
    public var reason: String

    public var description: String { "bond file \(path): \(reason)" }
}

/// The bonds on disk: one JSON file, written with mode 0600 by atomic replacement (a temporary
/// file beside it, fsync, rename, fsync of the folder), so a crash or `kill -9` at any moment
/// leaves either the old file or the new one, never a torn one.
public struct BondFile: Sendable {
    /// The file's path.
    public let path: String

    public init(path: String) {
        self.path = path
    }

    /// The temporary file a write goes through (a leftover one is ignored and overwritten).
    public var temporaryPath: String { path + ".tmp" }

    /// The stored bonds; an empty store when the file does not exist yet.
    public func load() throws(BondFileError) -> BondStore {
        guard FileManager.default.fileExists(atPath: path) else { return BondStore() }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw BondFileError(path: path, reason: "cannot read it (\(error.localizedDescription)); check its permissions")
        }
        do {
            return try JSONDecoder().decode(BondFileContents.self, from: data).store
        } catch let error as BondFileContents.FieldError {
            throw BondFileError(path: path, reason: "\(error.field): \(error.reason); fix or remove the file (its devices must pair again)")
        } catch {
            throw BondFileError(path: path, reason: "not a bond file (\(error)); fix or remove it (its devices must pair again)")
        }
    }

    /// Replaces the file's contents with `store`, atomically.
    public func save(_ store: BondStore) throws(BondFileError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let bytes: [UInt8]
        do {
            bytes = Array(try encoder.encode(BondFileContents(store)))
        } catch {
            throw BondFileError(path: path, reason: "cannot encode the bonds (\(error))")
        }
        try writeAtomically(bytes)
    }

    private func writeAtomically(_ bytes: [UInt8]) throws(BondFileError) {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        let fd = open(temporaryPath, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure("cannot create \(temporaryPath)") }
        var closed = false
        defer { if !closed { close(fd) } }
        guard fchmod(fd, 0o600) == 0 else { throw failure("cannot set mode 0600 on \(temporaryPath)") }
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw failure("cannot write \(temporaryPath)") }
            written += n
        }
        guard fsync(fd) == 0 else { throw failure("cannot flush \(temporaryPath) to disk") }
        closed = true
        guard close(fd) == 0 else { throw failure("cannot close \(temporaryPath)") }
        guard rename(temporaryPath, path) == 0 else { throw failure("cannot replace the file with \(temporaryPath)") }
        let directoryFD = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            _ = fsync(directoryFD)
            close(directoryFD)
        }
    }

    private func failure(_ what: String) -> BondFileError {
        BondFileError(path: path, reason: "\(what): \(String(cString: strerror(errno)))")
    }
}

/// The JSON form of a ``BondStore`` (version 1): addresses as text with their type, keys as hex
/// (least significant octet first, as on the wire), Rand as 16 hex digits.
struct BondFileContents: Codable {
    var version: Int
    var localIdentity: IdentityJSON?
    var bonds: [BondJSON]

    struct FieldError: Error {
        var field: String
        var reason: String
    }

    struct AddressJSON: Codable {
        var address: String
        var addressType: String
    }

    struct IdentityJSON: Codable {
        var irk: String
        var address: AddressJSON
    }

    struct LongTermKeyJSON: Codable {
        var key: String
        var ediv: Int
        var rand: String
    }

    struct KeysJSON: Codable {
        var ltk: LongTermKeyJSON?
        var irk: String?
        var identityAddress: AddressJSON?
        var csrk: String?
    }

    struct BondJSON: Codable {
        var address: AddressJSON
        var securityLevel: Int
        var secureConnections: Bool
        var keySize: Int
        var peerKeys: KeysJSON
        var localKeys: KeysJSON
    }

    init(_ store: BondStore) {
        version = 1
        localIdentity = store.localIdentity.map { IdentityJSON(irk: $0.identityResolvingKey.hexString, address: Self.json($0.address)) }
        bonds = store.bonds.map { bond in
            BondJSON(
                address: Self.json(bond.address), securityLevel: bond.securityLevel.rawValue,
                secureConnections: bond.secureConnections, keySize: bond.keySize, peerKeys: Self.json(bond.peerKeys),
                localKeys: Self.json(bond.localKeys))
        }
    }

    var store: BondStore {
        get throws {
            guard version == 1 else { throw FieldError(field: "version", reason: "expected 1, found \(version)") }
            var identity: SMPIdentity?
            if let localIdentity {
                identity = SMPIdentity(
                    identityResolvingKey: try Self.key(localIdentity.irk, "localIdentity.irk"),
                    address: try Self.address(localIdentity.address, "localIdentity.address"))
            }
            var result: [Bond] = []
            for (index, bond) in bonds.enumerated() {
                let field = "bonds[\(index)]"
                guard let level = SMPSecurityLevel(rawValue: bond.securityLevel) else {
                    throw FieldError(field: "\(field).securityLevel", reason: "expected 1…4, found \(bond.securityLevel)")
                }
                guard (7...16).contains(bond.keySize) else {
                    throw FieldError(field: "\(field).keySize", reason: "expected 7…16, found \(bond.keySize)")
                }
                result.append(Bond(
                    address: try Self.address(bond.address, "\(field).address"), securityLevel: level,
                    secureConnections: bond.secureConnections, keySize: bond.keySize,
                    peerKeys: try Self.keys(bond.peerKeys, "\(field).peerKeys"),
                    localKeys: try Self.keys(bond.localKeys, "\(field).localKeys")))
            }
            return BondStore(localIdentity: identity, bonds: result)
        }
    }

    static func json(_ address: BluetoothAddress) -> AddressJSON {
        AddressJSON(address: address.string, addressType: address.type == .random ? "random" : "public")
    }

    static func json(_ keys: SMPKeySet) -> KeysJSON {
        KeysJSON(
            ltk: keys.longTermKey.map {
                let rand = String($0.random, radix: 16)
                return LongTermKeyJSON(key: $0.key.hexString, ediv: Int($0.ediv), rand: String(repeating: "0", count: 16 - rand.count) + rand)
            },
            irk: keys.identityResolvingKey?.hexString, identityAddress: keys.identityAddress.map { json($0) },
            csrk: keys.signatureKey?.hexString)
    }

    static func address(_ json: AddressJSON, _ field: String) throws -> BluetoothAddress {
        let type: BluetoothAddress.AddressType
        switch json.addressType {
        case "public": type = .public
        case "random": type = .random
        default: throw FieldError(field: "\(field).addressType", reason: "expected \"public\" or \"random\", found \"\(json.addressType)\"")
        }
        guard let address = try? BluetoothAddress(json.address, type: type) else {
            throw FieldError(field: "\(field).address", reason: "expected an address like C6:C5:C4:C3:C2:C1, found \"\(json.address)\"")
        }
        return address
    }

    static func key(_ hex: String, _ field: String) throws -> [UInt8] {
        guard let bytes = try? Hex.parse(hex), bytes.count == 16 else {
            throw FieldError(field: field, reason: "expected 32 hex digits, found \"\(hex)\"")
        }
        return bytes
    }

    static func keys(_ json: KeysJSON, _ field: String) throws -> SMPKeySet {
        var keys = SMPKeySet()
        if let ltk = json.ltk {
            guard (0...0xFFFF).contains(ltk.ediv) else {
                throw FieldError(field: "\(field).ltk.ediv", reason: "expected 0…65535, found \(ltk.ediv)")
            }
            guard ltk.rand.count == 16, let rand = UInt64(ltk.rand, radix: 16) else {
                throw FieldError(field: "\(field).ltk.rand", reason: "expected 16 hex digits, found \"\(ltk.rand)\"")
            }
            keys.longTermKey = SMPLongTermKey(key: try key(ltk.key, "\(field).ltk.key"), ediv: UInt16(ltk.ediv), random: rand)
        }
        keys.identityResolvingKey = try json.irk.map { try key($0, "\(field).irk") }
        keys.identityAddress = try json.identityAddress.map { try address($0, "\(field).identityAddress") }
        keys.signatureKey = try json.csrk.map { try key($0, "\(field).csrk") }
        return keys
    }
}
