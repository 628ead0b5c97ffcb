import BluetideBase
import Testing

@testable import BluetideHost

/// Bad input and unhappy paths: wrong passkeys, refused numbers, invalid keys, timeouts, PDUs
/// out of order, repeated attempts, policies that cannot be met.
@Suite struct SMPPairingFailureTests {
    typealias Config = SMPConfiguration

    static func sentFailures(_ h: PairingHarness, from side: LinkRole) -> [SMPPairingFailureReason] {
        h.traffic.compactMap { $0.from == side ? ({ if case let .pairingFailed(r) = $0 { return r } else { return nil } })($0.pdu) : nil }
    }

    @Test(arguments: [true, false])
    func wrongPasskeyFailsWithConfirmValueFailedOnBothSides(secureConnections: Bool) {
        var h = PairingHarness(
            central: Config(ioCapability: .keyboardOnly, secureConnections: secureConnections),
            peripheral: Config(ioCapability: .displayOnly, secureConnections: secureConnections))
        h.typedPasskey = 424_242
        h.pairFromCentral()
        guard case let .displayPasskey(shown)? = h.peripheralPrompts.first else {
            Issue.record("peripheral showed nothing")
            return
        }
        if shown == 424_242 { return }  // the one case in a million where the typed number is right
        #expect(h.peripheralError == .localFailure(.confirmValueFailed))
        #expect(h.centralError == .peerFailure(.confirmValueFailed))
        #expect(Self.sentFailures(h, from: .peripheral) == [.confirmValueFailed])
        #expect(h.centralResult == nil && h.peripheralResult == nil && !h.encrypted)
        #expect(h.centralError?.description.contains("passkey did not match") == true)
    }

    @Test func numericComparisonRefusedByTheUser() {
        var h = PairingHarness(central: Config(ioCapability: .displayYesNo), peripheral: Config(ioCapability: .displayYesNo))
        h.peripheralConfirms = false
        h.pairFromCentral()
        #expect(h.peripheralError == .localFailure(.numericComparisonFailed))
        #expect(h.centralError == .peerFailure(.numericComparisonFailed))
        #expect(!h.encrypted)
    }

    @Test func cancelledPasskeyEntryFailsWith0x01() {
        var central = SMPPairing(role: .central, localAddress: PairingHarness.centralAddress, peerAddress: PairingHarness.peripheralAddress,
                                 configuration: Config(ioCapability: .keyboardOnly))
        _ = central.pair(now: .zero)
        let response = SMPPDU.pairingResponse(SMPPairingFeatures(
            ioCapability: .displayOnly, authRequirements: [.bonding, .mitm, .secureConnections], initiatorKeys: [], responderKeys: []))
        let afterResponse = central.receive(response.bytes, now: .seconds(1))
        #expect(afterResponse.contains(.prompt(.enterPasskey)))
        let out = central.enterPasskey(nil, now: .seconds(2))
        #expect(out == [.send(.pairingFailed(.passkeyEntryFailed)), .failed(.localFailure(.passkeyEntryFailed))])
    }

    /// A central that sends a public key off the curve is refused with Invalid Parameters.
    @Test func publicKeyNotOnTheCurveIsRefused() {
        var peripheral = SMPPairing(role: .peripheral, localAddress: PairingHarness.peripheralAddress, peerAddress: PairingHarness.centralAddress)
        let request = SMPPairingFeatures(
            ioCapability: .noInputNoOutput, authRequirements: [.bonding, .secureConnections], initiatorKeys: [], responderKeys: [])
        _ = peripheral.receive(SMPPDU.pairingRequest(request).bytes, now: .zero)
        var key = SMPKeyPair().publicKey
        key.y[5] ^= 0x40
        let out = peripheral.receive(SMPPDU.pairingPublicKey(key).bytes, now: .seconds(1))
        #expect(out.contains(.send(.pairingFailed(.invalidParameters))))
        #expect(out.last == .failed(.localFailure(.invalidParameters)))
        #expect(!peripheral.isPairing)
    }

