import BluetideHost

/// One stored bond as the application sees it: who, how secure, which keys.
public struct BondRecord: Sendable, Hashable, CustomStringConvertible {
    /// The device's identity address (public or static random).
    public let address: BluetoothAddress
    /// The security level a link encrypted with this bond gets.
    public let securityLevel: SecurityLevel
    /// Whether the keys come from LE Secure Connections (else LE legacy pairing).
    public let secureConnections: Bool
    /// The encryption key size, octets (7…16).
    public let keySize: Int
    /// Whether the device gave its IRK, so its resolvable private addresses are recognised.
    public let resolvesPrivateAddresses: Bool

    /// A bond as another stack keeps it (a backend's, e.g. bluetoothd's): see each property.
    public init(address: BluetoothAddress, securityLevel: SecurityLevel, secureConnections: Bool, keySize: Int, resolvesPrivateAddresses: Bool) {
        self.address = address
        self.securityLevel = securityLevel
        self.secureConnections = secureConnections
        self.keySize = keySize
        self.resolvesPrivateAddresses = resolvesPrivateAddresses
    }

    init(_ bond: Bond) {
        address = bond.address
        securityLevel = bond.securityLevel
        secureConnections = bond.secureConnections
        keySize = bond.keySize
        resolvesPrivateAddresses = bond.peerKeys.identityResolvingKey != nil
    }

    /// "ADDRESS: LEVEL, Secure Connections|legacy, N-octet key".
    public var description: String {
        "\(address): \(securityLevel), \(secureConnections ? "LE Secure Connections" : "LE legacy pairing"), \(keySize)-octet key"
    }
}

/// The bond file (JSON, mode 0600, replaced atomically) read and edited without a controller,
/// for tools such as `bluetide bonds`. A running ``Bluetooth`` with the same
/// ``Bluetooth/Configuration/bondFile`` rewrites the file when it bonds: edit while none runs.
public struct BondRecords: Sendable {
    /// The file's path.
    public let path: String

    /// The bonds in the file at `path` (which need not exist yet).
    public init(path: String) { self.path = path }

    /// The bonds, in the file's order; empty when the file does not exist. Throws
    /// ``BluetideError/invalidArgument(_:)`` naming the field when the file is malformed.
    public func list() throws -> [BondRecord] {
        try load().bonds.map(BondRecord.init)
    }

    /// Forgets the bond with `address` (identity or a resolvable private address of it) and
    /// rewrites the file; returns the removed bond, nil when there was none.
    @discardableResult
    public func remove(_ address: BluetoothAddress) throws -> BondRecord? {
        var store = try load()
        guard let removed = store.remove(address) else { return nil }
        do { try BondFile(path: path).save(store) } catch { throw BluetideError.invalidArgument("\(error)") }
        return BondRecord(removed)
    }

    private func load() throws -> BondStore {
        do { return try BondFile(path: path).load() } catch { throw BluetideError.invalidArgument("\(error)") }
    }
}
