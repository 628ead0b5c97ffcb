import BluetideBase
import BluetideRecording
import Synchronization

/// A recorded ride played back as a data source: the values a ride recorded (its value log),
/// released at their recorded pace, faster, or as fast as possible, once or looped. Ticks are
/// made at each whole recorded second, so the samples are the ones the live ride made.
///
/// A source made from a file reads it as it plays (``ValueLogStream``: one read chunk and one
/// line in memory, whatever the ride's length), so its first reading comes out before the rest of
/// the file is read, and its devices become known as their first values are played. A damaged
/// line is reported to `warn` with its line number and passed over; with `strict` it ends the
/// replay instead, and ``failure`` says why. The trainer targets the ride recorded (its writes to
/// the trainer, ``RideTargetLog``) come out as ``RideEvent/target(_:time:)`` at their time.
public final class RecordedRideSource<C: Clock>: RideDataSource where C.Duration == Duration {
    /// Where the values come from.
    private enum Origin: Sendable {
        /// Readings and targets held in memory.
        case items([Item])
        /// A value log read as it is played.
        case file(path: String, strict: Bool, warn: @Sendable (ValueLogWarning) -> Void)
    }

    /// How fast the values are played.
    public let pace: ReplayPace
    /// Whether the recording starts again when it ends (time goes on increasing).
    public let loop: Bool
    private let origin: Origin
    private let clock: C
    private let task = TaskBox()
    private let shared = Shared()

    /// What the playing task finds out, for whoever asks.
    private final class Shared: Sendable {
        struct State {
            /// The devices seen so far, in order of their first reading.
            var devices: [RideDevice] = []
            /// Why a file replay ended early.
            var failure: ValueLogError?
            /// The file's header, once started.
            var header: ValueLogHeader?
            /// Whether every value was played (not stopped, not failed).
            var playedToEnd = false
        }

        let state = Mutex(State())

        func saw(_ device: RideDevice) {
            state.withLock { if !$0.devices.contains(device) { $0.devices.append(device) } }
        }
    }

    /// A source playing `records` (a value log's records; writes and unknown characteristics
    /// are passed over) at `pace` on `clock`.
    public init(records: [ValueRecord], pace: ReplayPace = .original, loop: Bool = false, clock: C) {
        var targets = RideTargetLog.Reader()
        let items = records.compactMap { Self.item(from: $0, targets: &targets) }
        origin = .items(items)
        self.pace = pace
        self.loop = loop
        self.clock = clock
        for case let .reading(reading) in items { shared.saw(reading.device) }
    }

    /// What a replay gives: a device's value, or the target the trainer was asked for.
    enum Item: Sendable {
        case reading(RideReading)
        case target(RideTarget?, time: Double)

        var time: Double {
            switch self {
            case let .reading(reading): reading.time
            case let .target(_, time): time
            }
        }
    }

    /// The item a record gives: a reading, a target (read with `targets`, which keeps what it
    /// needs from earlier records), or nothing.
    static func item(from record: ValueRecord, targets: inout RideTargetLog.Reader) -> Item? {
        if let reading = reading(from: record) { return .reading(reading) }
        if let target = targets.target(characteristic: record.characteristic, bytes: record.value, isWrite: !record.operation.isFromDevice) {
            return .target(target, time: record.timestamp)
        }
        return nil
    }

    /// A source playing the value log at `path` as it reads it, at `pace` on `clock`. Damaged
    /// lines go to `warn` naming the line (on the first pass of a loop only); with `strict` the
    /// first one ends the replay and is kept in ``failure``.
    public init(
        path: String, pace: ReplayPace = .original, loop: Bool = false, strict: Bool = false,
        warn: @escaping @Sendable (ValueLogWarning) -> Void = { _ in }, clock: C
    ) {
        origin = .file(path: path, strict: strict, warn: warn)
        self.pace = pace
        self.loop = loop
        self.clock = clock
    }

    /// The reading a record carries: a device's value on a characteristic a ride role carries.
    public static func reading(from record: ValueRecord) -> RideReading? {
        guard record.operation.isFromDevice, let role = RideDeviceRole.carrying(record.characteristic) else { return nil }
        return RideReading(
            time: record.timestamp, device: RideDevice(role: role, address: record.device.address, name: record.device.name),
            characteristic: record.characteristic, bytes: record.value)
    }

    /// The records a ride replays (those ``reading(from:)`` turns into readings): device values
    /// on the characteristics ride roles carry.
    public static var readingFilter: ValueRecordFilter {
        ValueRecordFilter(
            characteristics: Set(RideDeviceRole.allCases.map(\.dataCharacteristic)).union(RideTargetLog.Reader.characteristics),
            operations: Set(ValueOperation.allCases))
    }

    /// The devices given values of so far (all of them, for a source made from records), in
    /// order of their first reading.
    public var devices: [RideDevice] { shared.state.withLock { $0.devices } }

    public var trainer: (any TrainerControl)? { nil }

    /// Why a file replay stopped before its end (a read error, or a damaged line with `strict`);
    /// nil while it plays or when it played to the end.
    public var failure: ValueLogError? { shared.state.withLock { $0.failure } }

    /// The header of the value log a file source plays (once started): when the ride was
    /// recorded and by what. Nil for a source made from records.
    public var header: ValueLogHeader? { shared.state.withLock { $0.header } }

    /// Whether the replay played to its end (a looped one never does): false while it plays,
    /// after ``stop()`` and after a ``failure``.
    public var playedToEnd: Bool { shared.state.withLock { $0.playedToEnd } }

