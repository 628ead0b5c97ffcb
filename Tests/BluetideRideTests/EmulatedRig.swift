import Synchronization
import Bluetide
import BluetideEmulation
import BluetideDeviceModels
import BluetideTestSupport
import BluetideTransport
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
    /// A configuration for the rigs here, which run on the wall clock (their emulated devices
    /// tick in real time): the hosts' set-up limit is 60 s, a hang guard for a machine that
    /// starves the test process (the 10 s default ran out in full runs with two CPU hogs).
    static func patient(scanSeconds: Double = 5, retryDelay: Duration = .seconds(2)) -> Self {
        var policy = ConnectionPolicy.resilient
        policy.setupTimeout = .seconds(60)
        return Self(scanSeconds: scanSeconds, policy: policy, retryDelay: retryDelay)
    }
}

/// Emulated devices on a private virtual link, and a Bluetooth handle on the same link.
final class EmulatedRig: Sendable {
    let linkName: String
    let bluetooth: Bluetooth
    private let devices: Mutex<[String: EmulatedPeripheral]>

    private init(linkName: String, bluetooth: Bluetooth, devices: [String: EmulatedPeripheral]) {
        self.linkName = linkName
        self.bluetooth = bluetooth
        self.devices = Mutex(devices)
    }

    /// The fixed address of emulated model number `index`.
    static func address(_ index: Int) -> BluetoothAddress { .randomStatic(0xB1DE_0000_0000 &+ UInt64(index) &+ 1) }

    /// Starts `models` (catalog names) and opens a Bluetooth handle on their link.
    static func start(_ models: [String], options: EmulatorOptions = EmulatorOptions()) async throws -> EmulatedRig {
        let linkName = "ride-\(UUID().uuidString.prefix(8))"
        var devices: [String: EmulatedPeripheral] = [:]
        for (index, name) in models.enumerated() {
            devices[name] = try await launch(name, index: index, link: linkName, options: options)
        }
        let bluetooth = try await Bluetooth.open(transport: "virtual:\(linkName)")
        return EmulatedRig(linkName: linkName, bluetooth: bluetooth, devices: devices)
    }

    private static func launch(_ name: String, index: Int, link: String, options: EmulatorOptions) async throws -> EmulatedPeripheral {
        guard let model = EmulatorCatalog.make(name: name, seed: UInt64(index), options: options) else {
            throw TimedOut(what: "unknown model \(name)")
        }
        let transport = await VirtualTransport.attach(toLinkNamed: link)
        return try await EmulatedPeripheral.launch(transport: transport, models: [model], address: address(index))
    }

    /// Kills the device running `name` (its controller leaves the link: a sudden drop-out).
    func kill(_ name: String) async {
        guard let device = devices.withLock({ $0.removeValue(forKey: name) }) else { return }
        await device.stop()
        await device.close()
    }

    /// Starts `name` again at model number `index`'s address.
    func restart(_ name: String, index: Int) async throws {
        let device = try await Self.launch(name, index: index, link: linkName, options: EmulatorOptions())
        devices.withLock { $0[name] = device }
    }

    func close() async {
        await bluetooth.close()
        for device in devices.withLock({ Array($0.values) }) {
            await device.stop()
            await device.close()
        }
    }
}
