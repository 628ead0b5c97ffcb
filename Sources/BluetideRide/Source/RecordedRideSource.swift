import BluetideCore
import BluetideRecording

/// A recorded ride played back as a data source: the values a ride recorded (its value log),
/// released at their recorded pace, faster, or as fast as possible, once or looped. Ticks are
/// made at each whole recorded second, so the samples are the ones the live ride made.
public final class RecordedRideSource<C: Clock>: RideDataSource where C.Duration == Duration {
    /// The readings the recording holds (values from devices of a known role), in order.
    public let readings: [RideReading]
    /// How fast they are played.
    public let pace: ReplayPace
    /// Whether the recording starts again when it ends (time goes on increasing).
    public let loop: Bool
    private let clock: C
    private let task = TaskBox()

    /// A source playing `records` (a value log's records; writes and unknown characteristics
    /// are passed over) at `pace` on `clock`.
    public init(records: [ValueRecord], pace: ReplayPace = .original, loop: Bool = false, clock: C) {
        readings = Self.readings(from: records)
        self.pace = pace
        self.loop = loop
        self.clock = clock
    }

    /// The readings in `records`: device values on a characteristic a ride role carries.
    public static func readings(from records: [ValueRecord]) -> [RideReading] {
        records.compactMap { record in
            guard record.operation.isFromDevice, let role = RideDeviceRole.carrying(record.characteristic) else { return nil }
            return RideReading(
                time: record.timestamp, device: RideDevice(role: role, address: record.device.address, name: record.device.name),
                characteristic: record.characteristic, bytes: record.value)
        }
    }

    public var devices: [RideDevice] {
        var seen: [RideDevice] = []
        for reading in readings where !seen.contains(reading.device) { seen.append(reading.device) }
        return seen
    }

    public var trainer: (any TrainerControl)? { nil }

    public func start() async throws -> AsyncStream<RideEvent> {
        let (stream, continuation) = AsyncStream<RideEvent>.makeStream(bufferingPolicy: .unbounded)
        let readings = readings, pace = pace, loop = loop, clock = clock
        let length = (readings.last?.time ?? 0) + 1
        let work = Task {
            var offset = 0.0
            var nextTick = 1.0
            repeat {
                let records = readings.map { reading in
                    ValueRecord(
                        timestamp: reading.time + offset, device: DeviceIdentity(address: reading.device.address),
                        characteristic: reading.characteristic, operation: .notify, value: [])
                }
                var index = 0
                for await record in ValueReplay(records: records, pace: pace, clock: clock) {
                    while nextTick <= record.timestamp {
                        continuation.yield(.tick(time: nextTick))
                        nextTick += 1
                    }
                    var reading = readings[index]
                    reading.time = record.timestamp
                    continuation.yield(.reading(reading))
                    index += 1
                }
                if Task.isCancelled || readings.isEmpty { break }
                offset += length
            } while loop
            continuation.finish()
        }
        task.set(work)
        continuation.onTermination = { _ in work.cancel() }
        return stream
    }

    public func stop() async { task.cancel() }
}

extension RecordedRideSource where C == ContinuousClock {
    /// A source playing `records` on the real clock.
    public convenience init(records: [ValueRecord], pace: ReplayPace = .original, loop: Bool = false) {
        self.init(records: records, pace: pace, loop: loop, clock: ContinuousClock())
    }
}
