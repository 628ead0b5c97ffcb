/// A small deterministic random number generator (SplitMix64): the same seed gives the same
/// numbers on every platform and Swift version, unlike the standard library's bounded helpers
/// whose algorithms may change. Not for cryptography.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Starts from `seed` (any value, including 0).
    public init(seed: UInt64) { state = seed }

    /// Next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform integer in `0..<bound` without modulo bias (rejection sampling); 0 when bound is 0.
    public mutating func below(_ bound: UInt64) -> UInt64 {
        guard bound > 1 else { return 0 }
        // Reject the top partial block so every remainder is equally likely.
        let limit = UInt64.max - (UInt64.max % bound)
        while true {
            let value = next()
            if value < limit { return value % bound }
        }
    }

    /// Uniform Double in the half-open unit interval `[0, 1)` with 53 random bits.
    public mutating func unit() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }
}
