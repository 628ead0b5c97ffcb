import BluetideBase

/// What the host's security policy does on its own.
public struct SecurityPolicy: Sendable, Hashable {
    /// How this device pairs (IO capability, bonding, MITM, Secure Connections, keys).
    public var pairing: SMPConfiguration
    /// (Central) on a Security Request from a device without a bond, pair at once. When false
    /// the request is reported (``SecurityAction/securityRequested(handle:_:)``) and nothing happens.
    public var pairsOnSecurityRequest: Bool
    /// (Central) encrypt a link to a bonded device as soon as it connects, as phones do.
    public var encryptsBondedLinksOnConnect: Bool

    public init(pairing: SMPConfiguration = SMPConfiguration(), pairsOnSecurityRequest: Bool = true, encryptsBondedLinksOnConnect: Bool = true) {
        self.pairing = pairing
        self.pairsOnSecurityRequest = pairsOnSecurityRequest
        self.encryptsBondedLinksOnConnect = encryptsBondedLinksOnConnect
    }
}

/// What the ``SecurityManager`` asks the host to do, in order.
public enum SecurityAction: Sendable, Hashable {
    /// Send this SMP PDU (already encoded) on L2CAP CID 0x0006 of the link.
    case sendSMP(handle: UInt16, pdu: [UInt8])
    /// Send LE Enable Encryption (0x2019) with this key.
    case enableEncryption(handle: UInt16, key: SMPLongTermKey)
    /// Send LE Long Term Key Request Reply (0x201A) with this key.
    case longTermKeyReply(handle: UInt16, key: [UInt8])
    /// Send LE Long Term Key Request Negative Reply (0x201B).
    case longTermKeyNegativeReply(handle: UInt16)
    /// Ask the user (answer with ``SecurityManager/confirmNumericComparison(handle:_:now:)`` or
    /// ``SecurityManager/enterPasskey(handle:_:now:)``).
    case prompt(handle: UInt16, SMPPrompt)
    /// A peripheral asked for security and the policy leaves the answer to the application.
    case securityRequested(handle: UInt16, SMPAuthRequirements)
    /// Pairing on the link finished.
    case pairingCompleted(handle: UInt16, SMPPairingResult)
    /// Pairing on the link failed.
    case pairingFailed(handle: UInt16, SMPPairingError)
    /// Encrypting with a stored bond failed (HCI status; 0x06 means the peer lost its keys).
    case bondedEncryptionFailed(handle: UInt16, status: UInt8)
    /// The link's security level changed.
    case securityChanged(handle: UInt16, SMPSecurityLevel)
    /// ``SecurityManager/secure(handle:force:now:)`` found the link already as secure as its bond allows.
    case secured(handle: UInt16, SMPSecurityLevel)
    /// The bonds changed: write them to the bond file.
    case saveBonds(BondStore)
}

/// The security of every link of the host: pairing (``SMPPairing`` per link), encryption from
/// stored bonds, LTK requests, each link's security level. No I/O: the host core feeds it SMP
/// PDUs and the HCI events Encryption Change, Encryption Key Refresh Complete and LE Long Term
/// Key Request, and carries out the returned ``SecurityAction``s.
public struct SecurityManager: Sendable {
    /// The policy for new links (changing it does not affect links already pairing).
    public var policy: SecurityPolicy
    /// The bonds, and this device's identity.
    public private(set) var bonds: BondStore
    /// Where each link's pairing draws its random numbers from (forked once per link).
    public private(set) var randomness: HostRandomness
    private var links: [UInt16: LinkSecurity] = [:]
    private var attempts: [BluetoothAddress: SMPAttemptHistory] = [:]

    private struct LinkSecurity: Sendable {
        var pairing: SMPPairing
        var level: SMPSecurityLevel = .none
        /// The bond whose key is being used to encrypt, while waiting for Encryption Change.
        var encryptingWith: Bond?
    }

    /// No links yet; pairs as `policy` says, encrypts with `bonds`, draws every pairing's
    /// random numbers from `randomness` (one independent source per link, in the order links open).
    public init(policy: SecurityPolicy = SecurityPolicy(), bonds: BondStore = BondStore(), randomness: HostRandomness = .system) {
        self.policy = policy
        self.bonds = bonds
        self.randomness = randomness
    }