    /// A peer reflecting our own public key back is refused too.
    @Test func reflectedPublicKeyIsRefused() {
        var central = SMPPairing(role: .central, localAddress: PairingHarness.centralAddress, peerAddress: PairingHarness.peripheralAddress)
        _ = central.pair(now: .zero)
        let response = SMPPairingFeatures(ioCapability: .noInputNoOutput, authRequirements: [.bonding, .secureConnections], initiatorKeys: [], responderKeys: [])
        let out = central.receive(SMPPDU.pairingResponse(response).bytes, now: .zero)
        guard case let .send(.pairingPublicKey(ours))? = out.last else {
            Issue.record("no public key sent: \(out)")
            return
        }
        let refused = central.receive(SMPPDU.pairingPublicKey(ours).bytes, now: .zero)
        #expect(refused.last == .failed(.localFailure(.invalidParameters)))
    }

    @Test func silentPeerTimesOutAfter30Seconds() {
        var h = PairingHarness(central: Config(), peripheral: Config())
        h.peripheralSilent = true
        h.pairFromCentral()
        #expect(h.central.isPairing)
        #expect(h.central.deadline == .seconds(30))
        #expect(h.central.expire(now: .seconds(29)) == [])
        #expect(h.central.expire(now: .seconds(30)) == [.failed(.timeout)])
        #expect(h.central.deadline == nil)
        // SMP stays closed on this link: later PDUs are ignored, a new attempt fails at once.
        let late = SMPPDU.pairingResponse(SMPPairingFeatures(ioCapability: .noInputNoOutput, authRequirements: [], initiatorKeys: [], responderKeys: []))
        #expect(h.central.receive(late.bytes, now: .seconds(31)) == [])
        #expect(h.central.pair(now: .seconds(40)) == [.failed(.timeout)])
        #expect(SMPPairingError.timeout.description.contains("30 s"))
    }

    @Test func everyPDURestartsTheTimer() {
        var peripheral = SMPPairing(role: .peripheral, localAddress: PairingHarness.peripheralAddress, peerAddress: PairingHarness.centralAddress)
        let request = SMPPairingFeatures(ioCapability: .noInputNoOutput, authRequirements: [.bonding, .secureConnections], initiatorKeys: [], responderKeys: [])
        _ = peripheral.receive(SMPPDU.pairingRequest(request).bytes, now: .seconds(100))
        #expect(peripheral.deadline == .seconds(130))
        _ = peripheral.receive(SMPPDU.pairingPublicKey(SMPKeyPair().publicKey).bytes, now: .seconds(120))
        #expect(peripheral.deadline == .seconds(150))
        #expect(peripheral.expire(now: .seconds(140)) == [])
        #expect(peripheral.expire(now: .seconds(150)) == [.failed(.timeout)])
    }

    @Test func pdusOutOfOrderAreRefused() {
        let randomFirst = SMPPDU.pairingRandom([UInt8](repeating: 1, count: 16)).bytes
        var peripheral = SMPPairing(role: .peripheral, localAddress: PairingHarness.peripheralAddress, peerAddress: PairingHarness.centralAddress)
        #expect(peripheral.receive(randomFirst, now: .zero) == [.send(.pairingFailed(.unspecifiedReason))])

        // A confirm before the public keys, in Secure Connections.
        let request = SMPPairingFeatures(ioCapability: .noInputNoOutput, authRequirements: [.bonding, .secureConnections], initiatorKeys: [], responderKeys: [])
        _ = peripheral.receive(SMPPDU.pairingRequest(request).bytes, now: .zero)
        let confirm = SMPPDU.pairingConfirm([UInt8](repeating: 2, count: 16)).bytes
        #expect(peripheral.receive(confirm, now: .zero) == [.send(.pairingFailed(.unspecifiedReason)), .failed(.localFailure(.unspecifiedReason))])

        // A second Pairing Request in the middle of pairing.
        _ = peripheral.receive(SMPPDU.pairingRequest(request).bytes, now: .seconds(10))  // allowed later: starts again
        let again = peripheral.receive(SMPPDU.pairingRequest(request).bytes, now: .seconds(10))
        #expect(again.first == .send(.pairingFailed(.unspecifiedReason)))

        // Keys before encryption.
        var central = SMPPairing(role: .central, localAddress: PairingHarness.centralAddress, peerAddress: PairingHarness.peripheralAddress)
        _ = central.pair(now: .zero)
        let ltk = SMPPDU.encryptionInformation(longTermKey: [UInt8](repeating: 3, count: 16)).bytes
        #expect(central.receive(ltk, now: .zero) == [.send(.pairingFailed(.unspecifiedReason)), .failed(.localFailure(.unspecifiedReason))])
    }

