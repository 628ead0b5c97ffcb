import BluetideSupport

/// The coach's deterministic random numbers (SplitMix64, shared with the emulators and the
/// simulated athletes): the same seed gives the same sequence on every platform.
public typealias SeededGenerator = SplitMix64
