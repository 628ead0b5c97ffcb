import BluetideBase
import Testing

@testable import BluetideHost

/// Two hosts' ``SecurityManager``s on one link, with a pretend controller that carries SMP PDUs
/// and performs the encryption handshake (LE Enable Encryption → LTK Request → reply → Encryption
/// Change on both sides, or status 0x06 after a negative reply).
struct TwoHosts {
    var central: SecurityManager
    var peripheral: SecurityManager
    var centralActions: [SecurityAction] = []
    var peripheralActions: [SecurityAction] = []
    var smpPDUs = 0
    var now: Duration = .zero
    /// What the controller encrypted with, per handle.
    var encryptedWith: [UInt16: [UInt8]] = [:]
    /// Passkey typed by whoever is asked (nil: the displayed one).
    var displayed: UInt32?

    init(central: SecurityPolicy, peripheral: SecurityPolicy) {
        self.central = SecurityManager(policy: central)
        self.peripheral = SecurityManager(policy: peripheral)
    }

    mutating func connect(handle: UInt16, centralAddress: BluetoothAddress, peripheralAddress: BluetoothAddress) {
        let c = central.linkConnected(handle: handle, role: .central, localAddress: centralAddress, peerAddress: peripheralAddress, now: now)
        _ = peripheral.linkConnected(handle: handle, role: .peripheral, localAddress: peripheralAddress, peerAddress: centralAddress, now: now)
        run(c, from: .central)
    }

    mutating func disconnect(handle: UInt16) {
        central.linkDisconnected(handle: handle)
        peripheral.linkDisconnected(handle: handle)
    }

    mutating func run(_ first: [SecurityAction], from side: LinkRole) {
        var queue: [(LinkRole, SecurityAction)] = first.map { (side, $0) }
        while !queue.isEmpty {
            let (origin, action) = queue.removeFirst()
            if origin == .central { centralActions.append(action) } else { peripheralActions.append(action) }
            var next: [SecurityAction] = []
            let other: LinkRole = origin == .central ? .peripheral : .central
            switch action {
            case let .sendSMP(handle, pdu):
                smpPDUs += 1
                next = other == .central
                    ? central.receiveSMP(handle: handle, pdu, now: now) : peripheral.receiveSMP(handle: handle, pdu, now: now)
            case let .enableEncryption(handle, key):
                let reply = peripheral.longTermKeyRequested(handle: handle, ediv: key.ediv, random: key.random, now: now)
                for r in reply { peripheralActions.append(r) }
                var ok = false
                if case let .longTermKeyReply(_, peerKey)? = reply.first, peerKey == key.key { ok = true }
                if ok { encryptedWith[handle] = key.key }
                let status: UInt8 = ok ? 0 : 0x06
                queue += central.encryptionChanged(handle: handle, status: status, enabled: ok, now: now).map { (.central, $0) }
                queue += peripheral.encryptionChanged(handle: handle, status: status, enabled: ok, now: now).map { (.peripheral, $0) }
                continue
            case let .prompt(handle, prompt):
                switch prompt {
                case let .displayPasskey(value): displayed = value
                case .enterPasskey:
                    let value = displayed ?? 0
                    next = origin == .central
                        ? central.enterPasskey(handle: handle, value, now: now) : peripheral.enterPasskey(handle: handle, value, now: now)
                    queue += next.map { (origin, $0) }
                    continue
                case .confirmNumber:
                    next = origin == .central
                        ? central.confirmNumericComparison(handle: handle, true, now: now)
                        : peripheral.confirmNumericComparison(handle: handle, true, now: now)
                    queue += next.map { (origin, $0) }
                    continue
                }
            default:
                break
            }
            queue += next.map { (other, $0) }
        }
    }

    static func completed(_ actions: [SecurityAction]) -> SMPPairingResult? {
        for case let .pairingCompleted(_, result) in actions { return result }
        return nil
    }
}

