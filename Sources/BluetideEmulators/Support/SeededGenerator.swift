/// A small deterministic random number generator (SplitMix64), so emulated devices produce the
/// same bytes for the same seed and time axis.
public struct SeededGenerator: RandomNumberGenerator, Hashable, Sendable {
    private var state: UInt64

    /// - Parameter seed: any value; the same seed gives the same sequence.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform value in 0..<1.
    public mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }

    /// A normally distributed value (Box–Muller).
    public mutating func normal(mean: Double, standardDeviation: Double) -> Double {
        let u1 = max(unit(), 1e-12), u2 = unit()
        return mean + standardDeviation * (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    }

    /// True with probability `p`.
    public mutating func chance(_ p: Double) -> Bool { unit() < p }

    /// A stateless hash of `values` under `seed`, in 0..<1: the same inputs always give the same
    /// number (used for synthetic history that must look the same on every request).
    public static func hashUnit(seed: UInt64, _ values: Int...) -> Double {
        var g = SeededGenerator(seed: seed)
        for v in values { g.state ^= UInt64(bitPattern: Int64(v)) &* 0xD6E8_FEB8_6659_FD93; _ = g.next() }
        return g.unit()
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
