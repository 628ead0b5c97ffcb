import BluetideSupport
import Foundation

/// `BLUETIDE_VIRTUAL_TIME=1` (hidden, for tests and fast simulations): a command whose devices
/// are all emulated (`--emulate` on a virtual transport) runs its world on a ``ManualClock``
/// that moves as soon as the work queued has had its turn, so `scan --scan-time 5` passes in
/// milliseconds and sees every emulated device, however busy the machine. Commands that talk to
/// a real radio or another process ignore it. Supported by `scan`.
enum VirtualTimeOption {
    /// The environment variable.
    static let variable = "BLUETIDE_VIRTUAL_TIME"

    /// A fresh manual clock when `environment` asks for virtual time and `emulated` says every
    /// device is emulated; nil otherwise.
    static func clock(environment: [String: String] = ProcessInfo.processInfo.environment, emulated: Bool) -> ManualClock? {
        guard emulated, let value = environment[variable], ["1", "true", "yes"].contains(value.lowercased()) else { return nil }
        return ManualClock()
    }
}
