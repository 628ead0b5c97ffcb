import BluetideBase
import Testing

@testable import BluetideHost

/// Central and peripheral ``SMPPairing`` talking to each other in memory, for every method,
/// started by the central or by the peripheral's Security Request.
@Suite struct SMPPairingMethodTests {
    enum Start: CaseIterable { case central, securityRequest }

    static let identityC = SMPIdentity(identityResolvingKey: (0..<16).map { UInt8($0) }, address: BluetoothAddress(value: 0xC1C2_C3C4_C5C6, type: .public))
    static let identityP = SMPIdentity(identityResolvingKey: (0..<16).map { UInt8(0xF0 | $0) }, address: BluetoothAddress(value: 0xD1D2_D3D4_D5D6, type: .random))

    static func config(_ io: SMPIOCapability, secureConnections: Bool = true, identity: SMPIdentity? = nil) -> SMPConfiguration {
        SMPConfiguration(ioCapability: io, secureConnections: secureConnections, identity: identity)
    }

    static func paired(_ c: SMPConfiguration, _ p: SMPConfiguration, start: Start) -> PairingHarness {
        var harness = PairingHarness(central: c, peripheral: p)
        switch start {
        case .central: harness.pairFromCentral()
        case .securityRequest: harness.pairFromPeripheral()
        }
        return harness
    }

    /// Both sides completed with the same method and level and agree on the keys.
    static func expectBothComplete(_ h: PairingHarness, method: SMPPairingMethod, level: SMPSecurityLevel, sc: Bool) {
        guard let c = h.centralResult, let p = h.peripheralResult else {
            Issue.record("pairing did not complete: central \(String(describing: h.centralError)), peripheral \(String(describing: h.peripheralError))")
            return
        }
        #expect(h.encrypted)
        #expect(c.method == method && p.method == method)
        #expect(c.securityLevel == level && p.securityLevel == level)
        #expect(c.secureConnections == sc && p.secureConnections == sc)
        #expect(c.bonded && p.bonded)
        // What one side keeps for the other's role is what the other side holds.
        #expect(c.peerKeys.longTermKey != nil)
        #expect(c.peerKeys.longTermKey == p.localKeys.longTermKey)
        #expect(c.peerKeys.signatureKey == p.localKeys.signatureKey)
        #expect(p.peerKeys.signatureKey == c.localKeys.signatureKey)
        #expect(c.peerKeys.signatureKey?.count == 16)
        #expect(h.central.deadline == nil && h.peripheral.deadline == nil)
        #expect(!h.central.isPairing && !h.peripheral.isPairing)
    }

    @Test(arguments: Start.allCases)
    func secureConnectionsJustWorks(start: Start) {
        let h = Self.paired(Self.config(.noInputNoOutput), Self.config(.noInputNoOutput), start: start)
        Self.expectBothComplete(h, method: .justWorks, level: .encrypted, sc: true)
        #expect(h.centralPrompts.isEmpty && h.peripheralPrompts.isEmpty)
        #expect(!h.traffic.contains { $0.pdu.code == .encryptionInformation })  // SC: no LTK distribution
    }

    @Test(arguments: Start.allCases)
    func secureConnectionsNumericComparison(start: Start) {
        let h = Self.paired(Self.config(.displayYesNo), Self.config(.keyboardDisplay), start: start)
        Self.expectBothComplete(h, method: .numericComparison, level: .authenticatedSecureConnections, sc: true)
        guard case let .confirmNumber(shownC)? = h.centralPrompts.first, case let .confirmNumber(shownP)? = h.peripheralPrompts.first else {
            Issue.record("no numbers shown: \(h.centralPrompts) \(h.peripheralPrompts)")
            return
        }
        #expect(shownC == shownP)
        #expect(shownC < 1_000_000)
    }

