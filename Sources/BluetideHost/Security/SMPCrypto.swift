import Crypto
import CryptoExtras

/// The Security Manager's cryptographic toolbox (Core Vol 3 Part H 2.2), built on swift-crypto:
/// the AES-128 block function from CryptoExtras' `AES.permute`, AES-CMAC (RFC 4493) on top of it.
///
/// Every value goes in and comes out in the order it travels in SMP PDUs and HCI commands: least
/// significant octet first. (The specification writes its formulas and sample data most
/// significant octet first; the functions turn the values around internally.)
public enum SMPCrypto {
    /// `bytes` cut or zero-padded (at the most significant end) to `count` octets.
    static func fixed(_ bytes: [UInt8], _ count: Int) -> [UInt8] {
        if bytes.count == count { return bytes }
        if bytes.count > count { return Array(bytes.prefix(count)) }
        return bytes + [UInt8](repeating: 0, count: count - bytes.count)
    }

    // MARK: AES-128 and AES-CMAC (most significant octet first, as in FIPS-197 and RFC 4493)

    /// One AES-128 block encryption; `key` and `block` most significant octet first, 16 each.
    static func aes128(key: [UInt8], block: [UInt8]) -> [UInt8] {
        var data = fixed(block, 16)
        // Sizes are fixed to 16 octets above, the only condition under which permute throws.
        try! AES.permute(&data, key: SymmetricKey(data: fixed(key, 16)))
        return data
    }

    /// AES-CMAC (RFC 4493) of `message` under the 128-bit `key`; all most significant octet first.
    public static func aesCMAC(key: [UInt8], message: [UInt8]) -> [UInt8] {
        let key = fixed(key, 16)
        let subkey1 = doubled(aes128(key: key, block: [UInt8](repeating: 0, count: 16)))
        let subkey2 = doubled(subkey1)
        let blockCount = max(1, (message.count + 15) / 16)
        let lastIsComplete = !message.isEmpty && message.count % 16 == 0
        var state = [UInt8](repeating: 0, count: 16)
        for block in 0..<(blockCount - 1) {
            for i in 0..<16 { state[i] ^= message[block * 16 + i] }
            state = aes128(key: key, block: state)
        }
        var last = Array(message[((blockCount - 1) * 16)...])
        if !lastIsComplete { last.append(0x80) }
        last = fixed(last, 16)
        let subkey = lastIsComplete ? subkey1 : subkey2
        for i in 0..<16 { state[i] ^= last[i] ^ subkey[i] }
        return aes128(key: key, block: state)
    }

