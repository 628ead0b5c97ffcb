import BluetideBase
import BluetideSupport

/// Stamps values with the recording's time and appends them to a log: what a `record` command
/// or an app wires to a live connection's notifications, reads and writes.
///
/// Record time `t` is the time on `clock` (monotonic) since the recorder was made; wall-clock
/// time comes from `wallClock` (the system clock by default, nil to leave it out). Like its
/// writer, a recorder belongs to one task.
public final class ValueRecorder<C: Clock> where C.Duration == Duration {
    /// Where records go.
    public let writer: ValueLogWriter
    /// The monotonic clock that times records.
    public let clock: C
    /// The instant of record time 0.
    public let start: C.Instant
    private let wallClock: @Sendable () -> WallClockTime?

    /// A recorder whose time 0 is now on `clock`.
    public init(
        writer: ValueLogWriter, clock: C, wallClock: @escaping @Sendable () -> WallClockTime? = { WallClockTime.now() }
    ) {
        self.writer = writer
        self.clock = clock
        self.wallClock = wallClock
        start = clock.now
    }

    /// Seconds from the start to `instant` (0 for an instant before the start).
    public func seconds(at instant: C.Instant) -> Double {
        max(0, instant.seconds(since: start))
    }

    /// Records one value seen now (or at `instant`, e.g. when the packet arrived), and returns
    /// the record written. Throws what the writer throws.
    @discardableResult
    public func record(
        device: DeviceIdentity, service: BluetoothUUID? = nil, characteristic: BluetoothUUID,
        operation: ValueOperation, value: [UInt8], profile: String? = nil, at instant: C.Instant? = nil
    ) throws(ValueLogError) -> ValueRecord {
        let record = ValueRecord(
            timestamp: seconds(at: instant ?? clock.now), wallClock: wallClock(), device: device, service: service,
            characteristic: characteristic, operation: operation, value: value, profile: profile)
        try writer.append(record)
        return record
    }
}

extension ValueRecorder where C == ContinuousClock {
    /// A recorder timed by the real monotonic clock, starting now.
    public convenience init(writer: ValueLogWriter) {
        self.init(writer: writer, clock: ContinuousClock())
    }
}
