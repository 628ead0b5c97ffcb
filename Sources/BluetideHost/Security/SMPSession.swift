/// What one pairing procedure has gathered so far. Owned by ``SMPPairing``.
struct SMPSession: Sendable {
    /// The Pairing Request (ours as central, the peer's as peripheral).
    var request: SMPPairingFeatures
    /// The Pairing Response, once exchanged.
    var response: SMPPairingFeatures?

    // Negotiated in the feature exchange.
    var method: SMPPairingMethod = .justWorks
    var secureConnections = false
    var keySize = 16
    var bonded = false

    // The user's part.
    /// The passkey (shown by us, or typed by the user), once known.
    var passkey: UInt32?
    /// True while waiting for the user to type the passkey.
    var awaitsPasskey = false
    /// The user's numeric comparison answer (nil: not given yet).
    var userConfirmed: Bool?

    // Confirm/random exchange (legacy, and each round of SC passkey entry).
    var localRandom: [UInt8] = []
    var peerConfirm: [UInt8]?
    var sentConfirm = false
    /// Secure Connections passkey entry: the round (0…19).
    var round = 0

    // Secure Connections.
    var keyPair: SMPKeyPair?
    var peerPublicKey: SMPPublicKey?
    var dhKey: [UInt8] = []
    var initiatorNonce: [UInt8] = []
    var responderNonce: [UInt8] = []
    var peerCheck: [UInt8]?
    var sentCheck = false
    /// (Initiator) the Eb the responder must send.
    var expectedResponderCheck: [UInt8]?
    var peerUsedDebugKey = false

    /// The STK (legacy) or LTK (Secure Connections) to encrypt the link with now.
    var encryptionKey: [UInt8]?

    // Key distribution.
    var localKeys = SMPKeySet()
    var peerKeys = SMPKeySet()
    /// Key PDUs still expected from the peer, in order.
    var pendingPeerKeys: [SMPCode] = []
    /// True once our keys are sent.
    var sentKeys = false

    init(request: SMPPairingFeatures) {
        self.request = request
    }

    /// Keys the initiator sends, as negotiated (EncKey means nothing with Secure Connections).
    var initiatorKeys: SMPKeyDistribution { distributed(response?.initiatorKeys ?? []) }
    /// Keys the responder sends, as negotiated.
    var responderKeys: SMPKeyDistribution { distributed(response?.responderKeys ?? []) }

    private func distributed(_ keys: SMPKeyDistribution) -> SMPKeyDistribution {
        var keys = keys.subtracting(.linkKey)
        if secureConnections { keys.remove(.encryptionKey) }
        return keys
    }

    /// The 128-bit value of the passkey for c1 and f6, least significant octet first.
    var passkeyValue: [UInt8] {
        let value = passkey ?? 0
        return [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF)] + [UInt8](repeating: 0, count: 13)
    }

    /// `key` with the octets past the negotiated key size zeroed (Core Vol 3 Part H 2.3.4).
    func shortened(_ key: [UInt8]) -> [UInt8] {
        key.enumerated().map { $0.offset < keySize ? $0.element : 0 }
    }
}
