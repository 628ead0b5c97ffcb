import BluetideBase

extension SMPPairing {
    /// Dispatches one decoded PDU to the step that expects it; anything else is refused.
    mutating func handle(_ pdu: SMPPDU, now: Duration, into out: inout [SMPOutput]) {
        switch pdu {
        case let .pairingFailed(reason):
            if isPairing { finishFailed(.peerFailure(reason), now: now, into: &out) }
        case .keypressNotification:
            break  // Progress of the peer's typing: nothing to do.
        case let .securityRequest(auth):
            guard role == .central else { return fail(.commandNotSupported, now: now, into: &out) }
            if !isPairing { out.append(.securityRequested(auth)) }
        case let .pairingRequest(features):
            guard role == .peripheral else { return fail(.commandNotSupported, now: now, into: &out) }
            receivePairingRequest(features, now: now, into: &out)
        case let .pairingResponse(features):
            guard role == .central else { return fail(.commandNotSupported, now: now, into: &out) }
            guard phase == .awaitingResponse else { return refuseUnexpected(now: now, into: &out) }
            receivePairingResponse(features, now: now, into: &out)
        case let .pairingPublicKey(key):
            guard phase == .publicKey, session?.secureConnections == true, session?.peerPublicKey == nil,
                role == .central ? session?.keyPair != nil : true
            else { return refuseUnexpected(now: now, into: &out) }
            receivePublicKey(key, now: now, into: &out)
        case let .pairingConfirm(value):
            guard phase == .confirm, session?.peerConfirm == nil else { return refuseUnexpected(now: now, into: &out) }
            receiveConfirm(value, now: now, into: &out)
        case let .pairingRandom(value):
            guard phase == .random else { return refuseUnexpected(now: now, into: &out) }
            receiveRandom(value, now: now, into: &out)
        case let .pairingDHKeyCheck(value):
            guard phase == .dhKeyCheck, session?.peerCheck == nil else { return refuseUnexpected(now: now, into: &out) }
            receiveDHKeyCheck(value, now: now, into: &out)
        case .encryptionInformation, .centralIdentification, .identityInformation, .identityAddressInformation,
            .signingInformation:
            guard phase == .keyDistribution, session?.pendingPeerKeys.first == pdu.code else {
                return refuseUnexpected(now: now, into: &out)
            }
            receiveKey(pdu, now: now, into: &out)
        }
    }

    private mutating func receiveConfirm(_ value: [UInt8], now: Duration, into out: inout [SMPOutput]) {
        if session?.secureConnections == true {
            receiveSecureConnectionsConfirm(value, now: now, into: &out)
        } else {
            receiveLegacyConfirm(value, now: now, into: &out)
        }
    }

    private mutating func receiveRandom(_ value: [UInt8], now: Duration, into out: inout [SMPOutput]) {
        if session?.secureConnections == true {
            receiveSecureConnectionsRandom(value, now: now, into: &out)
        } else {
            receiveLegacyRandom(value, now: now, into: &out)
        }
    }

    /// A PDU that does not belong at this point of the procedure.
    mutating func refuseUnexpected(now: Duration, into out: inout [SMPOutput]) {
        fail(.unspecifiedReason, now: now, into: &out)
    }

    // MARK: Phase 1: feature exchange

    private mutating func receivePairingRequest(_ request: SMPPairingFeatures, now: Duration, into out: inout [SMPOutput]) {
        guard phase == .idle || phase == .securityRequested else { return refuseUnexpected(now: now, into: &out) }
        guard attempts.allows(at: now) else {
            out.append(.send(.pairingFailed(.repeatedAttempts)))
            out.append(.failed(.localFailure(.repeatedAttempts)))
            return
        }
        let response = localFeatures(
            initiatorKeys: request.initiatorKeys.intersection(wantedKeys),
            responderKeys: request.responderKeys.intersection(configuration.distributableKeys))
        var session = SMPSession(request: request)
        session.response = response
        self.session = session
        phase = .awaitingResponse  // counts as pairing from here, so failures are recorded
        guard negotiate(now: now, into: &out) else { return }
        send(.pairingResponse(response), now: now, into: &out)
        beginAuthentication(now: now, into: &out)
    }

