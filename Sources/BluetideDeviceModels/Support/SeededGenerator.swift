import BluetideSupport

/// The emulated devices' deterministic random numbers (SplitMix64, shared with the coach and
/// the simulated athletes): the same seed gives the same bytes for the same time axis.
public typealias SeededGenerator = SplitMix64
