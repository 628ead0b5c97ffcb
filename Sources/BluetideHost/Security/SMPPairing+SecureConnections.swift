/// LE Secure Connections phase 2 (Core Vol 3 Part H 2.3.5.6): P-256 public keys, then
/// authentication stage 1 (Just Works / Numeric Comparison: one confirm and the nonces;
/// Passkey Entry: twenty rounds, one per passkey bit), then stage 2 (f5 keys, f6 DHKey checks).
extension SMPPairing {
    /// PKa (initiator) or PKb (responder) as the function arguments need them.
    private func publicKeys(_ session: SMPSession) -> (initiator: [UInt8], responder: [UInt8]) {
        let local = session.keyPair?.publicKey.x ?? []
        let peer = session.peerPublicKey?.x ?? []
        return role == .central ? (local, peer) : (peer, local)
    }

    mutating func receivePublicKey(_ key: SMPPublicKey, now: Duration, into out: inout [SMPOutput]) {
        if role == .peripheral { sendPublicKey(now: now, into: &out) }
        guard var session, let keyPair = session.keyPair else { return }
        // A key off the curve, or a reflection of our own key, is refused (invalid parameters).
        guard key.x != keyPair.publicKey.x, let dhKey = try? keyPair.dhKey(with: key) else {
            return fail(.invalidParameters, now: now, into: &out)
        }
        session.peerPublicKey = key
        session.dhKey = dhKey
        session.peerUsedDebugKey = key == SMPPublicKey.debug
        self.session = session
        phase = .confirm
        if role == .peripheral, !isPasskeyEntry(session) {
            // Just Works / numeric comparison: the responder commits to its nonce first.
            let nonce = randomBytes(16)
            self.session?.responderNonce = nonce
            let keys = publicKeys(session)
            phase = .random
            send(.pairingConfirm(SMPCrypto.f4(u: keys.responder, v: keys.initiator, x: nonce, z: 0)), now: now, into: &out)
        } else {
            advance(now: now, into: &out)
        }
    }

    private func isPasskeyEntry(_ session: SMPSession) -> Bool {
        if case .passkeyEntry = session.method { return true }
        return false
    }

    /// The passkey bit of the current round as f4's Z: 0x80 | bit.
    private func roundBit(_ session: SMPSession) -> UInt8 {
        0x80 | UInt8(((session.passkey ?? 0) >> UInt32(session.round)) & 1)
    }

    /// Passkey entry: the initiator opens a round once the passkey is known; the responder
    /// answers once it has both the passkey and the initiator's confirm.
    mutating func advanceSecureConnectionsConfirm(now: Duration, into out: inout [SMPOutput]) {
        guard var session, isPasskeyEntry(session), !session.sentConfirm, !session.awaitsPasskey,
            session.passkey != nil
        else { return }
        if role == .peripheral && session.peerConfirm == nil { return }
        let nonce = randomBytes(16)
        let keys = publicKeys(session)
        let confirm: [UInt8]
        if role == .central {
            session.initiatorNonce = nonce
            confirm = SMPCrypto.f4(u: keys.initiator, v: keys.responder, x: nonce, z: roundBit(session))
        } else {
            session.responderNonce = nonce
            confirm = SMPCrypto.f4(u: keys.responder, v: keys.initiator, x: nonce, z: roundBit(session))
            phase = .random
        }
        session.sentConfirm = true
        self.session = session
        send(.pairingConfirm(confirm), now: now, into: &out)
    }

    mutating func receiveSecureConnectionsConfirm(_ value: [UInt8], now: Duration, into out: inout [SMPOutput]) {
        guard var session else { return }
        if role == .central && isPasskeyEntry(session) && !session.sentConfirm {
            return refuseUnexpected(now: now, into: &out)
        }
        session.peerConfirm = value
        if role == .central {
            if !isPasskeyEntry(session) { session.initiatorNonce = randomBytes(16) }
            self.session = session
            phase = .random
            send(.pairingRandom(session.initiatorNonce), now: now, into: &out)
        } else {
            self.session = session
            advanceSecureConnectionsConfirm(now: now, into: &out)
        }
    }

