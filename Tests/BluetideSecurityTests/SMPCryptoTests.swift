import BluetideBase
import Testing

@testable import BluetideHost

/// AES-CMAC pinned by RFC 4493's four examples (section 4), key 2b7e1516 28aed2a6 abf71588 09cf4f3c.
@Suite struct AESCMACTests {
    let key = msbFirst("2b7e1516 28aed2a6 abf71588 09cf4f3c")
    let message = msbFirst(
        "6bc1bee2 2e409f96 e93d7e11 7393172a ae2d8a57 1e03ac9c 9eb76fac 45af8e51 30c81c46 a35ce411 e5fbc119 1a0a52ef f69f2445 df4f9b17 ad2b417b e66c3710")

    @Test func example1EmptyMessage() {
        #expect(SMPCrypto.aesCMAC(key: key, message: []) == msbFirst("bb1d6929 e9593728 7fa37d12 9b756746"))
    }

    @Test func example2OneBlock() {
        #expect(SMPCrypto.aesCMAC(key: key, message: Array(message.prefix(16))) == msbFirst("070a16b4 6b4d4144 f79bdd9d d04a287c"))
    }

    @Test func example3PartialLastBlock() {
        #expect(SMPCrypto.aesCMAC(key: key, message: Array(message.prefix(40))) == msbFirst("dfa66747 de9ae630 30ca3261 1497c827"))
    }

    @Test func example4FourBlocks() {
        #expect(message.count == 64)
        #expect(SMPCrypto.aesCMAC(key: key, message: message) == msbFirst("51f0bebf 7e3b9d92 fc497417 79363cfe"))
    }

    @Test func aesBlockIsFIPS197() {
        // FIPS-197 Appendix C.1 (AES-128).
        let out = SMPCrypto.aes128(key: msbFirst("000102030405060708090a0b0c0d0e0f"), block: msbFirst("00112233445566778899aabbccddeeff"))
        #expect(out == msbFirst("69c4e0d86a7b0430d8cdb78070b4c55a"))
    }
}

/// The toolbox pinned by the sample data of Core Vol 3 Part H Appendix D (and 2.2.3/2.2.4 for
/// the legacy functions). The sample data is written most significant octet first; `wire()`
/// turns it into the order the functions take.
@Suite struct SMPToolboxTests {
    static let u = "20b003d2 f297be2c 5e2c83a7 e9f9a5b9 eff49111 acf4fddb cc030148 0e359de6"
    static let v = "55188b3d 32f6bb9a 900afcfb eed4e72a 59cb9ac2 f19d7cfb 6b4fdd49 f47fc5fd"
    static let n1 = "d5cb8454 d177733e ffffb2ec 712baeab"
    static let n2 = "a6e8e7cc 25a75f6e 216583f7 ff3dc4cf"
    static let dhKey = "ec0234a3 57c8ad05 341010a6 0a397d9b 99796b13 b4f866f1 868d34f3 73bfa698"
    // A1 = 00 561237 37bfce (public), A2 = 00 a71370 2dcfc1 (public).
    static let a1 = BluetoothAddressBytes(address: wire("56 12 37 37 bf ce"), type: 0)
    static let a2 = BluetoothAddressBytes(address: wire("a7 13 70 2d cf c1"), type: 0)

    @Test func f4() {
        let value = SMPCrypto.f4(u: wire(Self.u), v: wire(Self.v), x: wire(Self.n1), z: 0x00)
        #expect(value == wire("f2c916f1 07a9bd1c f1eda1be a974872d"))
    }

    @Test func f5() {
        let (macKey, ltk) = SMPCrypto.f5(w: wire(Self.dhKey), n1: wire(Self.n1), n2: wire(Self.n2), a1: Self.a1, a2: Self.a2)
        #expect(macKey == wire("2965f176 a1084a02 fd3f6a20 ce636e20"))
        #expect(ltk == wire("69867911 69d7cd23 980522b5 94750a38"))
    }

    @Test func f6() {
        let value = SMPCrypto.f6(
            w: wire("2965f176 a1084a02 fd3f6a20 ce636e20"), n1: wire(Self.n1), n2: wire(Self.n2),
            r: wire("12a3343b b453bb54 08da42d2 0c2d0fc8"), ioCap: wire("01 01 02"), a1: Self.a1, a2: Self.a2)
        #expect(value == wire("e3c47398 9cd0e8c5 d26c0b09 da958f61"))
    }

    @Test func g2() {
        let value = SMPCrypto.g2(u: wire(Self.u), v: wire(Self.v), x: wire(Self.n1), y: wire(Self.n2))
        #expect(value == 0x2f9e_d5ba)
        #expect(value % 1_000_000 == 0x2f9e_d5ba % 1_000_000)
    }

    @Test func ah() {
        let hash = SMPCrypto.ah(key: wire("ec0234a3 57c8ad05 341010a6 0a397d9b"), prand: wire("708194"))
        #expect(hash == wire("0dfbaa"))
    }