@Suite struct SecurityManagerTests {
    static let centralIdentity = SMPIdentity(identityResolvingKey: (0..<16).map { UInt8(0x30 + $0) }, address: BluetoothAddress(value: 0xC000_0000_00C1, type: .random))
    static let peripheralIdentity = SMPIdentity(identityResolvingKey: (0..<16).map { UInt8(0x60 + $0) }, address: BluetoothAddress(value: 0x0000_0000_00B1, type: .public))
    static let centralAddress = BluetoothAddress(value: 0xC000_0000_00C1, type: .random)
    static let peripheralAddress = BluetoothAddress(value: 0x0000_0000_00B1, type: .public)

    static func policies(secureConnections: Bool) -> (SecurityPolicy, SecurityPolicy) {
        (SecurityPolicy(pairing: SMPConfiguration(ioCapability: .keyboardDisplay, secureConnections: secureConnections, identity: centralIdentity)),
         SecurityPolicy(pairing: SMPConfiguration(ioCapability: .displayOnly, identity: peripheralIdentity)))
    }

    @Test(arguments: [true, false])
    func pairThenReconnectReencryptsFromTheBond(secureConnections: Bool) {
        let (c, p) = Self.policies(secureConnections: secureConnections)
        var hosts = TwoHosts(central: c, peripheral: p)
        hosts.connect(handle: 0x40, centralAddress: Self.centralAddress, peripheralAddress: Self.peripheralAddress)
        #expect(hosts.centralActions.isEmpty)  // no bond yet: nothing on connect
        hosts.run(hosts.central.secure(handle: 0x40, now: .zero), from: .central)
        guard let result = TwoHosts.completed(hosts.centralActions) else {
            Issue.record("pairing did not complete: \(hosts.centralActions)")
            return
        }
        #expect(result.method == .passkeyEntry(.responderDisplays))
        #expect(hosts.central.securityLevel(handle: 0x40) == result.securityLevel)
        #expect(hosts.peripheral.securityLevel(handle: 0x40) == result.securityLevel)
        #expect(hosts.central.bonds.bonds.map(\.address) == [Self.peripheralIdentity.address])
        #expect(hosts.peripheral.bonds.bonds.map(\.address) == [Self.centralIdentity.address])
        #expect(hosts.centralActions.contains(.saveBonds(hosts.central.bonds)))
        hosts.disconnect(handle: 0x40)
        #expect(hosts.central.securityLevel(handle: 0x40) == .none)

        // Second connection: the central encrypts at once from the bond, without SMP.
        hosts.centralActions = []
        hosts.smpPDUs = 0
        hosts.connect(handle: 0x41, centralAddress: Self.centralAddress, peripheralAddress: Self.peripheralAddress)
        #expect(hosts.smpPDUs == 0)
        #expect(hosts.encryptedWith[0x41] != nil)
        #expect(hosts.central.securityLevel(handle: 0x41) == result.securityLevel)
        #expect(hosts.peripheral.securityLevel(handle: 0x41) == result.securityLevel)
        #expect(hosts.centralActions.contains(.securityChanged(handle: 0x41, result.securityLevel)))
        // Asking again changes nothing: the link is as secure as the bond allows.
        #expect(hosts.central.secure(handle: 0x41, now: .zero) == [.secured(handle: 0x41, result.securityLevel)])
    }

    @Test func secureWhileEncryptionIsPendingWaits() {
        let (c, p) = Self.policies(secureConnections: true)
        var hosts = TwoHosts(central: c, peripheral: p)
        hosts.connect(handle: 1, centralAddress: Self.centralAddress, peripheralAddress: Self.peripheralAddress)
        hosts.run(hosts.central.secure(handle: 1, now: .zero), from: .central)
        hosts.disconnect(handle: 1)
        // On connect the central starts encrypting from the bond; a request meanwhile adds nothing.
        let started = hosts.central.linkConnected(
            handle: 2, role: .central, localAddress: Self.centralAddress, peerAddress: Self.peripheralAddress, now: .zero)
        guard case .enableEncryption? = started.first else {
            Issue.record("no encryption started: \(started)")
            return
        }
        #expect(hosts.central.secure(handle: 2, now: .zero) == [])
        #expect(hosts.central.secure(handle: 2, force: true, now: .zero) == [])
    }

