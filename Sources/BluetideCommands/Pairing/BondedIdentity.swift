import Bluetide
import Foundation

/// This computer's own address when a command keeps bonds: bonded devices know a host by its
/// address, so the same bond file must come with the same address on every run (a fresh random
/// one each time would make every bonded device refuse to re-encrypt). It is a random static
/// address derived from the bond file's absolute path: one bond file, one identity.
enum BondedIdentity {
    /// The random static address for the bond file at `path`.
    static func address(forBondFile path: String) -> BluetoothAddress {
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        // FNV-1a, 64 bits: stable across runs and platforms (unlike `Hasher`).
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in absolute.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return .randomStatic(hash)
    }
}
