import BluetideBase
import BluetideSupport
import Synchronization

/// Records live values — a connection's notification streams — into a value log until a count,
/// a stop (a duration, a signal) or the end of a stream (a lost link). What `bluetide record`
/// runs, and what an app that logs a device calls.
///
/// Each value is stamped with the time it arrived on the recorder's clock, not when the
/// recording loop got to it, so a busy machine does not bunch the record times together.
public enum LiveRecording {
    /// One stream of values to record, with what the log says about it.
    public struct Source: Sendable {
        /// The service the characteristic belongs to (nil when unknown).
        public var service: BluetoothUUID?
        /// The characteristic whose values these are.
        public var characteristic: BluetoothUUID
        /// How the values came (`.notify` or `.indicate`).
        public var operation: ValueOperation
        /// The values; the stream's end or failure ends the recording (the link was lost).
        public var values: AsyncThrowingStream<[UInt8], any Error>
        /// The profile the log names for these values (see ``ValueRecord/profile``), if any.
        public var profile: String?

        public init(
            service: BluetoothUUID?, characteristic: BluetoothUUID, operation: ValueOperation,
            values: AsyncThrowingStream<[UInt8], any Error>, profile: String? = nil
        ) {
            self.service = service
            self.characteristic = characteristic
            self.operation = operation
            self.values = values
            self.profile = profile
        }
    }

    /// Why a recording ended.
    public enum Ending: Sendable, Equatable {
        /// The requested number of values was recorded.
        case reachedCount
        /// The stop function returned (a duration passed, a signal came).
        case stopped
        /// A source's stream ended or failed by itself first: the device stopped sending or
        /// the link was lost. `reason` says which (the stream's error, if it failed).
        case sourceEnded(reason: String)
    }

    /// What a recording did.
    public struct Outcome: Sendable, Equatable {
        /// Values written to the log.
        public var records: Int
        /// Values that arrived while ``maximumBacklog`` values already waited to be written,
        /// and were not recorded (0 unless the log's disk could not keep up).
        public var dropped: Int
        /// Why it ended.
        public var ending: Ending
    }

    /// At most this many values wait between the sources and the log; more are dropped and
    /// counted (``Outcome/dropped``), so a stalled disk cannot grow memory without bound.
    public static let maximumBacklog = 16_384

    /// Records `sources` through `recorder` until `count` values (if given), until `stop`
    /// returns, or until a source's stream ends. `written` sees each record after it is in
    /// the log (to print it); an error it throws ends the recording with that error, as does a
    /// write error (a ``ValueLogError``). The sources' streams are not read after the return.
    public static func run<C: Clock>(
        _ sources: [Source], device: DeviceIdentity, into recorder: ValueRecorder<C>, count: Int? = nil,
        until stop: (@Sendable () async -> Void)? = nil,
        written: (ValueRecord) throws -> Void = { _ in }
    ) async throws -> Outcome where C.Duration == Duration {
        let clock = recorder.clock
        let (arrivals, sink) = AsyncStream<Arrival<C.Instant>>.makeStream(bufferingPolicy: .bufferingOldest(maximumBacklog))
        let shared = Shared()
        var tasks: [Task<Void, Never>] = []
        defer { for task in tasks { task.cancel() } }
        for (index, source) in sources.enumerated() {
            tasks.append(Task {
                var reason = "the device stopped sending"
                do {
                    for try await bytes in source.values {
                        if case .dropped = sink.yield(Arrival(source: index, bytes: bytes, at: clock.now)) {
                            shared.dropped.add(1, ordering: .relaxed)
                        }
                    }
                } catch {
                    reason = "\(error)"
                }
                if !Task.isCancelled {
                    shared.ended.withLock { $0 = $0 ?? reason }
                    sink.finish()
                }
            })
        }
        if let stop {
            tasks.append(Task {
                await stop()
                sink.finish()
            })
        }
        var records = 0
        var reachedCount = count.map { $0 <= 0 } ?? false
        if !reachedCount {
            for await arrival in arrivals {
                let source = sources[arrival.source]
                let record = try recorder.record(
                    device: device, service: source.service, characteristic: source.characteristic,
                    operation: source.operation, value: arrival.bytes, profile: source.profile, at: arrival.at)
                records += 1
                try written(record)
                if let count, records >= count { reachedCount = true; break }
            }
        }
        let ending: Ending
        if reachedCount {
            ending = .reachedCount
        } else if let reason = shared.ended.withLock({ $0 }) {
            ending = .sourceEnded(reason: reason)
        } else {
            ending = .stopped
        }
        return Outcome(records: records, dropped: shared.dropped.load(ordering: .relaxed), ending: ending)
    }

    /// What the sources' tasks tell the recording loop.
    final class Shared: Sendable {
        /// Values the backlog had no room for.
        let dropped = Atomic<Int>(0)
        /// Why the first source to end by itself ended.
        let ended = Mutex<String?>(nil)
    }

    /// A value and when it arrived.
    struct Arrival<Instant: Sendable>: Sendable {
        let source: Int
        let bytes: [UInt8]
        let at: Instant
    }
}
