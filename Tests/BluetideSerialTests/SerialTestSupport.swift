import Bluetide
import BluetideEmulation
import BluetideDeviceModels
import BluetideSerial
import BluetideTestSupport
import BluetideTransport
import Foundation
import Synchronization
import Testing

struct StepTimedOut: Error, CustomStringConvertible {
    let what: String
    var description: String { "test step timed out: \(what)" }
}

/// Runs `body` with a hang guard of `seconds` of run time (not a timing check).
func within<T: Sendable>(_ seconds: Double, _ what: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withRunTimeLimit(seconds, onTimeout: { StepTimedOut(what: what) }, body)
}

/// A private virtual link with a central on it and emulated serial devices that can be killed
/// and started again at the same address.
final class SerialWorld: Sendable {
    let linkName = "serial-\(UUID().uuidString.prefix(8))"
    let bluetooth: Bluetooth
    private let devices = Mutex<[String: (EmulatedPeripheral, VirtualTransport)]>([:])

    init() async throws {
        bluetooth = try await Bluetooth.open(transport: "virtual:\(linkName)")
    }

    var central: Central { bluetooth.central }

    /// Starts (or restarts) an emulated `model` (catalog name) called `name` at address `index`.
    @discardableResult
    func start(_ model: String, name: String, index: UInt64) async throws -> EmulatedPeripheral {
        let transport = await VirtualTransport.attach(toLinkNamed: linkName)
        var options = EmulatorOptions()
        options.localName = name
        let made = try #require(EmulatorCatalog.make(name: model, options: options))
        let device = try await EmulatedPeripheral.launch(
            transport: transport, models: [made], name: name, address: .randomStatic(0xB1DE_5E00_0000 &+ index))
        devices.withLock { $0[name] = (device, transport) }
        return device
    }

    /// Finds the device called `name` and makes a serial link to it (within a hang guard).
    func connect(
        _ name: String, options: SerialLinkOptions = SerialLinkOptions(), clock: any Clock<Duration> = ContinuousClock()
    ) async throws -> SerialLink {
        try await within(30, "connect to \(name)") { [central] in
            try await SerialLink.connect(
                to: try await SerialScanner(central: central).find(name), on: central, options: options, clock: clock)
        }
    }

    /// Cuts the device's links (as if it lost power) and stops it.
    func kill(_ name: String) async {
        guard let (device, transport) = devices.withLock({ $0.removeValue(forKey: name) }) else { return }
        await transport.controller.link.linkLoss(transport.controller)
        await device.stop()
        await device.close()
    }

    func close() async {
        await bluetooth.close()
        for name in devices.withLock({ Array($0.keys) }) { await kill(name) }
    }
}

/// Collects a link's received bytes and status events; tests wait on them as they arrive.
final class LinkRecorder: Sendable {
    /// What the link delivered so far.
    struct Log: Sendable {
        var bytes: [UInt8] = []
        var statuses: [SerialStatus] = []
    }
    private let log = Observed(Log())
    private let tasks: [Task<Void, Never>]

    init(_ link: SerialLink) {
        let log = self.log
        tasks = [
            Task { for await chunk in link.bytes { log.update { $0.bytes += chunk } } },
            Task { for await event in link.status { log.update { $0.statuses.append(event) } } },
        ]
    }

    var bytes: [UInt8] { log.value.bytes }
    var statuses: [SerialStatus] { log.value.statuses }

    /// Waits until `condition` holds for what arrived (checked on each arrival; put a hang guard around it).
    func wait(until condition: @escaping @Sendable (Log) -> Bool) async throws {
        try await log.wait(until: condition)
    }

    func stop() { for task in tasks { task.cancel() } }
}

/// Deterministic pseudo-random bytes.
func randomBytes(_ count: Int, seed: UInt64) -> [UInt8] {
    var state = seed | 1
    return (0..<count).map { _ in
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        return UInt8(truncatingIfNeeded: state)
    }
}
