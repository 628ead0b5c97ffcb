/// The records of a ``ValueLogStream`` released at their recorded pace, read from the file as
/// they are played: ``ValueReplay`` for logs of any size, in the stream's bounded memory (one
/// read chunk and one line) rather than the whole file.
///
/// Pacing is ``ValueReplay``'s: each record is released when as much time has passed on `clock`
/// since the first matching record as passed between them in the recording, scaled by the pace.
/// The stream's warnings (a truncated last line, a malformed line, a record out of order) reach
/// its `warn` as the lines are read; a strict stream throws instead, ending the replay there.
public struct StreamedValueReplay<C: Clock> where C.Duration == Duration {
    private let stream: ValueLogStream
    /// How fast records are played.
    public let pace: ReplayPace
    /// Which records are played.
    public let filter: ValueRecordFilter
    private let clock: C
    /// Recorded time of the first matching record, seconds.
    private var firstTimestamp: Double?
    /// Clock instant at which the first matching record was released.
    private var start: C.Instant?
    /// Records released in a row without waiting; every ``yieldEvery`` of them the task yields,
    /// so a replay as fast as possible does not hold a thread of the pool for the whole file.
    private var unpaced = 0
    /// See `unpaced`.
    static var yieldEvery: Int { 64 }

    /// A replay of the records of `stream` that match `filter`, paced on `clock`.
    public init(stream: ValueLogStream, pace: ReplayPace = .original, filter: ValueRecordFilter = .all, clock: C) {
        self.stream = stream
        self.pace = pace
        self.filter = filter
        self.clock = clock
    }

    /// The next record once its time has come; nil at the end of the file or when the task is
    /// cancelled. Throws the stream's error for a file that cannot be read on, or for a damaged
    /// line when the stream is strict.
    public mutating func next() async throws(ValueLogError) -> ValueRecord? {
        while !Task.isCancelled {
            guard let record = try stream.next() else { return nil }
            guard filter == .all || filter.matches(record) else { continue }
            let first = firstTimestamp ?? record.timestamp
            firstTimestamp = first
            if let offset = pace.releaseOffset(afterRecordedSeconds: record.timestamp - first) {
                let origin = start ?? clock.now
                start = origin
                do { try await clock.sleep(until: origin.advanced(by: .seconds(offset)), tolerance: nil) } catch { return nil }
                if Task.isCancelled { return nil }
                unpaced = 0
            } else {
                unpaced += 1
                if unpaced >= Self.yieldEvery {
                    unpaced = 0
                    await Task.yield()
                }
            }
            return record
        }
        return nil
    }
}

extension StreamedValueReplay where C == ContinuousClock {
    /// A replay of the records of `stream` that match `filter`, paced on the real monotonic clock.
    public init(stream: ValueLogStream, pace: ReplayPace = .original, filter: ValueRecordFilter = .all) {
        self.init(stream: stream, pace: pace, filter: filter, clock: ContinuousClock())
    }
}