    mutating func receiveSecureConnectionsRandom(_ value: [UInt8], now: Duration, into out: inout [SMPOutput]) {
        guard var session else { return }
        let keys = publicKeys(session)
        let passkey = isPasskeyEntry(session)
        let z: UInt8 = passkey ? roundBit(session) : 0
        if role == .central {
            // Nb: check the responder's confirm Cb = f4(PKbx, PKax, Nb, z).
            guard let confirm = session.peerConfirm,
                SMPCrypto.f4(u: keys.responder, v: keys.initiator, x: value, z: z) == confirm
            else { return fail(.confirmValueFailed, now: now, into: &out) }
            session.responderNonce = value
        } else {
            // Na: in passkey entry, check Ca = f4(PKax, PKbx, Na, z), then reveal Nb.
            if passkey {
                guard let confirm = session.peerConfirm,
                    SMPCrypto.f4(u: keys.initiator, v: keys.responder, x: value, z: z) == confirm
                else { return fail(.confirmValueFailed, now: now, into: &out) }
            }
            session.initiatorNonce = value
            send(.pairingRandom(session.responderNonce), now: now, into: &out)
        }
        if passkey && session.round < 19 {
            session.round += 1
            session.sentConfirm = false
            session.peerConfirm = nil
            self.session = session
            phase = .confirm
            advance(now: now, into: &out)
            return
        }
        self.session = session
        phase = .dhKeyCheck
        if session.method == .numericComparison {
            let number = SMPCrypto.g2(u: keys.initiator, v: keys.responder, x: session.initiatorNonce, y: session.responderNonce)
            out.append(.prompt(.confirmNumber(number % 1_000_000)))
        }
        advance(now: now, into: &out)
    }

    /// Stage 2: the initiator sends Ea once the user agreed; the responder checks Ea, then sends Eb.
    mutating func advanceDHKeyCheck(now: Duration, into out: inout [SMPOutput]) {
        guard var session else { return }
        if session.method == .numericComparison && session.userConfirmed != true { return }
        if role == .peripheral && session.peerCheck == nil { return }
        if role == .central && session.sentCheck { return }
        let a = initiatorAddressBytes
        let b = responderAddressBytes
        let (macKey, ltk) = SMPCrypto.f5(w: session.dhKey, n1: session.initiatorNonce, n2: session.responderNonce, a1: a, a2: b)
        let r = isPasskeyEntry(session) ? session.passkeyValue : [UInt8](repeating: 0, count: 16)
        let responseFeatures = session.response ?? session.request
        let ea = SMPCrypto.f6(
            w: macKey, n1: session.initiatorNonce, n2: session.responderNonce, r: r, ioCap: session.request.ioCapField, a1: a, a2: b)
        let eb = SMPCrypto.f6(
            w: macKey, n1: session.responderNonce, n2: session.initiatorNonce, r: r, ioCap: responseFeatures.ioCapField, a1: b, a2: a)
        session.encryptionKey = session.shortened(ltk)
        if role == .central {
            session.sentCheck = true
            session.expectedResponderCheck = eb
            self.session = session
            send(.pairingDHKeyCheck(ea), now: now, into: &out)
        } else {
            guard session.peerCheck == ea else { return fail(.dhKeyCheckFailed, now: now, into: &out) }
            session.sentCheck = true
            self.session = session
            phase = .encrypting
            send(.pairingDHKeyCheck(eb), now: now, into: &out)
        }
    }

    /// A DHKey Check arrived: the responder keeps Ea until its user has answered; the initiator
    /// checks Eb (which may only follow its own Ea) and starts encryption with the LTK.
    mutating func receiveDHKeyCheck(_ value: [UInt8], now: Duration, into out: inout [SMPOutput]) {
        guard role == .central else {
            session?.peerCheck = value
            return advance(now: now, into: &out)
        }
        guard let expected = session?.expectedResponderCheck else { return refuseUnexpected(now: now, into: &out) }
        guard value == expected else { return fail(.dhKeyCheckFailed, now: now, into: &out) }
        guard let key = session?.encryptionKey else { return }
        phase = .encrypting
        out.append(.startEncryption(SMPLongTermKey(key: key)))
    }
}
