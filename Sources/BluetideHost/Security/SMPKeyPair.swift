import Crypto

/// A P-256 public key as SMP carries it: X and Y, 32 octets each, least significant octet first.
public struct SMPPublicKey: Sendable, Hashable {
    /// The X coordinate, least significant octet first.
    public var x: [UInt8]
    /// The Y coordinate, least significant octet first.
    public var y: [UInt8]

    public init(x: [UInt8], y: [UInt8]) {
        self.x = x
        self.y = y
    }

    /// The public key of the Secure Connections debug key pair (Core Vol 3 Part H 2.3.5.6.1): a
    /// peer using it lets anyone with an air sniffer decrypt the link.
    public static let debug = SMPPublicKey(
        x: Array(SMPKeyPair.bigEndian("20b003d2f297be2c5e2c83a7e9f9a5b9eff49111acf4fddbcc0301480e359de6").reversed()),
        y: Array(SMPKeyPair.bigEndian("dc809c49652aeb6d63329abf5a52155c766345c28fed3024741c8ed01589d28b").reversed()))
}

/// Why a Diffie-Hellman key could not be computed.
public enum SMPKeyAgreementError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The peer's public key is not a point on P-256 (or has the wrong length).
    case publicKeyNotOnCurve
    /// The private key octets are not a valid P-256 scalar.
    case invalidPrivateKey

    public var description: String {
        switch self {
        case .publicKeyNotOnCurve: return "the peer's public key is not a point on the P-256 curve"
        case .invalidPrivateKey: return "the private key is not a valid P-256 scalar"
        }
    }
}

/// An elliptic-curve Diffie-Hellman key pair on P-256 for LE Secure Connections, from
/// swift-crypto's `P256.KeyAgreement`.
public struct SMPKeyPair: Sendable {
    private let privateKey: P256.KeyAgreement.PrivateKey
    /// The public key to send in Pairing Public Key.
    public let publicKey: SMPPublicKey

    /// A fresh key pair from the system's secure random source.
    public init() {
        self.init(privateKey: P256.KeyAgreement.PrivateKey())
    }

    /// A key pair whose private key is drawn from `generator` (a seeded ``HostRandomness`` makes
    /// the pairing reproducible; the system's generator is as good as ``init()``'s).
    public init(using generator: inout some RandomNumberGenerator) {
        while true {
            var raw: [UInt8] = []
            raw.reserveCapacity(32)
            for _ in 0..<4 {
                var word = generator.next()
                for _ in 0..<8 {
                    raw.append(UInt8(truncatingIfNeeded: word))
                    word >>= 8
                }
            }
            // A draw of 0 or at least the curve's order is not a valid scalar (about 2^-32): draw again.
            if let key = try? P256.KeyAgreement.PrivateKey(rawRepresentation: raw) {
                self.init(privateKey: key)
                return
            }
        }
    }

    /// The key pair for a private key given most significant octet first (32 octets), as the
    /// specification's sample data writes it.
    public init(privateKeyBigEndian raw: [UInt8]) throws(SMPKeyAgreementError) {
        guard let key = try? P256.KeyAgreement.PrivateKey(rawRepresentation: raw) else { throw .invalidPrivateKey }
        self.init(privateKey: key)
    }

    private init(privateKey: P256.KeyAgreement.PrivateKey) {
        self.privateKey = privateKey
        let raw = Array(privateKey.publicKey.rawRepresentation)  // X || Y, most significant first
        publicKey = SMPPublicKey(x: Array(raw[0..<32].reversed()), y: Array(raw[32..<64].reversed()))
    }

    /// The debug key pair (Core Vol 3 Part H 2.3.5.6.1), for sniffing one's own pairing only.
    public static var debug: SMPKeyPair {
        // The published scalar is valid; the initializer only throws for invalid ones.
        try! SMPKeyPair(privateKeyBigEndian: bigEndian("3f49f6d4a3c55f3874c9b3e3d2103f504aff607beb40b7995899b8a6cd3c1abd"))
    }

    /// The DHKey (the X coordinate of the shared point, least significant octet first) with the
    /// peer's public key. Throws when the peer's key is not on the curve.
    public func dhKey(with peer: SMPPublicKey) throws(SMPKeyAgreementError) -> [UInt8] {
        guard peer.x.count == 32, peer.y.count == 32,
            let peerKey = try? P256.KeyAgreement.PublicKey(rawRepresentation: Array(peer.x.reversed()) + Array(peer.y.reversed())),
            let secret = try? privateKey.sharedSecretFromKeyAgreement(with: peerKey)
        else { throw .publicKeyNotOnCurve }
        return secret.withUnsafeBytes { Array($0.reversed()) }
    }

    static func bigEndian(_ hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            out.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        return out
    }
}
