import BluetideBase
import BluetideHCI

/// The one place of the host where link security happens: SMP PDUs (L2CAP CID 0x0006), the HCI
/// events Encryption Change (0x08) and Encryption Key Refresh Complete (0x30), and LE Long Term
/// Key Request (LE Meta 0x05) all come here, with per-link state.
///
/// It adapts the ``SecurityManager`` (pairing in both roles, encryption from stored bonds, each
/// link's security level) to the core: SMP PDUs and HCI commands (LE Enable Encryption 0x2019,
/// LTK Request Reply 0x201A / Negative Reply 0x201B) go out through ``Actions``, the SMP timer
/// joins the core's ``HostCore/nextDeadline``, and prompts, outcomes and changed bonds go to the
/// driver as events. Pure like the core: time comes in, actions go out.
public struct HostSecurity: Sendable {
    /// Security state of one link.
    public struct LinkState: Sendable, Equatable {
        /// Our role on the link.
        public var role: LinkRole
        /// Whether the controller reports the link encrypted.
        public var encrypted = false
        /// Pair requests waiting for this link's pairing to end.
        var pairRequests: [HostRequestID] = []
    }

    /// What the security component asks the core to do, in order.
    public enum Action: Sendable {
        /// Send an SMP PDU on the link (L2CAP CID 0x0006).
        case sendSMP(handle: UInt16, pdu: [UInt8])
        /// Send an HCI command for the link; its end comes back through ``commandFinished(_:on:_:now:into:)``.
        case command(handle: UInt16, opcode: HCIOpcode, parameters: [UInt8])
        /// Tell the driver the link's encryption changed.
        case encryptionChanged(handle: UInt16, encrypted: Bool, status: HCIStatus, level: SMPSecurityLevel)
        /// Tell the driver something about pairing or bonds.
        case event(HostSecurityEvent)
        /// A pair request ended.
        case finished(HostRequestID, Result<HostReply, any Error>)
    }

    /// Actions of one call, appended in order.
    public typealias Actions = [Action]

    /// Encryption Key Refresh Complete (not decoded by BluetideHCI: status u8, handle u16).
    static let keyRefreshCompleteCode: UInt8 = 0x30

    /// Per-link state, by handle.
    public private(set) var links: [UInt16: LinkState] = [:]
    /// Pairing, bonds and security levels.
    public private(set) var manager: SecurityManager
    /// Our own address as the peer sees it (needed by the pairing functions); set by the driver
    /// once known (the configured random address, else the controller's public one).
    public var localAddress = BluetoothAddress(value: 0, type: .public)

    /// No links; pairs as `policy` says, with `bonds`.
    public init(policy: SecurityPolicy = SecurityPolicy(), bonds: BondStore = BondStore(), randomness: HostRandomness = .system) {
        manager = SecurityManager(policy: policy, bonds: bonds, randomness: randomness)
    }

    /// The earliest security deadline of any link (seconds), if one is armed.
    public var nextDeadline: Double? { manager.nextDeadline.map(\.hostSeconds) }

    /// A link opened.
    public mutating func linkOpened(_ handle: UInt16, role: LinkRole, peer: BluetoothAddress, now: Double, into actions: inout Actions) {
        links[handle] = LinkState(role: role)
        carryOut(manager.linkConnected(handle: handle, role: role, localAddress: localAddress, peerAddress: peer, now: .hostSeconds(now)), into: &actions)
    }

    /// A link closed: its state is forgotten, pair requests on it fail with `error`.
    public mutating func linkClosed(_ handle: UInt16, error: HostError, into actions: inout Actions) {
        for request in links[handle]?.pairRequests ?? [] { actions.append(.finished(request, .failure(error))) }
        links[handle] = nil
        manager.linkDisconnected(handle: handle)
    }

    /// An SMP PDU from the peer.
    public mutating func receiveSMP(_ pdu: [UInt8], on handle: UInt16, now: Double, into actions: inout Actions) {
        guard links[handle] != nil else { return }
        carryOut(manager.receiveSMP(handle: handle, pdu, now: .hostSeconds(now)), into: &actions)
    }