    /// The security level of a link (`.none` for unknown handles).
    public func securityLevel(handle: UInt16) -> SMPSecurityLevel { links[handle]?.level ?? .none }

    /// True while pairing runs on the link.
    public func isPairing(handle: UInt16) -> Bool { links[handle]?.pairing.isPairing ?? false }

    /// The earliest SMP timeout of any link.
    public var nextDeadline: Duration? { links.values.compactMap(\.pairing.deadline).min() }

    /// A new link. As central with a bond for the peer (and the policy says so), starts encryption.
    public mutating func linkConnected(
        handle: UInt16, role: LinkRole, localAddress: BluetoothAddress, peerAddress: BluetoothAddress, now: Duration
    ) -> [SecurityAction] {
        var configuration = policy.pairing
        if configuration.identity == nil { configuration.identity = bonds.localIdentity }
        let pairing = SMPPairing(
            role: role, localAddress: localAddress, peerAddress: peerAddress, configuration: configuration,
            attempts: attempts[peerAddress] ?? SMPAttemptHistory(), randomness: randomness.fork())
        links[handle] = LinkSecurity(pairing: pairing)
        guard role == .central, policy.encryptsBondedLinksOnConnect, let bond = bonds.bond(for: peerAddress) else { return [] }
        return encrypt(handle: handle, with: bond)
    }

    /// The link is gone (its pairing state goes with it; failed attempts are remembered per peer).
    public mutating func linkDisconnected(handle: UInt16) {
        guard let link = links.removeValue(forKey: handle) else { return }
        attempts[link.pairing.peerAddress] = link.pairing.attempts
    }

    /// Secures the link: as central, encrypts with the bond if there is one (unless `force`),
    /// else pairs; as peripheral, sends a Security Request.
    public mutating func secure(handle: UInt16, force: Bool = false, now: Duration) -> [SecurityAction] {
        guard let link = links[handle] else { return [] }
        if link.pairing.isPairing || link.encryptingWith != nil { return [] }  // the running procedure will answer
        if link.pairing.role == .central, !force, let bond = bonds.bond(for: link.pairing.peerAddress) {
            if link.level >= bond.securityLevel { return [.secured(handle: handle, link.level)] }
            return encrypt(handle: handle, with: bond)
        }
        return run(handle, now: now) { $0.pair(now: now) }
    }

    /// One SMP PDU arrived on the link.
    public mutating func receiveSMP(handle: UInt16, _ pdu: [UInt8], now: Duration) -> [SecurityAction] {
        run(handle, now: now) { $0.receive(pdu, now: now) }
    }

    /// The user's numeric comparison answer.
    public mutating func confirmNumericComparison(handle: UInt16, _ matches: Bool, now: Duration) -> [SecurityAction] {
        run(handle, now: now) { $0.confirmNumericComparison(matches, now: now) }
    }

    /// The passkey the user typed (nil: cancelled).
    public mutating func enterPasskey(handle: UInt16, _ passkey: UInt32?, now: Duration) -> [SecurityAction] {
        run(handle, now: now) { $0.enterPasskey(passkey, now: now) }
    }

    /// LE Long Term Key Request (peripheral): the pairing's key, a bond's key, or a negative reply.
    public mutating func longTermKeyRequested(handle: UInt16, ediv: UInt16, random: UInt64, now: Duration) -> [SecurityAction] {
        guard var link = links[handle] else { return [.longTermKeyNegativeReply(handle: handle)] }
        if let key = link.pairing.longTermKeyRequested(ediv: ediv, random: random, now: now) {
            links[handle] = link
            return [.longTermKeyReply(handle: handle, key: key.key)]
        }
        if let bond = bonds.bond(for: link.pairing.peerAddress), let key = bond.peripheralKey(ediv: ediv, random: random) {
            link.encryptingWith = bond
            links[handle] = link
            return [.longTermKeyReply(handle: handle, key: key.key)]
        }
        return [.longTermKeyNegativeReply(handle: handle)]
    }