    /// A bonded peripheral's Security Request crossing the central's own encryption from the bond
    /// (BlueZ does this on every bonded reconnect) starts no second encryption, nor one once the
    /// link is encrypted at the bond's level.
    @Test func securityRequestDuringOrAfterBondedEncryptionAddsNothing() {
        let (c, p) = Self.policies(secureConnections: true)
        var hosts = TwoHosts(central: c, peripheral: p)
        hosts.connect(handle: 1, centralAddress: Self.centralAddress, peripheralAddress: Self.peripheralAddress)
        hosts.run(hosts.central.secure(handle: 1, now: .zero), from: .central)
        hosts.disconnect(handle: 1)
        let started = hosts.central.linkConnected(
            handle: 2, role: .central, localAddress: Self.centralAddress, peerAddress: Self.peripheralAddress, now: .zero)
        guard case .enableEncryption? = started.first else {
            Issue.record("no encryption started: \(started)")
            return
        }
        let securityRequest = SMPPDU.securityRequest([.bonding, .mitm, .secureConnections]).bytes
        #expect(hosts.central.receiveSMP(handle: 2, securityRequest, now: .zero) == [])
        #expect(hosts.central.encryptionChanged(handle: 2, status: 0, enabled: true, now: .zero)
            == [.securityChanged(handle: 2, .authenticatedSecureConnections)])
        #expect(hosts.central.receiveSMP(handle: 2, securityRequest, now: .zero) == [])
    }

    /// The central comes back from a new resolvable private address: the peripheral finds the
    /// bond through the IRK it was given.
    @Test func reconnectFromAResolvablePrivateAddress() {
        let (c, p) = Self.policies(secureConnections: true)
        var hosts = TwoHosts(central: c, peripheral: p)
        hosts.connect(handle: 1, centralAddress: Self.centralAddress, peripheralAddress: Self.peripheralAddress)
        hosts.run(hosts.central.secure(handle: 1, now: .zero), from: .central)
        hosts.disconnect(handle: 1)
        let rpa = SMPCrypto.resolvablePrivateAddress(identityResolvingKey: Self.centralIdentity.identityResolvingKey, prand: 0x2A_BCDE)
        hosts.smpPDUs = 0
        hosts.connect(handle: 2, centralAddress: rpa, peripheralAddress: Self.peripheralAddress)
        #expect(hosts.smpPDUs == 0)
        #expect(hosts.peripheral.securityLevel(handle: 2) == .authenticatedSecureConnections)
    }

    @Test func securityRequestPairsOrEncrypts() {
        let (c, p) = Self.policies(secureConnections: true)
        var hosts = TwoHosts(central: c, peripheral: p)
        hosts.connect(handle: 7, centralAddress: Self.centralAddress, peripheralAddress: Self.peripheralAddress)
        hosts.run(hosts.peripheral.secure(handle: 7, now: .zero), from: .peripheral)
        #expect(TwoHosts.completed(hosts.peripheralActions) != nil)
        hosts.disconnect(handle: 7)

        // With a bond, a Security Request makes the central encrypt rather than pair.
        var noAuto = c
        noAuto.encryptsBondedLinksOnConnect = false
        hosts.central.policy = noAuto
        hosts.smpPDUs = 0
        hosts.connect(handle: 8, centralAddress: Self.centralAddress, peripheralAddress: Self.peripheralAddress)
        #expect(hosts.central.securityLevel(handle: 8) == .none)
        hosts.run(hosts.peripheral.secure(handle: 8, now: .zero), from: .peripheral)
        #expect(hosts.smpPDUs == 1)  // the Security Request only
        #expect(hosts.central.securityLevel(handle: 8) == .authenticatedSecureConnections)
        #expect(hosts.peripheral.securityLevel(handle: 8) == .authenticatedSecureConnections)
        // The peripheral's Security Request was answered: no SMP timer left running.
        #expect(!hosts.peripheral.isPairing(handle: 8))
        #expect(hosts.peripheral.nextDeadline == nil)
    }

    @Test func securityRequestLeftToTheApplication() {
        var (c, p) = Self.policies(secureConnections: true)
        c.pairsOnSecurityRequest = false
        var hosts = TwoHosts(central: c, peripheral: p)
        hosts.connect(handle: 3, centralAddress: Self.centralAddress, peripheralAddress: Self.peripheralAddress)
        hosts.run(hosts.peripheral.secure(handle: 3, now: .zero), from: .peripheral)
        #expect(hosts.centralActions.contains(.securityRequested(handle: 3, [.bonding, .mitm, .secureConnections])))
        #expect(!hosts.central.isPairing(handle: 3))
    }

    /// The peripheral forgot the bond: it answers with a negative reply and the controller
    /// reports PIN or Key Missing (0x06).
    @Test func peerThatLostTheBond() {
        let (c, p) = Self.policies(secureConnections: false)
        var hosts = TwoHosts(central: c, peripheral: p)
        hosts.connect(handle: 5, centralAddress: Self.centralAddress, peripheralAddress: Self.peripheralAddress)
        hosts.run(hosts.central.secure(handle: 5, now: .zero), from: .central)
        hosts.disconnect(handle: 5)
        let removed = hosts.peripheral.removeBond(Self.centralIdentity.address)
        #expect(removed == [.saveBonds(BondStore(localIdentity: nil, bonds: []))])
        hosts.centralActions = []
        hosts.connect(handle: 6, centralAddress: Self.centralAddress, peripheralAddress: Self.peripheralAddress)
        #expect(hosts.peripheralActions.contains(.longTermKeyNegativeReply(handle: 6)))
        #expect(hosts.centralActions.contains(.bondedEncryptionFailed(handle: 6, status: 0x06)))
        #expect(hosts.central.securityLevel(handle: 6) == .none)
        // Forcing a new pairing replaces the stale bond.
        hosts.run(hosts.central.secure(handle: 6, force: true, now: .zero), from: .central)
        #expect(TwoHosts.completed(hosts.centralActions) != nil)
        #expect(hosts.peripheral.bonds.bonds.count == 1)
    }

    @Test func unknownLinkRequestsGetANegativeReply() {
        var manager = SecurityManager()
        #expect(manager.longTermKeyRequested(handle: 9, ediv: 0, random: 0, now: .zero) == [.longTermKeyNegativeReply(handle: 9)])
        #expect(manager.receiveSMP(handle: 9, [0x01], now: .zero) == [])
    }

    @Test func timeoutThroughTheManager() {
        var manager = SecurityManager()
        _ = manager.linkConnected(handle: 1, role: .central, localAddress: Self.centralAddress, peerAddress: Self.peripheralAddress, now: .seconds(5))
        let start = manager.secure(handle: 1, now: .seconds(5))
        #expect(start.count == 1)
        #expect(manager.nextDeadline == .seconds(35))
        #expect(manager.expire(now: .seconds(34)) == [])
        #expect(manager.expire(now: .seconds(35)) == [.pairingFailed(handle: 1, .timeout)])
        #expect(manager.nextDeadline == nil)
    }

    @Test func encryptionSwitchedOffDropsTheLevel() {
        let (c, p) = Self.policies(secureConnections: true)
        var hosts = TwoHosts(central: c, peripheral: p)
        hosts.connect(handle: 1, centralAddress: Self.centralAddress, peripheralAddress: Self.peripheralAddress)
        hosts.run(hosts.central.secure(handle: 1, now: .zero), from: .central)
        #expect(hosts.central.securityLevel(handle: 1) > .none)
        #expect(hosts.central.encryptionChanged(handle: 1, status: 0, enabled: false, now: .zero) == [.securityChanged(handle: 1, .none)])
    }
}