    /// A security HCI event: Encryption Change, Encryption Key Refresh Complete or LE Long Term
    /// Key Request. Others are ignored.
    public mutating func receive(_ event: HCIEvent, now: Double, into actions: inout Actions) {
        let t = Duration.hostSeconds(now)
        switch event {
        case let .encryptionChange(change):
            let handle = change.handle & 0x0FFF
            guard links[handle] != nil else { return }
            let encrypted = change.status == .success && change.encryptionEnabled != 0
            links[handle]!.encrypted = encrypted
            carryOut(manager.encryptionChanged(handle: handle, status: change.status.rawValue, enabled: encrypted, now: t), into: &actions)
            actions.append(.encryptionChanged(handle: handle, encrypted: encrypted, status: change.status, level: manager.securityLevel(handle: handle)))
        case let .unknown(code, parameters) where code == Self.keyRefreshCompleteCode && parameters.count >= 3:
            let handle = (UInt16(parameters[1]) | UInt16(parameters[2]) << 8) & 0x0FFF
            guard let link = links[handle] else { return }
            let status = HCIStatus(rawValue: parameters[0])
            carryOut(manager.encryptionChanged(handle: handle, status: status.rawValue, enabled: link.encrypted && status == .success, now: t), into: &actions)
            actions.append(.encryptionChanged(
                handle: handle, encrypted: link.encrypted && status == .success, status: status, level: manager.securityLevel(handle: handle)))
        case let .leMeta(.longTermKeyRequest(request)):
            let handle = request.handle & 0x0FFF
            guard links[handle] != nil else { return }
            carryOut(manager.longTermKeyRequested(handle: handle, ediv: request.encryptedDiversifier, random: request.randomNumber, now: t), into: &actions)
        default:
            break
        }
    }

    /// The application asks to secure a link (pair, or encrypt with a bond unless `force`).
    mutating func pair(_ request: HostRequestID, handle: UInt16, force: Bool, now: Double, into actions: inout Actions) {
        guard links[handle] != nil else {
            return actions.append(.finished(request, .failure(HostError.noSuchConnection(handle))))
        }
        links[handle]!.pairRequests.append(request)
        carryOut(manager.secure(handle: handle, force: force, now: .hostSeconds(now)), into: &actions)
    }

    /// The user's answer to a prompt.
    mutating func answer(_ answer: PairingAnswer, on handle: UInt16, now: Double, into actions: inout Actions) {
        switch answer {
        case let .confirm(matches):
            carryOut(manager.confirmNumericComparison(handle: handle, matches, now: .hostSeconds(now)), into: &actions)
        case let .passkey(value):
            carryOut(manager.enterPasskey(handle: handle, value, now: .hostSeconds(now)), into: &actions)
        }
    }

    /// Forgets a bond.
    mutating func removeBond(_ address: BluetoothAddress, into actions: inout Actions) {
        carryOut(manager.removeBond(address), into: &actions)
    }

    /// A command this component asked for ended.
    public mutating func commandFinished(
        _ opcode: HCIOpcode, on handle: UInt16, _ result: Result<HCICommandResponse, HostError>, now: Double,
        into actions: inout Actions
    ) {
        if case let .failure(error) = result {
            HostLog.hci.debug("a security command failed", metadata: ["handle": "\(handle)", "error": "\(error)"])
        }
    }

    /// Runs the timers whose deadline is at or before `now`.
    public mutating func expire(now: Double, into actions: inout Actions) {
        carryOut(manager.expire(now: .hostSeconds(now)), into: &actions)
    }

    private mutating func finishPairRequests(on handle: UInt16, level: SMPSecurityLevel, into actions: inout Actions) {
        for request in links[handle]?.pairRequests ?? [] { actions.append(.finished(request, .success(.secured(level)))) }
        links[handle]?.pairRequests = []
    }

    /// Replaces the bonds (the driver loads them from the bond file at start).
    mutating func loadBonds(_ bonds: BondStore) {
        manager = SecurityManager(policy: manager.policy, bonds: bonds, randomness: manager.randomness)
    }

