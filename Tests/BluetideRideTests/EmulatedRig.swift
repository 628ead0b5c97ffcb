import Synchronization
import Bluetide
import BluetideEmulation
import BluetideDeviceModels
import BluetideSupport
import BluetideTestSupport
import BluetideRide
import Foundation

struct TimedOut: Error, CustomStringConvertible {
    var what: String
    var description: String { "timed out: \(what)" }
}

/// Runs `body` under a run-time limit (a hang guard, not a timing check).
func guarded<T: Sendable>(_ what: String, seconds: Double = 60, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withRunTimeLimit(seconds, onTimeout: { TimedOut(what: what) }, body)
}

extension LiveRideSource.Configuration {
    /// A configuration for the rigs here: the resilient policy, a `scanSeconds` scan and a
    /// `retryDelay` pause before connecting afresh; set-up and operation limits of 120 s and a
    /// trainer control limit of 60 s, all of virtual time.
    ///
    /// The long limits cost no wall time (a reply that comes, comes at once), but they leave
    /// `ManualClock.advancing` thousands of its 10 ms steps before a reply still in flight on a
    /// thread the OS has preempted counts as lost: the driver cannot see such work, and under two
    /// CPU hogs the 10 s default set-up limit passed in 26 ms of wall time.
    static func onRig(scanSeconds: Double = 10, retryDelay: Duration = .seconds(2)) -> Self {
        var policy = ConnectionPolicy.resilient
        policy.setupTimeout = .seconds(120)
        policy.operationTimeout = .seconds(120)
        return Self(scanSeconds: scanSeconds, policy: policy, retryDelay: retryDelay, controlTimeout: .seconds(60))
    }
}

/// Emulated devices and a Bluetooth handle in a ``VirtualWorld`` on a ``ManualClock``: the
/// devices' ticks, the radio, every time limit and the ride's own ticks run in virtual time
/// (``with(_:options:seconds:_:_:)`` drives it), so a busy machine makes a test slower, never
/// different.
final class EmulatedRig: Sendable {
    let world: VirtualWorld
    /// The clock the world runs on.
    let manual: ManualClock
    let bluetooth: Bluetooth
    private let options: EmulatorOptions
    private let devices: Mutex<[String: EmulatedPeripheral]>
    private let closed = Mutex(false)

    private init(world: VirtualWorld, manual: ManualClock, bluetooth: Bluetooth, options: EmulatorOptions, devices: [String: EmulatedPeripheral]) {
        self.world = world
        self.manual = manual
        self.bluetooth = bluetooth
        self.options = options
        self.devices = Mutex(devices)
    }

    /// The link's name (`virtual:NAME` reaches it).
    var linkName: String { world.linkName }

    /// The fixed address of emulated model number `index`.
    static func address(_ index: Int) -> BluetoothAddress { .randomStatic(0xB1DE_0000_0000 &+ UInt64(index) &+ 1) }

    /// Starts `models` (catalog names) in a fresh world on `manual` and opens a Bluetooth handle
    /// in it. Call it inside `manual.advancing { … }` (``with(_:options:seconds:_:_:)`` does).
    static func start(_ models: [String], options: EmulatorOptions = EmulatorOptions(), on manual: ManualClock) async throws -> EmulatedRig {
        let world = VirtualWorld(linkName: "ride-\(UUID().uuidString.prefix(8))", clock: BluetideClock(manual))
        do {
            var devices: [String: EmulatedPeripheral] = [:]
            for (index, name) in models.enumerated() {
                devices[name] = try await launch(name, index: index, in: world, options: options)
            }
            let bluetooth = try await world.openHost(configuration: hostConfiguration)
            return EmulatedRig(world: world, manual: manual, bluetooth: bluetooth, options: options, devices: devices)
        } catch {
            await world.close()
            throw error
        }
    }

    /// Starts a rig with `models` on a fresh ``ManualClock`` and runs `body` with it in virtual
    /// time (`advancing`, in steps of 1 ms: work in flight on a thread the OS preempted, which
    /// the driver cannot see, gets ten times as many quiet windows as with the default 10 ms),
    /// under a wall-clock hang guard of `seconds` (not a timing check); closes the rig whether
    /// `body` threw or not.
    static func with<T: Sendable>(
        _ models: [String], options: EmulatorOptions = EmulatorOptions(), seconds: Double = 180, _ what: String,
        _ body: @escaping @Sendable (EmulatedRig) async throws -> T
    ) async throws -> T {
        let manual = ManualClock()
        return try await guarded(what, seconds: seconds) {
            try await manual.advancing(step: .milliseconds(1)) {
                let rig = try await start(models, options: options, on: manual)
                do {
                    let value = try await body(rig)
                    await rig.close()
                    return value
                } catch {
                    await rig.close()
                    throw error
                }
            }
        }
    }

    /// The rig's hosts: HCI commands and connect attempts with generous virtual-time limits
    /// (see ``LiveRideSource/Configuration/onRig(scanSeconds:retryDelay:)`` for why).
    static var hostConfiguration: Bluetooth.Configuration {
        var configuration = Bluetooth.Configuration()
        configuration.commandTimeout = .seconds(120)
        configuration.connectTimeout = .seconds(60)
        return configuration
    }

    private static func launch(_ name: String, index: Int, in world: VirtualWorld, options: EmulatorOptions) async throws -> EmulatedPeripheral {
        guard let model = EmulatorCatalog.make(name: name, seed: UInt64(index), options: options) else {
            throw TimedOut(what: "unknown model \(name)")
        }
        return try await world.emulate([model], address: address(index), commandTimeout: .seconds(120))
    }

    /// Kills the device running `name` (its controller leaves the link: a sudden drop-out).
    func kill(_ name: String) async {
        guard let device = devices.withLock({ $0.removeValue(forKey: name) }) else { return }
        await device.stop()
        await device.close()
    }

    /// Starts `name` again at model number `index`'s address.
    func restart(_ name: String, index: Int) async throws {
        let device = try await Self.launch(name, index: index, in: world, options: options)
        devices.withLock { $0[name] = device }
    }

    /// Closes the handle, the devices and the world (once; later calls do nothing).
    func close() async {
        guard closed.withLock({ was in defer { was = true }; return !was }) else { return }
        await bluetooth.close()
        for device in devices.withLock({ Array($0.values) }) {
            await device.stop()
            await device.close()
        }
        await world.close()
    }
}
