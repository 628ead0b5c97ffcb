import BluetideBase
import BluetideProfiles
import BluetideRecording
import Foundation

/// Writes a ride's readings to a value log, each stamped with the ride time it arrived at, so
/// the log replays into the same samples (see ``RecordedRideSource``). Owned by the session.
final class RideRecorder {
    private let writer: ValueLogWriter
    private let start: WallClockTime

    /// A recorder writing a new log at `path`.
    init(path: String) throws {
        start = WallClockTime.now()
        do {
            writer = try ValueLogWriter(path: path, header: ValueLogHeader(startedAt: start), flushEvery: 16)
        } catch {
            throw RideError("--record \(path): \(error)")
        }
    }

    func record(_ reading: RideReading) throws {
        try writer.append(ValueRecord(
            timestamp: reading.time,
            wallClock: WallClockTime(millisecondsSince1970: start.millisecondsSince1970 + Int64((reading.time * 1000).rounded())),
            device: DeviceIdentity(address: reading.device.address, name: reading.device.name), service: reading.device.role.service,
            characteristic: reading.characteristic, operation: .notify, value: reading.bytes,
            profile: ProfileCatalog.forCharacteristic(reading.characteristic)?.name))
    }

    /// Records the trainer being asked for `target` (nil: free riding) at ride time `time`, as
    /// the write it is on the trainer (``RideTargetLog``).
    func recordTarget(
        _ target: RideTarget?, trainer: RideDevice, time: Double, parameters: SimulationParameters?,
        resistanceRange: SupportedResistanceLevelRange?
    ) throws {
        let entries = RideTargetLog.entries(for: target, role: trainer.role, parameters: parameters, resistanceRange: resistanceRange)
        for entry in entries {
            try writer.append(ValueRecord(
                timestamp: time,
                wallClock: WallClockTime(millisecondsSince1970: start.millisecondsSince1970 + Int64((time * 1000).rounded())),
                device: DeviceIdentity(address: trainer.address, name: trainer.name), service: trainer.role.service,
                characteristic: entry.characteristic, operation: entry.isRead ? .read : .write, value: entry.bytes,
                profile: ProfileCatalog.forCharacteristic(entry.characteristic)?.name))
        }
    }

    func flush() { try? writer.flush() }

    func close() throws { try writer.close() }
}