    private mutating func carryOut(_ security: [SecurityAction], into actions: inout Actions) {
        for action in security {
            switch action {
            case let .sendSMP(handle, pdu):
                actions.append(.sendSMP(handle: handle, pdu: pdu))
            case let .enableEncryption(handle, key):
                let command = LEEnableEncryption(
                    handle: handle, randomNumber: key.random, encryptedDiversifier: key.ediv, longTermKey: HCIKey128(bytes: key.key))
                actions.append(.command(handle: handle, opcode: LEEnableEncryption.opcode, parameters: command.parameterBytes))
            case let .longTermKeyReply(handle, key):
                let command = LELongTermKeyRequestReply(handle: handle, longTermKey: HCIKey128(bytes: key))
                actions.append(.command(handle: handle, opcode: LELongTermKeyRequestReply.opcode, parameters: command.parameterBytes))
            case let .longTermKeyNegativeReply(handle):
                let command = LELongTermKeyRequestNegativeReply(handle: handle)
                actions.append(.command(handle: handle, opcode: LELongTermKeyRequestNegativeReply.opcode, parameters: command.parameterBytes))
            case let .prompt(handle, prompt):
                actions.append(.event(.prompt(handle: handle, prompt)))
            case let .securityRequested(handle, auth):
                actions.append(.event(.securityRequested(handle: handle, auth)))
            case let .pairingCompleted(handle, result):
                finishPairRequests(on: handle, level: result.securityLevel, into: &actions)
                actions.append(.event(.paired(handle: handle, result)))
            case let .pairingFailed(handle, error):
                for request in links[handle]?.pairRequests ?? [] { actions.append(.finished(request, .failure(error))) }
                links[handle]?.pairRequests = []
                actions.append(.event(.pairingFailed(handle: handle, error)))
            case let .bondedEncryptionFailed(handle, status):
                let error = SMPPairingError.encryptionFailed(status: status)
                for request in links[handle]?.pairRequests ?? [] { actions.append(.finished(request, .failure(error))) }
                links[handle]?.pairRequests = []
            case let .securityChanged(handle, level):
                // A pair request answered by encrypting with a bond ends here.
                if level > .none, !manager.isPairing(handle: handle) { finishPairRequests(on: handle, level: level, into: &actions) }
                actions.append(.event(.securityChanged(handle: handle, level)))
            case let .secured(handle, level):
                finishPairRequests(on: handle, level: level, into: &actions)
            case let .saveBonds(store):
                actions.append(.event(.bondsChanged(store)))
            }
        }
    }
}

/// What the security component tells the driver (and through it the application).
public enum HostSecurityEvent: Sendable {
    /// The user must answer (``HostStack/answerPairing(_:on:)``).
    case prompt(handle: UInt16, SMPPrompt)
    /// A peripheral asked for security and the policy leaves the answer to the application.
    case securityRequested(handle: UInt16, SMPAuthRequirements)
    /// Pairing finished.
    case paired(handle: UInt16, SMPPairingResult)
    /// Pairing failed.
    case pairingFailed(handle: UInt16, SMPPairingError)
    /// The link's security level changed.
    case securityChanged(handle: UInt16, SMPSecurityLevel)
    /// The bonds changed: persist them.
    case bondsChanged(BondStore)
}

/// The user's answer to a pairing prompt.
public enum PairingAnswer: Sendable, Hashable {
    /// Numeric comparison: true when both devices show the same number.
    case confirm(Bool)
    /// Passkey entry: the six digits typed, or nil when the user cancelled.
    case passkey(UInt32?)
}

extension HostCore {
    /// Carries out what the security component asked for.
    mutating func apply(_ actions: HostSecurity.Actions, now t: Double, into outputs: inout HostOutputs) {
        for action in actions {
            switch action {
            case let .sendSMP(handle, pdu):
                sendFrame(L2CAPFrame(channelID: .smp, payload: pdu), on: handle, into: &outputs)
            case let .command(handle, opcode, parameters):
                enqueue(opcode, parameters, purpose: .security(handle: handle), now: t, into: &outputs)
            case let .encryptionChanged(handle, encrypted, status, level):
                server.setSecurity(GATTLinkSecurity(isEncrypted: encrypted, isAuthenticated: encrypted && level >= .authenticated), for: handle)
                outputs.events.append(.encryptionChanged(handle: handle, encrypted: encrypted, status: status))
            case let .event(event):
                if case let .securityChanged(handle, level) = event, links[handle] != nil {
                    server.setSecurity(GATTLinkSecurity(isEncrypted: level > .none, isAuthenticated: level >= .authenticated), for: handle)
                }
                outputs.events.append(.security(event))
            case let .finished(request, result):
                finish(request, result, into: &outputs)
            }
        }
    }

    /// The application asks to secure a link, answers a prompt, or forgets a bond.
    mutating func handleSecurity(_ input: HostInput, now t: Double, into outputs: inout HostOutputs) {
        var actions = HostSecurity.Actions()
        switch input {
        case let .pair(request, handle, force):
            security.pair(request, handle: handle & 0x0FFF, force: force, now: t, into: &actions)
        case let .answerPairing(handle, answer):
            security.answer(answer, on: handle & 0x0FFF, now: t, into: &actions)
        case let .removeBond(address):
            security.removeBond(address, into: &actions)
        default:
            return
        }
        apply(actions, now: t, into: &outputs)
    }
}
