import BluetideRide
import BluetideSupport
import Foundation

/// The start and the end of a ride command (`ride`, `ride bridge`): the session's samples with
/// its failures in one line, and the wait for --duration or Ctrl-C.
enum RideRunning {
    /// Starts `ride`, turning its failures into a ``CommandFailure``.
    static func start(_ ride: RideSession) async throws -> AsyncStream<RideSample> {
        do { return try await ride.start() } catch let error as RideError {
            throw CommandFailure(error.message)
        } catch {
            throw CommandFailure("\(error)")
        }
    }

    /// Starts catching Ctrl-C, SIGTERM and SIGHUP when `stopOnSignals`: called before the
    /// command starts its ride or prints a line, so a Ctrl-C at any moment stops it the orderly
    /// way (the ride is stopped, the devices let go) instead of killing it.
    static func catchStops(_ stopOnSignals: Bool) -> StopSignal? {
        stopOnSignals ? StopSignal.install() : nil
    }

    /// Waits until `printer` ends (the samples ended), `duration` seconds pass (counted from
    /// now, when the ride runs), or `stop` sees Ctrl-C or SIGTERM (also one caught earlier);
    /// then cancels `printer`. The duration is counted on `clock` (a test's manual clock runs
    /// the ride in virtual time).
    static func wait(for printer: Task<Void, Never>, duration: Double?, stop: StopSignal?, clock: BluetideClock = .continuous) async {
        let ender = Task {
            await withTaskGroup(of: Void.self) { group in
                if let stop { group.addTask { _ = await stop.wait() } }
                if let duration { group.addTask { try? await clock.sleep(for: .seconds(duration)) } }
                if stop == nil, duration == nil {
                    group.addTask { while !Task.isCancelled { try? await clock.sleep(for: .seconds(3600)) } }
                }
                await group.next()
                group.cancelAll()
            }
            printer.cancel()
        }
        await printer.value
        ender.cancel()
        _ = await ender.value
    }

    /// A sample as its `--json` record (`type` `sample`, docs/json-output.md).
    static func sampleLine(_ sample: RideSample, startedAt: Date) -> String {
        JSONObjectLine.line(RideView.jsonObject(sample, startedAt: startedAt))
    }

    /// A device of the ride as its `--json` record: `type` `device`, its `role` and `device`
    /// (with its address type when the source is live; a recording does not keep it).
    static func deviceLine(_ device: RideDevice, source: any RideDataSource) async -> String {
        let address = await (source as? LiveRideSource)?.address(of: device)
        let json = address.map { JSONOutput.device($0, name: device.name) } ?? JSONOutput.device(text: device.address, name: device.name)
        return JSONOutput.line("device", ["role": .string(device.role.rawValue), "device": json])
    }

    /// A notice (trainer confirmations, link changes, workout steps) as its `--json` record.
    static func noticeLine(_ text: String) -> String {
        JSONOutput.line("notice", ["text": .string(text)])
    }
}
