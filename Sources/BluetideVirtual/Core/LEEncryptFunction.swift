import BluetideHCI
import Crypto
import CryptoExtras

/// HCI LE Encrypt (0x2017, Core Vol 4 Part E 7.8.22): AES-128 of one 16-byte block, as a
/// controller computes it for its host (SMP's e() when the host has no AES of its own).
///
/// The HCI parameters carry the key and the plaintext least significant octet first, while
/// FIPS-197 numbers a block's octets from the most significant one; so the key and the data are
/// reversed on the way in and the result on the way out.
enum LEEncryptFunction {
    /// LE Encrypt.
    static let opcode = HCIOpcode(rawValue: 0x2017)
    /// LE Rand (0x2018): 8 random octets.
    static let randOpcode = HCIOpcode(rawValue: 0x2018)

    /// AES-128 of `plaintext` under `key`, both and the result in HCI order (16 octets each);
    /// nil when either is not 16 octets.
    static func encrypt(key: ArraySlice<UInt8>, plaintext: ArraySlice<UInt8>) -> [UInt8]? {
        guard key.count == 16, plaintext.count == 16 else { return nil }
        var block = Array(plaintext.reversed())
        do {
            try AES.permute(&block, key: SymmetricKey(data: Array(key.reversed())))
        } catch {
            return nil
        }
        return block.reversed()
    }
}
