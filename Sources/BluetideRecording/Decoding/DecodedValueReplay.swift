/// A replay whose records come out decoded: the same pacing as ``ValueReplay``, each record
/// passed through a ``ValueLogDecoder`` (one stateful decoder per device and characteristic).
public struct DecodedValueReplay<C: Clock>: AsyncSequence, Sendable where C.Duration == Duration {
    public typealias Element = DecodedValueRecord
    public typealias Failure = Never

    /// The paced records.
    public let replay: ValueReplay<C>
    /// The decoder each iteration starts from.
    public let decoder: ValueLogDecoder

    /// `replay`'s records, each decoded by (a copy of) `decoder`.
    public init(replay: ValueReplay<C>, decoder: ValueLogDecoder = ValueLogDecoder()) {
        self.replay = replay
        self.decoder = decoder
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(records: replay.makeAsyncIterator(), decoder: decoder)
    }

    /// Releases decoded records one by one at their time.
    public struct Iterator: AsyncIteratorProtocol, Sendable {
        public typealias Element = DecodedValueRecord
        public typealias Failure = Never

        var records: ValueReplay<C>.Iterator
        var decoder: ValueLogDecoder

        /// The next decoded record once its time has come; nil at the end or on cancellation.
        public mutating func next() async -> DecodedValueRecord? {
            guard let record = await records.next() else { return nil }
            return decoder.decode(record)
        }
    }
}

extension ValueReplay {
    /// This replay with each record decoded by `decoder`.
    public func decoded(with decoder: ValueLogDecoder = ValueLogDecoder()) -> DecodedValueReplay<C> {
        DecodedValueReplay(replay: self, decoder: decoder)
    }
}
