import BluetideSupport
import BluetideTransport
import Foundation

/// `BLUETIDE_VIRTUAL_TIME=1` (hidden, for tests and fast simulations): a command whose devices
/// are all emulated (`--emulate` on a virtual transport) runs its world on a ``ManualClock``
/// that moves as soon as the work queued has had its turn, so `scan --scan-time 5` passes in
/// milliseconds and sees every emulated device, however busy the machine. Commands that talk to
/// a real radio or another process ignore it. Supported by `scan`, `read`, `write`, `gatt`,
/// `subscribe`, `record`, `shell`, `reflex coach run` and `reflex coach session`.
enum VirtualTimeOption {
    /// The environment variable.
    static let variable = "BLUETIDE_VIRTUAL_TIME"

    /// A fresh manual clock when `environment` asks for virtual time and `emulated` says every
    /// device is emulated; nil otherwise.
    static func clock(environment: [String: String] = ProcessInfo.processInfo.environment, emulated: Bool) -> ManualClock? {
        guard emulated, isRequested(environment) else { return nil }
        return ManualClock()
    }

    /// Whether `environment` asks for virtual time (whatever the command's devices are).
    static func isRequested(_ environment: [String: String]) -> Bool {
        EnvironmentFlag.isOn(variable, in: environment)
    }

    /// Runs `body` on the clock the command's session should run on: in virtual time on a fresh
    /// manual clock when the environment asks for it and `session` emulates every device on a
    /// virtual transport, else on the monotonic clock.
    static func run(
        _ session: DeviceSessionOptions, environment: [String: String] = ProcessInfo.processInfo.environment,
        _ body: @escaping @Sendable (BluetideClock) async throws -> Void
    ) async throws {
        if let manual = clock(environment: environment, emulated: session.emulatesEveryDevice) {
            try await manual.advancing { try await body(BluetideClock(manual)) }
        } else {
            try await body(.continuous)
        }
    }
}

extension DeviceSessionOptions {
    /// Whether every device the command talks to is one of its `--emulate` devices: `--emulate`
    /// on the in-process virtual radio.
    var emulatesEveryDevice: Bool {
        guard emulate != nil, let spec = try? TransportSpec(parsing: transport), case .virtual = spec.kind else { return false }
        return true
    }
}
