import BluetideBase

/// The random static address an emulated device advertises from when none is given.
///
/// Derived from the device's name and a salt: the `--seed` when one is given (so the device
/// keeps its address from run to run), else the process (so two `bluetide emulate` processes on
/// the same controllers never collide, as they did when every default was F1:DE:00:00:00:00).
public enum DefaultDeviceAddress {
    /// The address for the device `name` (its model or advertised name), the `index`-th of its
    /// process, salted with `salt` (the seed, or the process identifier).
    public static func derive(name: String, index: Int, salt: UInt64) -> BluetoothAddress {
        // FNV-1a over the name, then a SplitMix64-style finaliser over name, index and salt.
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in name.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        var z = hash ^ (salt &* 0x9E37_79B9_7F4A_7C15) ^ (UInt64(index) &* 0xD1B5_4A32_D192_ED03)
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        // Random static: top two bits set; the rest may not be all ones or all zeros.
        var address = BluetoothAddress.randomStatic(z)
        let low = address.value & 0x3FFF_FFFF_FFFF
        if low == 0 || low == 0x3FFF_FFFF_FFFF { address = .randomStatic(0x1234_5678_9ABC ^ UInt64(index)) }
        return address
    }
}
