import BluetideBase

/// The Security Manager of one LE link, in either role: a state machine without I/O.
///
/// Feed it what arrives (SMP PDUs, the user's answers, encryption events, the time) and it
/// returns what to do, in order: PDUs to send, "start encryption", prompts, the outcome. It
/// pairs with LE Secure Connections (Just Works, Numeric Comparison, Passkey Entry) or LE legacy
/// pairing (Just Works, Passkey Entry), then distributes keys (Core Vol 3 Part H 2.3–2.4, 3).
///
/// Times are `Duration`s since any origin the owner picks; ``deadline`` is when ``expire(now:)``
/// must be called (the 30 s SMP timeout, restarted by every PDU sent or received).
public struct SMPPairing: Sendable {
    /// Our role: the central initiates pairing, the peripheral responds (or asks with a Security Request).
    public let role: LinkRole
    /// Local policy.
    public var configuration: SMPConfiguration
    /// Our address as used on this connection.
    public let localAddress: BluetoothAddress
    /// The peer's address as used on this connection.
    public let peerAddress: BluetoothAddress
    /// Failed attempts against this peer (carry it from link to link for the repeated-attempts rule).
    public var attempts: SMPAttemptHistory
    /// When ``expire(now:)`` has something to do.
    public internal(set) var deadline: Duration?
    /// Where nonces, passkeys, key pairs and distributed keys come from.
    public var randomness: HostRandomness

    var phase: Phase = .idle
    var session: SMPSession?

    /// Where the procedure is.
    enum Phase: Equatable {
        /// Nothing under way (also after success or a failure).
        case idle
        /// (Peripheral) sent a Security Request, waiting for the Pairing Request.
        case securityRequested
        /// (Central) sent the Pairing Request.
        case awaitingResponse
        /// Public keys are being exchanged (Secure Connections).
        case publicKey
        /// Confirm values are being exchanged (waiting for ours, theirs, or the passkey).
        case confirm
        /// Random values are being exchanged.
        case random
        /// DHKey checks are being exchanged (Secure Connections).
        case dhKeyCheck
        /// Waiting for the link to be encrypted.
        case encrypting
        /// Keys are being distributed.
        case keyDistribution
        /// The SMP timer expired: SMP is closed on this link.
        case timedOut
    }

    /// A pairing manager for a new link.
    public init(
        role: LinkRole, localAddress: BluetoothAddress, peerAddress: BluetoothAddress,
        configuration: SMPConfiguration = SMPConfiguration(), attempts: SMPAttemptHistory = SMPAttemptHistory(),
        randomness: HostRandomness = .system
    ) {
        self.randomness = randomness
        self.role = role
        self.localAddress = localAddress
        self.peerAddress = peerAddress
        self.configuration = configuration
        self.attempts = attempts
    }

    /// True while a pairing procedure is under way.
    public var isPairing: Bool { phase != .idle && phase != .timedOut }

    /// True while pairing waits for the link to be encrypted with its STK or LTK.
    public var awaitsEncryption: Bool { phase == .encrypting }

    // MARK: Inputs

    /// Starts pairing: as central, sends a Pairing Request; as peripheral, a Security Request.
    /// Does nothing while pairing is under way.
    public mutating func pair(now: Duration) -> [SMPOutput] {
        if phase == .timedOut { return [.failed(.timeout)] }
        guard phase == .idle else { return [] }
        guard configuration.pairable else { return [.failed(.localFailure(.pairingNotSupported))] }
        guard attempts.allows(at: now) else { return [.failed(.localFailure(.repeatedAttempts))] }
        var out: [SMPOutput] = []
        switch role {
        case .central:
            let request = localFeatures(initiatorKeys: configuration.distributableKeys, responderKeys: wantedKeys)
            session = SMPSession(request: request)
            phase = .awaitingResponse
            send(.pairingRequest(request), now: now, into: &out)
        case .peripheral:
            phase = .securityRequested
            send(.securityRequest(configuration.authRequirements), now: now, into: &out)
        }
        return out
    }

    /// Handles one SMP PDU (the payload of an L2CAP frame on CID 0x0006).
    public mutating func receive(_ bytes: [UInt8], now: Duration) -> [SMPOutput] {
        var out: [SMPOutput] = []
        if phase == .timedOut { return out }
        // A reserved code is ignored (Core Vol 3 Part H 3.3); a known one with a bad length or
        // value fails pairing with Invalid Parameters.
        guard bytes.first.flatMap(SMPCode.init(rawValue:)) != nil else { return out }
        let pdu: SMPPDU
        do {
            pdu = try SMPPDU(bytes: bytes)
        } catch {
            fail(.invalidParameters, now: now, into: &out)
            return out
        }
        if !configuration.pairable {
            refuse(pdu, into: &out)
            return out
        }
        if isPairing { restartTimer(now) }
        handle(pdu, now: now, into: &out)
        return out
    }

    /// The user's answer to ``SMPPrompt/confirmNumber(_:)``: true when both devices show the same number.
    public mutating func confirmNumericComparison(_ matches: Bool, now: Duration) -> [SMPOutput] {
        var out: [SMPOutput] = []
        guard isPairing, var session, session.method == .numericComparison, session.userConfirmed == nil else { return out }
        guard matches else {
            fail(.numericComparisonFailed, now: now, into: &out)
            return out
        }
        session.userConfirmed = true
        self.session = session
        advance(now: now, into: &out)
        return out
    }

