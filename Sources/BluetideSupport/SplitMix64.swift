#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A small deterministic random number generator (SplitMix64, Steele, Lea and Flood 2014): the
/// same seed gives the same numbers on every platform and Swift version, unlike the standard
/// library's bounded helpers whose algorithms may change. Simulated athletes, emulated devices,
/// generated sequences and reconnect jitter all draw from it, so a run can be repeated exactly.
/// Not for cryptography.
public struct SplitMix64: RandomNumberGenerator, Hashable, Sendable {
    @usableFromInline internal var state: UInt64

    /// Starts from `seed` (any value, including 0); the same seed gives the same sequence.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    @inlinable
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform value in the half-open unit interval `[0, 1)`, with 53 random bits.
    public mutating func unit() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }

    /// A uniform integer in `0..<bound` without modulo bias (rejection sampling); 0 when `bound`
    /// is 0 or 1.
    public mutating func below(_ bound: UInt64) -> UInt64 {
        guard bound > 1 else { return 0 }
        // Reject the top partial block so every remainder is equally likely.
        let limit = UInt64.max - (UInt64.max % bound)
        while true {
            let value = next()
            if value < limit { return value % bound }
        }
    }

    /// True with probability `p` (one draw).
    public mutating func chance(_ p: Double) -> Bool { unit() < p }

    /// A standard normal value (mean 0, standard deviation 1) by the Box–Muller transform; the
    /// first uniform is taken as `1 - unit()`, in (0, 1], so its logarithm is finite.
    public mutating func standardNormal() -> Double {
        let u1 = 1 - unit()
        let u2 = unit()
        return Self.boxMuller(u1, u2)
    }

    /// A normal value with the given mean and standard deviation (Box–Muller); the first uniform
    /// is `unit()` clamped to at least 1e-12, so its logarithm is finite. Draws differ from
    /// ``standardNormal()``: each is pinned by the models built on it.
    public mutating func normal(mean: Double, standardDeviation: Double) -> Double {
        let u1 = max(unit(), 1e-12), u2 = unit()
        return mean + standardDeviation * Self.boxMuller(u1, u2)
    }

    /// A stateless hash of `values` under `seed`, in `[0, 1)`: the same inputs always give the
    /// same number (for synthetic history that must look the same on every request).
    public static func hashUnit(seed: UInt64, _ values: Int...) -> Double {
        var generator = SplitMix64(seed: seed)
        for value in values {
            generator.state ^= UInt64(bitPattern: Int64(value)) &* 0xD6E8_FEB8_6659_FD93
            _ = generator.next()
        }
        return generator.unit()
    }

    private static func boxMuller(_ u1: Double, _ u2: Double) -> Double {
        (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    }
}