    /// Starts playing. A file source opens the file and checks its header first, throwing
    /// ``RideError`` naming the file when it cannot be read.
    public func start() async throws -> AsyncStream<RideEvent> {
        let (stream, continuation) = AsyncStream<RideEvent>.makeStream(bufferingPolicy: .unbounded)
        var player = Player(continuation: continuation, shared: shared)
        let pace = pace, loop = loop, clock = clock
        let work: Task<Void, Never>
        switch origin {
        case let .items(items):
            work = Task {
                repeat {
                    // Recorded times only: the replay paces them, the item comes from the list.
                    let records = items.map { item in
                        ValueRecord(timestamp: item.time, device: DeviceIdentity(address: "-"), characteristic: .fitnessMachine, operation: .notify, value: [])
                    }
                    var pass = PassIterator.memory(ValueReplay(records: records, pace: pace, clock: clock).makeAsyncIterator(), items, 0)
                    guard await player.playPass(&pass) else { break }
                } while loop && !Task.isCancelled
                player.finish()
            }
        case let .file(path, strict, warn):
            // The first pass's stream is opened here, so a missing file or a bad header fails `start()`.
            let first: ValueLogStream
            do { first = try ValueLogStream(path: path, strict: strict, warn: warn) } catch {
                throw RideError("\(path): \(error) (a ride recording is a value log, see docs/value-log-format.md)")
            }
            shared.state.withLock { $0.header = first.header }
            work = Task {
                var pass = PassIterator.file(StreamedValueReplay(stream: first, pace: pace, filter: Self.readingFilter, clock: clock), .init())
                while await player.playPass(&pass), loop, !Task.isCancelled {
                    do throws(ValueLogError) {
                        // Later passes were checked by the first: their warnings are not repeated.
                        let again = try ValueLogStream(path: path, strict: strict, warn: { _ in })
                        pass = .file(StreamedValueReplay(stream: again, pace: pace, filter: Self.readingFilter, clock: clock), .init())
                    } catch {
                        player.fail(error)
                        break
                    }
                }
                player.finish()
            }
        }
        task.set(work)
        continuation.onTermination = { _ in work.cancel() }
        return stream
    }

    public func stop() async { task.cancel() }

    /// The paced items of one pass: held items, or a file read as it plays.
    private enum PassIterator {
        case memory(ValueReplay<C>.Iterator, [Item], Int)
        case file(StreamedValueReplay<C>, RideTargetLog.Reader)

        /// The next item once its time has come; nil at the end or on cancellation. Throws the
        /// file's error (with `strict`, a damaged line).
        mutating func next() async throws(ValueLogError) -> Item? {
            switch self {
            case .memory(var replay, let items, let index):
                guard await replay.next() != nil, index < items.count else { return nil }
                self = .memory(replay, items, index + 1)
                return items[index]
            case .file(var replay, var targets):
                defer { self = .file(replay, targets) }
                while let record = try await replay.next() {
                    if let item = RecordedRideSource.item(from: record, targets: &targets) { return item }
                }
                return nil
            }
        }
    }

    /// Plays passes: shifts each pass after the one before (by its last time plus a second) and
    /// makes a tick at each whole second.
    private struct Player {
        let continuation: AsyncStream<RideEvent>.Continuation
        let shared: Shared
        /// Added to the recorded times of this pass.
        var offset = 0.0
        var nextTick = 1.0
        /// Readings played, over every pass.
        var played = 0

        /// Plays one pass; false when that ends the replay (cancelled, failed, or nothing in it).
        mutating func playPass(_ pass: inout PassIterator) async -> Bool {
            var last: Double?
            while true {
                let next: Item?
                do { next = try await pass.next() } catch {
                    fail(error)
                    return false
                }
                guard let item = next else { break }
                last = item.time
                let time = item.time + offset
                while nextTick <= time {
                    continuation.yield(.tick(time: nextTick))
                    nextTick += 1
                }
                switch item {
                case var .reading(reading):
                    reading.time = time
                    shared.saw(reading.device)
                    continuation.yield(.reading(reading))
                case let .target(target, _):
                    continuation.yield(.target(target, time: time))
                }
                // A replay as fast as possible (or looped) never waits: let the consumer run.
                played += 1
                if played % 64 == 0 { await Task.yield() }
            }
            guard let last, !Task.isCancelled else { return false }
            offset += last + 1
            // A short recording looped as fast as possible never waits: let others run between passes.
            await Task.yield()
            return true
        }

        func fail(_ error: ValueLogError) {
            shared.state.withLock { $0.failure = error }
        }

        /// Ends the events; the replay played to its end unless it was cancelled or failed.
        func finish() {
            let cancelled = Task.isCancelled
            shared.state.withLock { $0.playedToEnd = !cancelled && $0.failure == nil }
            continuation.finish()
        }
    }
}

extension RecordedRideSource where C == ContinuousClock {
    /// A source playing `records` on the real clock.
    public convenience init(records: [ValueRecord], pace: ReplayPace = .original, loop: Bool = false) {
        self.init(records: records, pace: pace, loop: loop, clock: ContinuousClock())
    }

    /// A source playing the value log at `path` as it reads it, on the real clock.
    public convenience init(
        path: String, pace: ReplayPace = .original, loop: Bool = false, strict: Bool = false,
        warn: @escaping @Sendable (ValueLogWarning) -> Void = { _ in }
    ) {
        self.init(path: path, pace: pace, loop: loop, strict: strict, warn: warn, clock: ContinuousClock())
    }
}