    /// The user's answer to ``SMPPrompt/enterPasskey``: the six digits typed, or nil when the
    /// user cancelled (pairing fails with 0x01).
    public mutating func enterPasskey(_ passkey: UInt32?, now: Duration) -> [SMPOutput] {
        var out: [SMPOutput] = []
        guard isPairing, var session, session.awaitsPasskey else { return out }
        guard let passkey, passkey <= 999_999 else {
            fail(.passkeyEntryFailed, now: now, into: &out)
            return out
        }
        session.passkey = passkey
        session.awaitsPasskey = false
        self.session = session
        advance(now: now, into: &out)
        return out
    }

    /// (Peripheral) the controller's LE Long Term Key Request during pairing: the STK or LTK to
    /// reply with, or nil when the request is not for this pairing (look in the bonds, or
    /// answer with a negative reply).
    public mutating func longTermKeyRequested(ediv: UInt16, random: UInt64, now: Duration) -> SMPLongTermKey? {
        guard role == .peripheral, phase == .encrypting, ediv == 0, random == 0, let key = session?.encryptionKey else {
            return nil
        }
        return SMPLongTermKey(key: key)
    }

    /// The controller's Encryption Change (or Key Refresh Complete, with `enabled` true): starts
    /// key distribution when pairing waited for it; a failure ends pairing.
    public mutating func encryptionChanged(status: UInt8, enabled: Bool, now: Duration) -> [SMPOutput] {
        var out: [SMPOutput] = []
        if phase == .securityRequested, status == 0, enabled {
            // The central answered our Security Request by encrypting with a bond: done.
            phase = .idle
            deadline = nil
            return out
        }
        guard phase == .encrypting else { return out }
        guard status == 0, enabled else {
            finishFailed(.encryptionFailed(status: status), now: now, into: &out)
            return out
        }
        restartTimer(now)
        startKeyDistribution(now: now, into: &out)
        return out
    }

    /// Call at ``deadline``: pairing fails with a timeout and SMP stays closed on this link.
    public mutating func expire(now: Duration) -> [SMPOutput] {
        guard let deadline, now >= deadline else { return [] }
        self.deadline = nil
        session = nil
        phase = .timedOut
        attempts.recordFailure(at: now)
        return [.failed(.timeout)]
    }

    // MARK: Shared steps

    /// A device that does not pair answers Pairing Request (in either role) and, as central,
    /// Security Request with Pairing Failed 0x05, and ignores the rest.
    private func refuse(_ pdu: SMPPDU, into out: inout [SMPOutput]) {
        switch pdu {
        case .pairingRequest, .securityRequest where role == .central:
            out.append(.send(.pairingFailed(.pairingNotSupported)))
        default:
            break
        }
    }

    /// Our features for a Pairing Request or Response.
    func localFeatures(initiatorKeys: SMPKeyDistribution, responderKeys: SMPKeyDistribution) -> SMPPairingFeatures {
        SMPPairingFeatures(
            ioCapability: configuration.ioCapability, oobDataPresent: false,
            authRequirements: configuration.authRequirements, maximumKeySize: configuration.maximumKeySize,
            initiatorKeys: initiatorKeys, responderKeys: responderKeys)
    }

    /// Keys we ask the peer for.
    var wantedKeys: SMPKeyDistribution {
        configuration.bonding ? configuration.keysToRequest.subtracting(.linkKey) : []
    }

    mutating func send(_ pdu: SMPPDU, now: Duration, into out: inout [SMPOutput]) {
        out.append(.send(pdu))
        restartTimer(now)
    }

    mutating func restartTimer(_ now: Duration) {
        deadline = now + configuration.timeout
    }

    /// Ends pairing with Pairing Failed `reason` sent to the peer.
    mutating func fail(_ reason: SMPPairingFailureReason, now: Duration, into out: inout [SMPOutput]) {
        out.append(.send(.pairingFailed(reason)))
        if isPairing {
            finishFailed(.localFailure(reason), now: now, into: &out)
        }
    }

    mutating func finishFailed(_ error: SMPPairingError, now: Duration, into out: inout [SMPOutput]) {
        session = nil
        phase = .idle
        deadline = nil
        attempts.recordFailure(at: now)
        out.append(.failed(error))
    }

    /// Random octets from ``randomness``.
    mutating func randomBytes(_ count: Int) -> [UInt8] { randomness.bytes(count) }

    /// The 56-bit address forms f5, f6 and c1 take.
    var initiatorAddressBytes: BluetoothAddressBytes { Self.addressBytes(role == .central ? localAddress : peerAddress) }
    var responderAddressBytes: BluetoothAddressBytes { Self.addressBytes(role == .central ? peerAddress : localAddress) }

    static func addressBytes(_ address: BluetoothAddress) -> BluetoothAddressBytes {
        BluetoothAddressBytes(address: address.littleEndianBytes, type: address.type.rawValue)
    }
}
