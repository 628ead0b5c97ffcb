import Testing

@testable import BluetideHost

/// The host's random source: seeded sources repeat, the system's does not, forks are independent
/// streams, and a seeded key pair is the same key pair.
@Suite struct HostRandomnessTests {
    @Test func aSeededSourceRepeatsAndTheSystemSourceDoesNot() {
        var a = HostRandomness.seeded(42), b = HostRandomness.seeded(42)
        #expect(a.bytes(37) == b.bytes(37))
        #expect(a.isDeterministic && !HostRandomness.system.isDeterministic)
        var s1 = HostRandomness.system, s2 = HostRandomness.system
        #expect(s1.bytes(16) != s2.bytes(16))
        var c = HostRandomness.seeded(43)
        #expect(HostRandomness.seeded(42).bytesOnce(16) != c.bytes(16))
    }

    @Test func bytesComeInTheAskedCountFromOneStream() {
        var whole = HostRandomness.seeded(7), parts = HostRandomness.seeded(7)
        #expect(whole.bytes(0).isEmpty)
        #expect(whole.bytes(3).count == 3)
        // Each call starts on a fresh 64-bit word: 3 octets then 8 take two words.
        _ = parts.next()
        #expect(whole.bytes(8) == parts.bytes(8))
    }

    @Test func forksAreIndependentButReproducible() {
        var host1 = HostRandomness.seeded(9), host2 = HostRandomness.seeded(9)
        var link1a = host1.fork(), link1b = host1.fork()
        var link2a = host2.fork()
        let first = link1a.bytes(16)
        #expect(first == link2a.bytes(16))
        #expect(first != link1b.bytes(16))
        #expect(host1.fork().isDeterministic)
    }

    @Test func aSeededKeyPairIsTheSameKeyPair() {
        var a = HostRandomness.seeded(1), b = HostRandomness.seeded(1), c = HostRandomness.seeded(2)
        let pa = SMPKeyPair(using: &a), pb = SMPKeyPair(using: &b), pc = SMPKeyPair(using: &c)
        #expect(pa.publicKey == pb.publicKey)
        #expect(pa.publicKey != pc.publicKey)
        #expect((try? pa.dhKey(with: pc.publicKey)) == (try? pc.dhKey(with: pa.publicKey)))
    }

    @Test(arguments: [true, false])
    func twoSeededPairingsSendTheSameBytes(secureConnections: Bool) {
        func run() -> [SecurityAction] {
            let (c, p) = SecurityManagerTests.policies(secureConnections: secureConnections)
            var hosts = TwoHosts(central: c, peripheral: p)
            hosts.central = SecurityManager(policy: c, randomness: .seeded(5))
            hosts.peripheral = SecurityManager(policy: p, randomness: .seeded(6))
            hosts.connect(handle: 0x40, centralAddress: SecurityManagerTests.centralAddress, peripheralAddress: SecurityManagerTests.peripheralAddress)
            hosts.run(hosts.central.secure(handle: 0x40, now: .zero), from: .central)
            #expect(TwoHosts.completed(hosts.centralActions) != nil)
            return hosts.centralActions + hosts.peripheralActions
        }
        #expect(run() == run())
    }
}

extension HostRandomness {
    /// `count` octets of a copy (for comparing sources without mutating a `let`).
    fileprivate func bytesOnce(_ count: Int) -> [UInt8] {
        var copy = self
        return copy.bytes(count)
    }
}
