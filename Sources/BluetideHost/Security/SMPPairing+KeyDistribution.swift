import BluetideBase

/// Phase 3 (Core Vol 3 Part H 2.4.3, 3.6): once the link is encrypted the responder sends its
/// keys, then the initiator sends its own; each side's keys go in the order EncKey (LTK, EDIV
/// and Rand; legacy only), IdKey (IRK, identity address), SignKey (CSRK).
extension SMPPairing {
    mutating func startKeyDistribution(now: Duration, into out: inout [SMPOutput]) {
        guard var session else { return }
        phase = .keyDistribution
        let ours = role == .central ? session.initiatorKeys : session.responderKeys
        let theirs = role == .central ? session.responderKeys : session.initiatorKeys
        session.pendingPeerKeys = Self.keyPDUs(theirs)
        if session.secureConnections, let ltk = session.encryptionKey {
            // Both sides hold the derived LTK; it is named by EDIV = 0 and Rand = 0.
            session.localKeys.longTermKey = SMPLongTermKey(key: ltk)
            session.peerKeys.longTermKey = SMPLongTermKey(key: ltk)
        }
        self.session = session
        if role == .peripheral { sendKeys(ours, now: now, into: &out) }
        finishDistributionIfDone(now: now, into: &out)
    }

    /// The key PDUs a distribution field stands for, in sending order.
    static func keyPDUs(_ keys: SMPKeyDistribution) -> [SMPCode] {
        var codes: [SMPCode] = []
        if keys.contains(.encryptionKey) { codes += [.encryptionInformation, .centralIdentification] }
        if keys.contains(.identityKey) { codes += [.identityInformation, .identityAddressInformation] }
        if keys.contains(.signingKey) { codes.append(.signingInformation) }
        return codes
    }

    private mutating func sendKeys(_ keys: SMPKeyDistribution, now: Duration, into out: inout [SMPOutput]) {
        guard var session else { return }
        if keys.contains(.encryptionKey) {
            let ltk = SMPLongTermKey(
                key: session.shortened(randomBytes(16)), ediv: UInt16.random(in: .min ... .max, using: &randomness),
                random: UInt64.random(in: .min ... .max, using: &randomness))
            session.localKeys.longTermKey = ltk
            send(.encryptionInformation(longTermKey: ltk.key), now: now, into: &out)
            send(.centralIdentification(ediv: ltk.ediv, random: ltk.random), now: now, into: &out)
        }
        if keys.contains(.identityKey), let identity = configuration.identity {
            session.localKeys.identityResolvingKey = identity.identityResolvingKey
            session.localKeys.identityAddress = identity.address
            send(.identityInformation(identityResolvingKey: identity.identityResolvingKey), now: now, into: &out)
            send(.identityAddressInformation(identity.address), now: now, into: &out)
        }
        if keys.contains(.signingKey) {
            let csrk = randomBytes(16)
            session.localKeys.signatureKey = csrk
            send(.signingInformation(signatureKey: csrk), now: now, into: &out)
        }
        session.sentKeys = true
        self.session = session
    }

    mutating func receiveKey(_ pdu: SMPPDU, now: Duration, into out: inout [SMPOutput]) {
        guard var session else { return }
        session.pendingPeerKeys.removeFirst()
        switch pdu {
        case let .encryptionInformation(key):
            session.peerKeys.longTermKey = SMPLongTermKey(key: key)
        case let .centralIdentification(ediv, random):
            session.peerKeys.longTermKey?.ediv = ediv
            session.peerKeys.longTermKey?.random = random
        case let .identityInformation(irk):
            session.peerKeys.identityResolvingKey = irk
        case let .identityAddressInformation(address):
            // An identity address is public or static random (Core Vol 6 Part B 1.3).
            guard address.type == .public || address.randomKind == .static else {
                return fail(.invalidParameters, now: now, into: &out)
            }
            session.peerKeys.identityAddress = address
        case let .signingInformation(csrk):
            session.peerKeys.signatureKey = csrk
        default:
            return
        }
        self.session = session
        finishDistributionIfDone(now: now, into: &out)
    }

    /// The initiator sends its keys after the responder's all arrived; both finish when nothing
    /// is pending either way.
    private mutating func finishDistributionIfDone(now: Duration, into out: inout [SMPOutput]) {
        guard let session, session.pendingPeerKeys.isEmpty else { return }
        if role == .central && !session.sentKeys {
            sendKeys(session.initiatorKeys, now: now, into: &out)
        }
        guard let done = self.session else { return }
        let level: SMPSecurityLevel =
            !done.method.isAuthenticated
            ? .encrypted : (done.secureConnections && done.keySize == 16 ? .authenticatedSecureConnections : .authenticated)
        let result = SMPPairingResult(
            method: done.method, secureConnections: done.secureConnections, securityLevel: level, keySize: done.keySize,
            bonded: done.bonded, localKeys: done.localKeys, peerKeys: done.peerKeys, peerUsedDebugKey: done.peerUsedDebugKey)
        self.session = nil
        phase = .idle
        deadline = nil
        attempts.recordSuccess()
        out.append(.completed(result))
    }
}