    @Test func c1() {
        // 2.2.3: k = 0, pres = 05000800000302, preq = 07071000000101, iat = 1, rat = 0,
        // ia = A1A2A3A4A5A6, ra = B1B2B3B4B5B6.
        let confirm = SMPCrypto.c1(
            key: [UInt8](repeating: 0, count: 16), rand: wire("5783D521 56AD6F0E 6388274E C6702EE0"),
            pairingRequest: wire("07071000000101"), pairingResponse: wire("05000800000302"),
            initiatorAddress: BluetoothAddressBytes(address: wire("A1A2A3A4A5A6"), type: 1),
            responderAddress: BluetoothAddressBytes(address: wire("B1B2B3B4B5B6"), type: 0))
        #expect(confirm == wire("1e1e3fef 878988ea d2a74dc5 bef13b86"))
    }

    @Test func s1() {
        let stk = SMPCrypto.s1(
            key: [UInt8](repeating: 0, count: 16), r1: wire("000F0E0D 0C0B0A09 11223344 55667788"),
            r2: wire("01020304 05060708 99AABBCC DDEEFF00"))
        #expect(stk == wire("9a1fe1f0 e8b0f49b 5b4216ae 796da062"))
    }

    @Test func e() {
        // e is AES-128 with both values written most significant first (FIPS-197 C.1 again, turned around).
        let out = SMPCrypto.e(key: wire("000102030405060708090a0b0c0d0e0f"), plaintext: wire("00112233445566778899aabbccddeeff"))
        #expect(out == wire("69c4e0d86a7b0430d8cdb78070b4c55a"))
    }
}

/// P-256 ECDH pinned by the sample keys of Appendix D.1 (key pair A is also the debug key pair).
@Suite struct SMPKeyAgreementTests {
    static let privateA = "3f49f6d4 a3c55f38 74c9b3e3 d2103f50 4aff607b eb40b799 5899b8a6 cd3c1abd"
    static let privateB = "55188b3d 32f6bb9a 900afcfb eed4e72a 59cb9ac2 f19d7cfb 6b4fdd49 f47fc5fd"

    @Test func sampleKeysAgree() throws {
        let a = try SMPKeyPair(privateKeyBigEndian: msbFirst(Self.privateA))
        let b = try SMPKeyPair(privateKeyBigEndian: msbFirst(Self.privateB))
        #expect(a.publicKey.x == wire("20b003d2 f297be2c 5e2c83a7 e9f9a5b9 eff49111 acf4fddb cc030148 0e359de6"))
        #expect(a.publicKey.y == wire("dc809c49 652aeb6d 63329abf 5a52155c 766345c2 8fed3024 741c8ed0 1589d28b"))
        #expect(b.publicKey.x == wire("1ea1f0f0 1faf1d96 09592284 f19e4c00 47b58afd 8615a69f 559077b2 2faaa190"))
        #expect(b.publicKey.y == wire("4c55f33e 429dad37 7356703a 9ab85160 472d1130 e28e3676 5f89aff9 15b1214a"))
        let expected = wire("ec0234a3 57c8ad05 341010a6 0a397d9b 99796b13 b4f866f1 868d34f3 73bfa698")
        #expect(try a.dhKey(with: b.publicKey) == expected)
        #expect(try b.dhKey(with: a.publicKey) == expected)
    }

    @Test func debugKeyPairIsSampleA() {
        #expect(SMPKeyPair.debug.publicKey == SMPPublicKey.debug)
        #expect(SMPPublicKey.debug.x == wire("20b003d2 f297be2c 5e2c83a7 e9f9a5b9 eff49111 acf4fddb cc030148 0e359de6"))
    }

    @Test func freshKeyPairsAgree() throws {
        let a = SMPKeyPair()
        let b = SMPKeyPair()
        #expect(a.publicKey != b.publicKey)
        #expect(try a.dhKey(with: b.publicKey) == b.dhKey(with: a.publicKey))
    }

    @Test func pointOffTheCurveIsRefused() {
        var bad = SMPKeyPair().publicKey
        bad.y[0] ^= 0x01
        #expect(throws: SMPKeyAgreementError.publicKeyNotOnCurve) { try SMPKeyPair().dhKey(with: bad) }
        let zero = SMPPublicKey(x: [UInt8](repeating: 0, count: 32), y: [UInt8](repeating: 0, count: 32))
        #expect(throws: SMPKeyAgreementError.publicKeyNotOnCurve) { try SMPKeyPair().dhKey(with: zero) }
        let short = SMPPublicKey(x: [1, 2, 3], y: [4])
        #expect(throws: SMPKeyAgreementError.publicKeyNotOnCurve) { try SMPKeyPair().dhKey(with: short) }
    }

    @Test func invalidPrivateKeyIsRefused() {
        #expect(throws: SMPKeyAgreementError.invalidPrivateKey) {
            try SMPKeyPair(privateKeyBigEndian: [UInt8](repeating: 0, count: 32))
        }
    }
}