    @Test func wrongRoleCommandsAreNotSupported() {
        var central = SMPPairing(role: .central, localAddress: PairingHarness.centralAddress, peerAddress: PairingHarness.peripheralAddress)
        let request = SMPPairingFeatures(ioCapability: .noInputNoOutput, authRequirements: [], initiatorKeys: [], responderKeys: [])
        #expect(central.receive(SMPPDU.pairingRequest(request).bytes, now: .zero) == [.send(.pairingFailed(.commandNotSupported))])
        var peripheral = SMPPairing(role: .peripheral, localAddress: PairingHarness.peripheralAddress, peerAddress: PairingHarness.centralAddress)
        #expect(peripheral.receive(SMPPDU.securityRequest([.bonding]).bytes, now: .zero) == [.send(.pairingFailed(.commandNotSupported))])
    }

    @Test func unknownAndMalformedCommands() {
        var peripheral = SMPPairing(role: .peripheral, localAddress: PairingHarness.peripheralAddress, peerAddress: PairingHarness.centralAddress)
        // Reserved codes are ignored (Core Vol 3 Part H 3.3).
        #expect(peripheral.receive([0x20, 0x00], now: .zero) == [])
        #expect(peripheral.receive([0x0F], now: .zero) == [])
        #expect(peripheral.receive([], now: .zero) == [])
        #expect(peripheral.receive([0x01, 0x03, 0x00], now: .zero) == [.send(.pairingFailed(.invalidParameters))])
        #expect(!peripheral.isPairing)
    }

    @Test func repeatedAttemptsWaitLongerEachTime() {
        var peripheral = SMPPairing(role: .peripheral, localAddress: PairingHarness.peripheralAddress, peerAddress: PairingHarness.centralAddress,
                                    configuration: Config(requiresMITM: true))
        let request = SMPPDU.pairingRequest(SMPPairingFeatures(
            ioCapability: .noInputNoOutput, authRequirements: [.bonding], initiatorKeys: [], responderKeys: [])).bytes
        // Fails: Just Works cannot meet MITM.
        #expect(peripheral.receive(request, now: .seconds(10)).first == .send(.pairingFailed(.authenticationRequirements)))
        #expect(peripheral.attempts.failures == 1)
        #expect(peripheral.receive(request, now: .seconds(11)) == [.send(.pairingFailed(.repeatedAttempts)), .failed(.localFailure(.repeatedAttempts))])
        #expect(peripheral.receive(request, now: .seconds(12)).first == .send(.pairingFailed(.authenticationRequirements)))
        #expect(peripheral.attempts.failures == 2)
        // The second wait is twice the first.
        #expect(peripheral.receive(request, now: .seconds(15)).first == .send(.pairingFailed(.repeatedAttempts)))
        #expect(peripheral.receive(request, now: .seconds(16)).first == .send(.pairingFailed(.authenticationRequirements)))
        // The central side waits as well.
        var central = SMPPairing(role: .central, localAddress: PairingHarness.centralAddress, peerAddress: PairingHarness.peripheralAddress,
                                 attempts: peripheral.attempts)
        #expect(central.pair(now: .seconds(17)) == [.failed(.localFailure(.repeatedAttempts))])
    }

    @Test func policyFailures() {
        // MITM required, but the peer has no IO.
        var h = PairingHarness(central: Config(ioCapability: .keyboardDisplay, requiresMITM: true), peripheral: Config())
        h.pairFromCentral()
        #expect(h.centralError == .localFailure(.authenticationRequirements))
        #expect(h.peripheralError == .peerFailure(.authenticationRequirements))

        // Secure Connections only, against a legacy device.
        h = PairingHarness(central: Config(secureConnections: false), peripheral: Config(secureConnectionsOnly: true))
        h.pairFromCentral()
        #expect(h.peripheralError == .localFailure(.authenticationRequirements))

        // Key too short.
        h = PairingHarness(central: Config(maximumKeySize: 10), peripheral: Config(minimumKeySize: 16))
        h.pairFromCentral()
        #expect(h.peripheralError == .localFailure(.encryptionKeySize))
        #expect(h.centralError == .peerFailure(.encryptionKeySize))
    }

