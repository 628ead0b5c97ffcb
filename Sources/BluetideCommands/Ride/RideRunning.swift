import BluetideRide
import BluetideSupport
import Foundation

/// What the ride commands (`ride`, `ride bridge`) share around ``RideRun`` and
/// ``RideBridgeRun``: catching Ctrl-C, and the `--json` records of samples, devices and notices.
enum RideRunning {
    /// Starts catching Ctrl-C, SIGTERM and SIGHUP when `stopOnSignals`: called before the
    /// command starts its ride or prints a line, so a Ctrl-C at any moment stops it the orderly
    /// way (the ride is stopped, the devices let go) instead of killing it.
    static func catchStops(_ stopOnSignals: Bool) -> StopSignal? {
        stopOnSignals ? StopSignal.install() : nil
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
