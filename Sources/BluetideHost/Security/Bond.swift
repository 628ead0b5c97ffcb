import BluetideBase

/// The keys kept for one bonded device, found by its identity address (or, for a device that
/// gave no identity, the address it paired from).
public struct Bond: Sendable, Hashable {
    /// The peer's identity address (public or static random), or its connection address.
    public var address: BluetoothAddress
    /// The security level the keys give.
    public var securityLevel: SMPSecurityLevel
    /// True when the keys come from LE Secure Connections.
    public var secureConnections: Bool
    /// The encryption key size in octets.
    public var keySize: Int
    /// Keys the peer sent (its LTK is what we encrypt with as central; its IRK resolves its addresses).
    public var peerKeys: SMPKeySet
    /// Keys we sent (our LTK answers the peer's LTK requests when we are peripheral).
    public var localKeys: SMPKeySet

    public init(
        address: BluetoothAddress, securityLevel: SMPSecurityLevel, secureConnections: Bool, keySize: Int,
        peerKeys: SMPKeySet, localKeys: SMPKeySet
    ) {
        self.address = address
        self.securityLevel = securityLevel
        self.secureConnections = secureConnections
        self.keySize = keySize
        self.peerKeys = peerKeys
        self.localKeys = localKeys
    }

    /// The bond a finished pairing with `peerAddress` makes: filed under the identity address
    /// the peer sent, else under `peerAddress`.
    public init(pairing result: SMPPairingResult, peerAddress: BluetoothAddress) {
        self.init(
            address: result.peerKeys.identityAddress ?? peerAddress, securityLevel: result.securityLevel,
            secureConnections: result.secureConnections, keySize: result.keySize, peerKeys: result.peerKeys,
            localKeys: result.localKeys)
    }

    /// The key to start encryption with when we are central (LE Enable Encryption).
    public var centralEncryptionKey: SMPLongTermKey? { peerKeys.longTermKey }

    /// The key answering an LE Long Term Key Request with this EDIV and Rand when we are peripheral.
    public func peripheralKey(ediv: UInt16, random: UInt64) -> SMPLongTermKey? {
        guard let key = localKeys.longTermKey, key.ediv == ediv, key.random == random else { return nil }
        return key
    }

    /// True when `address` is this peer: its bonded address, or a resolvable private address
    /// generated with its IRK.
    public func matches(_ address: BluetoothAddress) -> Bool {
        if address == self.address { return true }
        guard address.type == .random, address.randomKind == .resolvablePrivate, let irk = peerKeys.identityResolvingKey else {
            return false
        }
        return SMPCrypto.resolves(address, identityResolvingKey: irk)
    }
}

/// All bonds of this device, and this device's own identity. A value: ``BondFile`` loads and
/// saves it, the owner of the host's state holds it.
public struct BondStore: Sendable, Hashable {
    /// This device's IRK and identity address (sent to peers that ask for IdKey).
    public var localIdentity: SMPIdentity?
    /// The bonds, one per peer address, in the order they were made.
    public private(set) var bonds: [Bond]

    public init(localIdentity: SMPIdentity? = nil, bonds: [Bond] = []) {
        self.localIdentity = localIdentity
        self.bonds = []
        for bond in bonds { save(bond) }
    }

    /// Adds `bond`, replacing an older bond with the same peer (by address or resolved IRK).
    public mutating func save(_ bond: Bond) {
        bonds.removeAll { $0.address == bond.address || $0.matches(bond.address) }
        bonds.append(bond)
    }

    /// Removes the bond with `address` (identity address, or a private address its IRK resolves);
    /// returns it, or nil when there was none.
    @discardableResult
    public mutating func remove(_ address: BluetoothAddress) -> Bond? {
        guard let index = bonds.firstIndex(where: { $0.matches(address) }) else { return nil }
        return bonds.remove(at: index)
    }

    /// The bond for a device seen at `address`: exact identity match first, then resolution of a
    /// resolvable private address with each bonded IRK.
    public func bond(for address: BluetoothAddress) -> Bond? {
        bonds.first { $0.address == address } ?? bonds.first { $0.matches(address) }
    }
}

extension SMPCrypto {
    /// True when the resolvable private `address` was made with `identityResolvingKey`: its
    /// low 24 bits are ah(IRK, its high 24 bits) (Core Vol 6 Part B 1.3.2.3).
    public static func resolves(_ address: BluetoothAddress, identityResolvingKey: [UInt8]) -> Bool {
        let bytes = address.littleEndianBytes
        return ah(key: identityResolvingKey, prand: Array(bytes[3..<6])) == Array(bytes[0..<3])
    }

    /// A resolvable private address for `identityResolvingKey` with the 22 random bits of `prand`
    /// (the top two bits are set to 01 here).
    public static func resolvablePrivateAddress(identityResolvingKey: [UInt8], prand: UInt32) -> BluetoothAddress {
        let random = (prand & 0x3F_FFFF) | 0x40_0000
        let prandBytes = [UInt8(random & 0xFF), UInt8(random >> 8 & 0xFF), UInt8(random >> 16 & 0xFF)]
        let hash = ah(key: identityResolvingKey, prand: prandBytes)
        // The bytes are six by construction, so the address always decodes.
        let address = (try? BluetoothAddress(littleEndian: hash + prandBytes, type: .random))
        return address ?? BluetoothAddress(value: 0, type: .random)
    }
}