    @Test func peerClaimingOurOOBDataIsRefused() {
        var peripheral = SMPPairing(role: .peripheral, localAddress: PairingHarness.peripheralAddress, peerAddress: PairingHarness.centralAddress)
        let request = SMPPairingFeatures(ioCapability: .noInputNoOutput, oobDataPresent: true, authRequirements: [.bonding, .secureConnections], initiatorKeys: [], responderKeys: [])
        #expect(peripheral.receive(SMPPDU.pairingRequest(request).bytes, now: .zero).first == .send(.pairingFailed(.oobNotAvailable)))
    }

    @Test func encryptionFailureEndsPairing() {
        // Run until the central asks to encrypt, then report a failed Encryption Change instead.
        var central = SMPPairing(role: .central, localAddress: PairingHarness.centralAddress, peerAddress: PairingHarness.peripheralAddress,
                                 configuration: Config(secureConnections: false))
        var peripheral = SMPPairing(role: .peripheral, localAddress: PairingHarness.peripheralAddress, peerAddress: PairingHarness.centralAddress)
        var toPeripheral = central.pair(now: .zero)
        var startEncryption: SMPLongTermKey?
        for _ in 0..<10 {
            var toCentral: [SMPOutput] = []
            for case let .send(pdu) in toPeripheral { toCentral += peripheral.receive(pdu.bytes, now: .zero) }
            toPeripheral = []
            for case let .send(pdu) in toCentral { toPeripheral += central.receive(pdu.bytes, now: .zero) }
            for case let .startEncryption(key) in toPeripheral { startEncryption = key }
        }
        #expect(startEncryption != nil)
        #expect(central.encryptionChanged(status: 0x06, enabled: false, now: .zero) == [.failed(.encryptionFailed(status: 0x06))])
        // Said as what it means (BlueZ answers a forgotten bond's LTK with a negative reply: 0x06).
        #expect(SMPPairingError.encryptionFailed(status: 0x06).description.contains("bluetide bonds remove ADDRESS"))
        #expect(peripheral.longTermKeyRequested(ediv: 0x1234, random: 99, now: .zero) == nil)  // not this pairing's key
        #expect(peripheral.longTermKeyRequested(ediv: 0, random: 0, now: .zero)?.key == startEncryption?.key)
    }

    @Test func securityRequestIsReportedToTheCentral() {
        var central = SMPPairing(role: .central, localAddress: PairingHarness.centralAddress, peerAddress: PairingHarness.peripheralAddress)
        #expect(central.receive([0x0B, 0x0D], now: .zero) == [.securityRequested([.bonding, .mitm, .secureConnections])])
        _ = central.pair(now: .zero)
        #expect(central.receive([0x0B, 0x0D], now: .zero) == [])  // already pairing
    }

    @Test func notPairableRefusesWith0x05AndIgnoresTheRest() {
        var peripheral = SMPPairing(role: .peripheral, localAddress: PairingHarness.peripheralAddress, peerAddress: PairingHarness.centralAddress,
                                    configuration: .notPairable)
        #expect(peripheral.receive([0x01, 0x03, 0x00, 0x01, 0x10, 0x07, 0x07], now: .zero) == [.send(.pairingFailed(.pairingNotSupported))])
        #expect(peripheral.receive([0x05, 0x05], now: .zero) == [])
        #expect(peripheral.pair(now: .zero) == [.failed(.localFailure(.pairingNotSupported))])
        var central = SMPPairing(role: .central, localAddress: PairingHarness.centralAddress, peerAddress: PairingHarness.peripheralAddress,
                                 configuration: .notPairable)
        #expect(central.receive([0x0B, 0x01], now: .zero) == [.send(.pairingFailed(.pairingNotSupported))])
        #expect(central.receive([0x01, 0x03, 0x00, 0x01, 0x10, 0x07, 0x07], now: .zero) == [.send(.pairingFailed(.pairingNotSupported))])
        #expect(!central.isPairing && central.deadline == nil)
    }
}