    /// Encryption Change (`enabled` false when switched off) or, with `enabled` true, Encryption
    /// Key Refresh Complete.
    public mutating func encryptionChanged(handle: UInt16, status: UInt8, enabled: Bool, now: Duration) -> [SecurityAction] {
        guard links[handle] != nil else { return [] }
        if links[handle]!.pairing.awaitsEncryption {
            return run(handle, now: now) { $0.encryptionChanged(status: status, enabled: enabled, now: now) }
        }
        // Not pairing's key: a peripheral's pending Security Request may be answered by it.
        _ = links[handle]!.pairing.encryptionChanged(status: status, enabled: enabled, now: now)
        var link = links[handle]!
        var actions: [SecurityAction] = []
        if let bond = link.encryptingWith {
            link.encryptingWith = nil
            if status == 0 && enabled {
                link.level = bond.securityLevel
                actions.append(.securityChanged(handle: handle, bond.securityLevel))
            } else {
                actions.append(.bondedEncryptionFailed(handle: handle, status: status))
            }
        } else if status == 0 && !enabled && link.level != .none {
            link.level = .none
            actions.append(.securityChanged(handle: handle, .none))
        }
        links[handle] = link
        return actions
    }

    /// Call at ``nextDeadline``.
    public mutating func expire(now: Duration) -> [SecurityAction] {
        var actions: [SecurityAction] = []
        for handle in links.keys.sorted() where (links[handle]?.pairing.deadline).map({ $0 <= now }) == true {
            actions += run(handle, now: now) { $0.expire(now: now) }
        }
        return actions
    }

    /// Forgets the bond with `address` (identity or resolvable private address).
    public mutating func removeBond(_ address: BluetoothAddress) -> [SecurityAction] {
        guard bonds.remove(address) != nil else { return [] }
        return [.saveBonds(bonds)]
    }

    private mutating func encrypt(handle: UInt16, with bond: Bond) -> [SecurityAction] {
        guard let key = bond.centralEncryptionKey else { return [] }
        links[handle]?.encryptingWith = bond
        return [.enableEncryption(handle: handle, key: key)]
    }

    /// Runs one step of the link's pairing and turns its outputs into host actions.
    private mutating func run(_ handle: UInt16, now: Duration, _ step: (inout SMPPairing) -> [SMPOutput]) -> [SecurityAction] {
        guard var link = links[handle] else { return [] }
        let outputs = step(&link.pairing)
        links[handle] = link
        var actions: [SecurityAction] = []
        for output in outputs {
            switch output {
            case let .send(pdu):
                actions.append(.sendSMP(handle: handle, pdu: pdu.bytes))
            case let .startEncryption(key):
                actions.append(.enableEncryption(handle: handle, key: key))
            case let .prompt(prompt):
                actions.append(.prompt(handle: handle, prompt))
            case let .securityRequested(auth):
                if let bond = bonds.bond(for: link.pairing.peerAddress) {
                    // Encryption from the bond already under way or done answers the request: a
                    // second LE Enable Encryption meanwhile is disallowed by a controller (BlueZ
                    // sends a Security Request as a bonded central connects, crossing ours).
                    let current = links[handle]
                    if current?.encryptingWith == nil, (current?.level ?? .none) < bond.securityLevel {
                        actions += encrypt(handle: handle, with: bond)
                    }
                } else if policy.pairsOnSecurityRequest {
                    actions += run(handle, now: now) { $0.pair(now: now) }
                } else {
                    actions.append(.securityRequested(handle: handle, auth))
                }
            case let .completed(result):
                links[handle]?.level = result.securityLevel
                actions.append(.securityChanged(handle: handle, result.securityLevel))
                actions.append(.pairingCompleted(handle: handle, result))
                if result.bonded {
                    bonds.save(Bond(pairing: result, peerAddress: link.pairing.peerAddress))
                    actions.append(.saveBonds(bonds))
                }
            case let .failed(error):
                actions.append(.pairingFailed(handle: handle, error))
            }
        }
        return actions
    }
}