    /// RFC 4493 2.3: shift the 128-bit value left one bit, XOR 0x87 into the last octet if a bit fell off.
    private static func doubled(_ value: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 16)
        for i in 0..<16 {
            out[i] = value[i] << 1 | (i < 15 ? value[i + 1] >> 7 : 0)
        }
        if value[0] & 0x80 != 0 { out[15] ^= 0x87 }
        return out
    }

    // MARK: The toolbox (wire order in and out)

    /// Security function e (2.2.1): AES-128 of `plaintext` under `key`, both 16 octets.
    public static func e(key: [UInt8], plaintext: [UInt8]) -> [UInt8] {
        Array(aes128(key: fixed(key, 16).reversed(), block: fixed(plaintext, 16).reversed()).reversed())
    }

    /// Random address hash ah (2.2.2): the 24-bit hash of the 24-bit `prand` under the IRK `key`.
    public static func ah(key: [UInt8], prand: [UInt8]) -> [UInt8] {
        Array(e(key: key, plaintext: fixed(prand, 3) + [UInt8](repeating: 0, count: 13)).prefix(3))
    }

    /// Legacy confirm value c1 (2.2.3) from the TK `key`, the random `rand`, the Pairing Request and
    /// Response PDUs (7 octets each, code included), and both addresses of the connection.
    public static func c1(
        key: [UInt8], rand: [UInt8], pairingRequest: [UInt8], pairingResponse: [UInt8],
        initiatorAddress: BluetoothAddressBytes, responderAddress: BluetoothAddressBytes
    ) -> [UInt8] {
        // p1 = pres || preq || rat' || iat' and p2 = padding || ia || ra, written most significant first.
        let p1 = [initiatorAddress.type, responderAddress.type] + fixed(pairingRequest, 7) + fixed(pairingResponse, 7)
        let p2 = fixed(responderAddress.address, 6) + fixed(initiatorAddress.address, 6) + [0, 0, 0, 0]
        let first = e(key: key, plaintext: xor(fixed(rand, 16), p1))
        return e(key: key, plaintext: xor(first, p2))
    }

    /// Legacy key generation s1 (2.2.4): the STK from the TK `key`, Srand (`r1`) and Mrand (`r2`).
    public static func s1(key: [UInt8], r1: [UInt8], r2: [UInt8]) -> [UInt8] {
        // r' = r1' || r2' most significant first: the low halves of r1 and r2.
        e(key: key, plaintext: Array(fixed(r2, 16).prefix(8)) + Array(fixed(r1, 16).prefix(8)))
    }

    /// LE Secure Connections confirm value f4 (2.2.6): AES-CMAC_X(U || V || Z).
    public static func f4(u: [UInt8], v: [UInt8], x: [UInt8], z: UInt8) -> [UInt8] {
        let message = msbFirst(u, 32) + msbFirst(v, 32) + [z]
        return Array(aesCMAC(key: msbFirst(x, 16), message: message).reversed())
    }

    /// LE Secure Connections key generation f5 (2.2.7): MacKey and LTK from the DHKey `w`, the
    /// nonces and the two 56-bit addresses (address then type octet, see ``BluetoothAddressBytes``).
    public static func f5(
        w: [UInt8], n1: [UInt8], n2: [UInt8], a1: BluetoothAddressBytes, a2: BluetoothAddressBytes
    ) -> (macKey: [UInt8], longTermKey: [UInt8]) {
        let salt: [UInt8] = [0x6C, 0x88, 0x83, 0x91, 0xAA, 0xF5, 0xA5, 0x38, 0x60, 0x37, 0x0B, 0xDB, 0x5A, 0x60, 0x83, 0xBE]
        let t = aesCMAC(key: salt, message: msbFirst(w, 32))
        let keyID: [UInt8] = [0x62, 0x74, 0x6C, 0x65]  // "btle"
        let body = keyID + msbFirst(n1, 16) + msbFirst(n2, 16) + a1.msbFirst + a2.msbFirst + [0x01, 0x00]
        let macKey = aesCMAC(key: t, message: [0] + body)
        let ltk = aesCMAC(key: t, message: [1] + body)
        return (Array(macKey.reversed()), Array(ltk.reversed()))
    }

    /// LE Secure Connections check value f6 (2.2.8): AES-CMAC_W(N1 || N2 || R || IOcap || A1 || A2).
    /// `ioCap` is the three octets of ``SMPPairingFeatures``' IO capability, OOB flag, AuthReq.
    public static func f6(
        w: [UInt8], n1: [UInt8], n2: [UInt8], r: [UInt8], ioCap: [UInt8],
        a1: BluetoothAddressBytes, a2: BluetoothAddressBytes
    ) -> [UInt8] {
        let message = msbFirst(n1, 16) + msbFirst(n2, 16) + msbFirst(r, 16) + msbFirst(ioCap, 3) + a1.msbFirst + a2.msbFirst
        return Array(aesCMAC(key: msbFirst(w, 16), message: message).reversed())
    }

    /// LE Secure Connections numeric comparison value g2 (2.2.9): the low 32 bits of
    /// AES-CMAC_X(U || V || Y). The six digits shown are this modulo 1 000 000.
    public static func g2(u: [UInt8], v: [UInt8], x: [UInt8], y: [UInt8]) -> UInt32 {
        let mac = aesCMAC(key: msbFirst(x, 16), message: msbFirst(u, 32) + msbFirst(v, 32) + msbFirst(y, 16))
        return mac[12...].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }

    private static func msbFirst(_ wire: [UInt8], _ count: Int) -> [UInt8] { Array(fixed(wire, count).reversed()) }

    private static func xor(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        let b = fixed(b, a.count)
        return (0..<a.count).map { a[$0] ^ b[$0] }
    }
}

/// A device address as the toolbox functions take it: the six address octets in wire order and
/// the address type octet (0 public, 1 random). f5 and f6 use the 56-bit concatenation
/// type || address; c1 uses the type and the address separately.
public struct BluetoothAddressBytes: Sendable, Hashable {
    /// Six octets, least significant first.
    public var address: [UInt8]
    /// 0 for a public address, 1 for a random one.
    public var type: UInt8

    public init(address: [UInt8], type: UInt8) {
        self.address = SMPCrypto.fixed(address, 6)
        self.type = type
    }

    /// The 56-bit value type || address, most significant octet first.
    var msbFirst: [UInt8] { [type] + address.reversed() }
}