    @Test(arguments: Start.allCases)
    func secureConnectionsPasskeyResponderDisplays(start: Start) {
        let h = Self.paired(Self.config(.keyboardOnly), Self.config(.displayOnly), start: start)
        Self.expectBothComplete(h, method: .passkeyEntry(.responderDisplays), level: .authenticatedSecureConnections, sc: true)
        #expect(h.centralPrompts == [.enterPasskey])
        #expect(h.peripheralPrompts.count == 1)
        // Twenty rounds: twenty confirms and twenty randoms each way.
        #expect(h.traffic.filter { $0.pdu.code == .pairingConfirm }.count == 40)
        #expect(h.traffic.filter { $0.pdu.code == .pairingRandom }.count == 40)
    }

    @Test(arguments: Start.allCases)
    func secureConnectionsPasskeyInitiatorDisplays(start: Start) {
        let h = Self.paired(Self.config(.keyboardDisplay), Self.config(.keyboardOnly), start: start)
        Self.expectBothComplete(h, method: .passkeyEntry(.initiatorDisplays), level: .authenticatedSecureConnections, sc: true)
        #expect(h.peripheralPrompts == [.enterPasskey])
    }

    @Test(arguments: Start.allCases)
    func secureConnectionsPasskeyBothType(start: Start) {
        let h = Self.paired(Self.config(.keyboardOnly), Self.config(.keyboardOnly), start: start)
        Self.expectBothComplete(h, method: .passkeyEntry(.bothInput), level: .authenticatedSecureConnections, sc: true)
        #expect(h.centralPrompts == [.enterPasskey] && h.peripheralPrompts == [.enterPasskey])
    }

    @Test(arguments: Start.allCases)
    func legacyJustWorks(start: Start) {
        let h = Self.paired(
            Self.config(.noInputNoOutput, secureConnections: false, identity: Self.identityC),
            Self.config(.displayYesNo, identity: Self.identityP), start: start)
        Self.expectBothComplete(h, method: .justWorks, level: .encrypted, sc: false)
        guard let c = h.centralResult, let p = h.peripheralResult else { return }
        // Legacy: each side sends its own LTK with EDIV and Rand, and here its identity.
        #expect(p.peerKeys.longTermKey == c.localKeys.longTermKey)
        #expect(c.localKeys.longTermKey != c.peerKeys.longTermKey)
        #expect(c.peerKeys.identityResolvingKey == Self.identityP.identityResolvingKey)
        #expect(c.peerKeys.identityAddress == Self.identityP.address)
        #expect(p.peerKeys.identityAddress == Self.identityC.address)
        #expect(h.traffic.map(\.pdu.code).suffix(10) == [
            .encryptionInformation, .centralIdentification, .identityInformation, .identityAddressInformation, .signingInformation,
            .encryptionInformation, .centralIdentification, .identityInformation, .identityAddressInformation, .signingInformation,
        ])
        #expect(h.traffic.suffix(10).map(\.from) == Array(repeating: .peripheral, count: 5) + Array(repeating: .central, count: 5))
    }

    @Test(arguments: Start.allCases)
    func legacyPasskeyResponderDisplays(start: Start) {
        let h = Self.paired(Self.config(.keyboardDisplay, secureConnections: false), Self.config(.displayOnly), start: start)
        Self.expectBothComplete(h, method: .passkeyEntry(.responderDisplays), level: .authenticated, sc: false)
    }

    @Test(arguments: Start.allCases)
    func legacyPasskeyInitiatorDisplays(start: Start) {
        let h = Self.paired(Self.config(.displayOnly), Self.config(.keyboardOnly, secureConnections: false), start: start)
        Self.expectBothComplete(h, method: .passkeyEntry(.initiatorDisplays), level: .authenticated, sc: false)
    }

    @Test func shortKeysAreShortened() {
        var c = Self.config(.noInputNoOutput, secureConnections: false)
        c.maximumKeySize = 7
        let h = Self.paired(c, Self.config(.noInputNoOutput), start: .central)
        guard let result = h.centralResult, let key = result.peerKeys.longTermKey?.key else {
            Issue.record("no result")
            return
        }
        #expect(result.keySize == 7)
        #expect(key.count == 16)
        #expect(key[7...].allSatisfy { $0 == 0 })
    }

    @Test func noBondingMeansNoKeys() {
        var c = Self.config(.noInputNoOutput)
        c.bonding = false
        let h = Self.paired(c, Self.config(.noInputNoOutput), start: .central)
        #expect(h.centralResult?.bonded == false)
        #expect(h.centralResult?.securityLevel == .encrypted)
        #expect(!h.traffic.contains { $0.pdu.code == .signingInformation || $0.pdu.code == .identityInformation })
    }
}