    private mutating func receivePairingResponse(_ response: SMPPairingFeatures, now: Duration, into out: inout [SMPOutput]) {
        guard var session else { return refuseUnexpected(now: now, into: &out) }
        // The responder may only narrow what we offered.
        guard response.initiatorKeys.isSubset(of: session.request.initiatorKeys),
            response.responderKeys.isSubset(of: session.request.responderKeys)
        else { return fail(.invalidParameters, now: now, into: &out) }
        session.response = response
        self.session = session
        guard negotiate(now: now, into: &out) else { return }
        beginAuthentication(now: now, into: &out)
    }

    /// Picks LE Secure Connections or legacy, the method and the key size; false after failing.
    private mutating func negotiate(now: Duration, into out: inout [SMPOutput]) -> Bool {
        guard var session, let response = session.response else { return false }
        let request = session.request
        let peer = role == .central ? response : request
        session.secureConnections =
            request.authRequirements.contains(.secureConnections) && response.authRequirements.contains(.secureConnections)
        if configuration.secureConnectionsOnly && !session.secureConnections {
            fail(.authenticationRequirements, now: now, into: &out)
            return false
        }
        // Bluetide has no OOB data to give: a peer claiming ours (SC), or OOB on both sides (legacy), cannot work.
        if session.secureConnections ? peer.oobDataPresent : (request.oobDataPresent && response.oobDataPresent) {
            fail(.oobNotAvailable, now: now, into: &out)
            return false
        }
        session.method = SMPPairingMethod.select(
            initiator: request, responder: response, secureConnections: session.secureConnections)
        if configuration.requiresMITM && !session.method.isAuthenticated {
            fail(.authenticationRequirements, now: now, into: &out)
            return false
        }
        session.keySize = Int(min(request.maximumKeySize, response.maximumKeySize))
        if session.keySize < Int(configuration.minimumKeySize) {
            fail(.encryptionKeySize, now: now, into: &out)
            return false
        }
        session.bonded = request.authRequirements.contains(.bonding) && response.authRequirements.contains(.bonding)
        self.session = session
        return true
    }

    /// After the feature exchange: prompts for the passkey method, then the first PDUs.
    private mutating func beginAuthentication(now: Duration, into out: inout [SMPOutput]) {
        guard var session else { return }
        if case let .passkeyEntry(entry) = session.method {
            let weDisplay: Bool
            switch entry {
            case .initiatorDisplays: weDisplay = role == .central
            case .responderDisplays: weDisplay = role == .peripheral
            case .bothInput: weDisplay = false
            }
            if weDisplay {
                let passkey = UInt32.random(in: 0...999_999, using: &randomness)
                session.passkey = passkey
                out.append(.prompt(.displayPasskey(passkey)))
            } else {
                session.awaitsPasskey = true
                out.append(.prompt(.enterPasskey))
            }
        } else {
            session.passkey = 0  // Just Works and numeric comparison: TK = 0 / r = 0
        }
        self.session = session
        if session.secureConnections {
            phase = .publicKey
            if role == .central { sendPublicKey(now: now, into: &out) }
        } else {
            phase = .confirm
            advance(now: now, into: &out)
        }
    }

    mutating func sendPublicKey(now: Duration, into out: inout [SMPOutput]) {
        let keyPair = configuration.usesDebugKeys ? SMPKeyPair.debug
            : randomness.isDeterministic ? SMPKeyPair(using: &randomness) : SMPKeyPair()
        session?.keyPair = keyPair
        send(.pairingPublicKey(keyPair.publicKey), now: now, into: &out)
    }

    /// Sends whatever has become possible: the legacy confirm once the TK is known, the SC
    /// passkey-round confirm, the DHKey checks once the user confirmed.
    mutating func advance(now: Duration, into out: inout [SMPOutput]) {
        guard let session else { return }
        switch phase {
        case .confirm where session.secureConnections:
            advanceSecureConnectionsConfirm(now: now, into: &out)
        case .confirm:
            advanceLegacyConfirm(now: now, into: &out)
        case .dhKeyCheck:
            advanceDHKeyCheck(now: now, into: &out)
        default:
            break
        }
    }
}
