/// How fast a replay plays records back.
public enum ReplayPace: Sendable, Hashable {
    /// Records come out as far apart as they were recorded.
    case original
    /// Recorded gaps divided by the factor: `2` plays twice as fast, `0.5` half as fast. A
    /// factor that is not a positive finite number plays as fast as possible.
    case speed(Double)
    /// No waiting at all.
    case asFastAsPossible

    /// Seconds after the first record at which a record `elapsed` recorded seconds later is
    /// released, or nil when nothing is to be waited for.
    func releaseOffset(afterRecordedSeconds elapsed: Double) -> Double? {
        let factor: Double
        switch self {
        case .original: factor = 1
        case let .speed(value):
            guard value.isFinite, value > 0 else { return nil }
            factor = value
        case .asFastAsPossible: return nil
        }
        // Out-of-order timestamps release at once; the clamp keeps Duration arithmetic in range.
        let offset = max(0, elapsed) / factor
        guard offset.isFinite else { return ValueLogFormat.maximumTimestamp }
        return min(offset, ValueLogFormat.maximumTimestamp)
    }
}

/// Recorded values played back as an `AsyncSequence`: a data source an app can take in place of
/// a live connection's notifications.
///
/// Each record is released when as much time has passed on `clock` since the first record was
/// released as passed between them in the recording (scaled by the pace). Timing is measured
/// from the start of the replay, so a slow consumer does not make later records drift.
/// The clock is injected: tests pass a virtual clock and never sleep. Cancelling the consuming
/// task ends the sequence promptly (the pending wait is cancelled and `nil` returned).
///
/// Iterating twice replays twice, each from the start.
public struct ValueReplay<C: Clock>: AsyncSequence, Sendable where C.Duration == Duration {
    public typealias Element = ValueRecord
    public typealias Failure = Never

    /// The records that will be played, in order (already filtered).
    public let records: [ValueRecord]
    /// How fast they are played.
    public let pace: ReplayPace
    /// The clock that paces them.
    public let clock: C

    /// A replay of `records` that match `filter`, paced on `clock`.
    public init(records: [ValueRecord], pace: ReplayPace = .original, filter: ValueRecordFilter = .all, clock: C) {
        self.records = filter == .all ? records : records.filter(filter.matches)
        self.pace = pace
        self.clock = clock
    }

    /// A replay of a log's records that match `filter`, paced on `clock`.
    public init(log: ValueLog, pace: ReplayPace = .original, filter: ValueRecordFilter = .all, clock: C) {
        self.init(records: log.records, pace: pace, filter: filter, clock: clock)
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(records: records, pace: pace, clock: clock)
    }

    /// Releases the records one by one at their time.
    public struct Iterator: AsyncIteratorProtocol, Sendable {
        public typealias Element = ValueRecord
        public typealias Failure = Never

        let records: [ValueRecord]
        let pace: ReplayPace
        let clock: C
        var index = 0
        /// Clock instant at which the first record was released.
        var start: C.Instant?

        /// The next record once its time has come; nil at the end or when the task is cancelled.
        public mutating func next() async -> ValueRecord? {
            guard index < records.count, !Task.isCancelled else { return finish() }
            let record = records[index]
            if let first = records.first,
               let offset = pace.releaseOffset(afterRecordedSeconds: record.timestamp - first.timestamp) {
                let origin = start ?? clock.now
                start = origin
                do {
                    try await clock.sleep(until: origin.advanced(by: .seconds(offset)), tolerance: nil)
                } catch {
                    return finish()
                }
                if Task.isCancelled { return finish() }
            }
            index += 1
            return record
        }

        private mutating func finish() -> ValueRecord? {
            index = records.count
            return nil
        }
    }
}

extension ValueReplay where C == ContinuousClock {
    /// A replay of `records` that match `filter`, paced on the real monotonic clock.
    public init(records: [ValueRecord], pace: ReplayPace = .original, filter: ValueRecordFilter = .all) {
        self.init(records: records, pace: pace, filter: filter, clock: ContinuousClock())
    }

    /// A replay of a log's records that match `filter`, paced on the real monotonic clock.
    public init(log: ValueLog, pace: ReplayPace = .original, filter: ValueRecordFilter = .all) {
        self.init(records: log.records, pace: pace, filter: filter, clock: ContinuousClock())
    }
}
