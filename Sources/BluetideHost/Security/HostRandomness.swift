import BluetideSupport

/// Where a host's random numbers come from: SMP's nonces, confirm values, passkeys, P-256 key
/// pairs and distributed keys, and the host's own random static address.
///
/// ``system`` (the default) draws from the operating system's secure generator, and is the only
/// choice for real pairing. ``seeded(_:)`` draws from a deterministic generator: the same seed
/// and the same inputs give the same bytes, so a pairing can be replayed byte for byte from a
/// capture and a test runs the same way every time. Its keys are predictable by anyone who knows
/// the seed — use it in tests and replays only.
public struct HostRandomness: RandomNumberGenerator, Sendable {
    private enum Source: Sendable {
        case system
        case seeded(SplitMix64)
    }

    private var source: Source

    /// The operating system's secure generator.
    public static var system: HostRandomness { HostRandomness(source: .system) }

    /// A deterministic generator started from `seed` (tests and replays only; see the type).
    public static func seeded(_ seed: UInt64) -> HostRandomness { HostRandomness(source: .seeded(SplitMix64(seed: seed))) }

    /// True for a ``seeded(_:)`` source.
    public var isDeterministic: Bool {
        if case .seeded = source { return true }
        return false
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        switch source {
        case .system:
            var generator = SystemRandomNumberGenerator()
            return generator.next()
        case var .seeded(generator):
            let value = generator.next()
            source = .seeded(generator)
            return value
        }
    }

    /// `count` random octets.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count + 7)
        while out.count < count {
            var word = next()
            for _ in 0..<8 {
                out.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
        }
        return Array(out.prefix(count))
    }

    /// An independent source for one part (one link's pairing): the system's generator again,
    /// or a seeded generator whose seed is drawn from this one, so each link's numbers depend
    /// only on the host's seed and the order links were opened in.
    public mutating func fork() -> HostRandomness {
        switch source {
        case .system: return .system
        case .seeded: return .seeded(next())
        }
    }
}
