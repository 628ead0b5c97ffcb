/// LE legacy pairing phase 2 (Core Vol 3 Part H 2.3.5.5): confirm values from c1 with the TK
/// (zero for Just Works, the passkey for Passkey Entry), then the STK from s1.
extension SMPPairing {
    /// The legacy c1 confirm of `rand` for this pairing's PDUs and addresses.
    private func legacyConfirm(_ session: SMPSession, rand: [UInt8]) -> [UInt8] {
        SMPCrypto.c1(
            key: session.passkeyValue, rand: rand, pairingRequest: SMPPDU.pairingRequest(session.request).bytes,
            pairingResponse: SMPPDU.pairingResponse(session.response ?? session.request).bytes,
            initiatorAddress: initiatorAddressBytes, responderAddress: responderAddressBytes)
    }

    /// Sends our confirm once the TK is known (the responder also waits for the initiator's).
    mutating func advanceLegacyConfirm(now: Duration, into out: inout [SMPOutput]) {
        guard var session, !session.sentConfirm, !session.awaitsPasskey, session.passkey != nil else { return }
        if role == .peripheral && session.peerConfirm == nil { return }
        session.localRandom = randomBytes(16)
        session.sentConfirm = true
        self.session = session
        send(.pairingConfirm(legacyConfirm(session, rand: session.localRandom)), now: now, into: &out)
        if role == .peripheral { phase = .random }
    }

    /// Mconfirm (responder) or Sconfirm (initiator) arrived.
    mutating func receiveLegacyConfirm(_ value: [UInt8], now: Duration, into out: inout [SMPOutput]) {
        guard var session else { return }
        if role == .central && !session.sentConfirm { return refuseUnexpected(now: now, into: &out) }
        session.peerConfirm = value
        self.session = session
        if role == .central {
            phase = .random
            send(.pairingRandom(session.localRandom), now: now, into: &out)
        } else {
            advanceLegacyConfirm(now: now, into: &out)
        }
    }

    /// Mrand (responder) or Srand (initiator) arrived: check it against the confirm, then the STK.
    mutating func receiveLegacyRandom(_ value: [UInt8], now: Duration, into out: inout [SMPOutput]) {
        guard var session, let peerConfirm = session.peerConfirm else { return refuseUnexpected(now: now, into: &out) }
        guard legacyConfirm(session, rand: value) == peerConfirm else {
            return fail(.confirmValueFailed, now: now, into: &out)
        }
        let (initiatorRandom, responderRandom) = role == .central ? (session.localRandom, value) : (value, session.localRandom)
        let stk = SMPCrypto.s1(key: session.passkeyValue, r1: responderRandom, r2: initiatorRandom)
        session.encryptionKey = session.shortened(stk)
        self.session = session
        phase = .encrypting
        if role == .central {
            out.append(.startEncryption(SMPLongTermKey(key: session.shortened(stk))))
        } else {
            send(.pairingRandom(session.localRandom), now: now, into: &out)
        }
    }
}