@Suite struct SMPMethodTableTests {
    static func features(_ io: SMPIOCapability, mitm: Bool = true) -> SMPPairingFeatures {
        SMPPairingFeatures(ioCapability: io, authRequirements: mitm ? [.mitm] : [], initiatorKeys: [], responderKeys: [])
    }

    @Test func noInputNoOutputIsAlwaysJustWorks() {
        for io in SMPIOCapability.allCases {
            for sc in [false, true] {
                #expect(SMPPairingMethod.select(initiator: Self.features(io), responder: Self.features(.noInputNoOutput), secureConnections: sc) == .justWorks)
                #expect(SMPPairingMethod.select(initiator: Self.features(.noInputNoOutput), responder: Self.features(io), secureConnections: sc) == .justWorks)
            }
        }
    }

    @Test func withoutMITMItIsJustWorks() {
        let m = SMPPairingMethod.select(
            initiator: Self.features(.keyboardDisplay, mitm: false), responder: Self.features(.keyboardDisplay, mitm: false),
            secureConnections: true)
        #expect(m == .justWorks)
    }

    @Test func legacyNeverUsesNumericComparison() {
        for a in SMPIOCapability.allCases {
            for b in SMPIOCapability.allCases {
                #expect(SMPPairingMethod.select(initiator: Self.features(a), responder: Self.features(b), secureConnections: false) != .numericComparison)
            }
        }
    }

    /// Cells of Core Vol 3 Part H Table 2.8 (initiator, responder, legacy method, SC method).
    @Test func tableCells() {
        let cells: [(SMPIOCapability, SMPIOCapability, SMPPairingMethod, SMPPairingMethod)] = [
            (.displayOnly, .displayOnly, .justWorks, .justWorks),
            (.displayYesNo, .displayYesNo, .justWorks, .numericComparison),
            (.keyboardOnly, .displayOnly, .passkeyEntry(.responderDisplays), .passkeyEntry(.responderDisplays)),
            (.displayOnly, .keyboardOnly, .passkeyEntry(.initiatorDisplays), .passkeyEntry(.initiatorDisplays)),
            (.keyboardOnly, .keyboardOnly, .passkeyEntry(.bothInput), .passkeyEntry(.bothInput)),
            (.keyboardDisplay, .displayYesNo, .passkeyEntry(.responderDisplays), .numericComparison),
            (.displayYesNo, .keyboardDisplay, .passkeyEntry(.initiatorDisplays), .numericComparison),
            (.keyboardDisplay, .keyboardDisplay, .passkeyEntry(.initiatorDisplays), .numericComparison),
            (.keyboardOnly, .keyboardDisplay, .passkeyEntry(.responderDisplays), .passkeyEntry(.responderDisplays)),
            (.keyboardDisplay, .keyboardOnly, .passkeyEntry(.initiatorDisplays), .passkeyEntry(.initiatorDisplays)),
            (.displayYesNo, .displayOnly, .justWorks, .justWorks),
        ]
        for (i, r, legacy, sc) in cells {
            #expect(SMPPairingMethod.select(initiator: Self.features(i), responder: Self.features(r), secureConnections: false) == legacy, "\(i) → \(r)")
            #expect(SMPPairingMethod.select(initiator: Self.features(i), responder: Self.features(r), secureConnections: true) == sc, "\(i) → \(r)")
        }
    }
}
