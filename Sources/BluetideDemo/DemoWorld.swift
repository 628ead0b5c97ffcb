import Bluetide
import BluetideSupport
import BluetideEmulation
import BluetideDeviceModels
import Foundation

/// The demo's devices, central and script. Owns what it starts and stops all of it.
public actor DemoWorld {
    /// The emulated devices, in the order they are shown.
    public static let deviceNames = ["heart-rate", "ftms-bike", "colmi-r02", "punch", "hm10"]

    let seed: UInt64
    let liveSeconds: Double
    let emit: @Sendable (DemoEvent) -> Void
    let linkSpec: String
    /// The clock the world, its devices and the script's deadlines run on.
    let clock: BluetideClock
    /// The demo's private link, its devices and the central's host.
    private let world: VirtualWorld
    private var bluetooth: Bluetooth?

    /// A world whose devices draw from `seed`, live for about `liveSeconds`, reporting to `emit`.
    /// Everything — the radio, the devices' pace, the live phase and the time limits — runs on
    /// `clock`: the monotonic clock for a user; a ``ManualClock`` (driven with
    /// ``ManualClock/advancing(step:yields:_:)``) runs the whole demo in virtual time.
    public init(
        seed: UInt64, liveSeconds: Double, clock: BluetideClock = .continuous, emit: @escaping @Sendable (DemoEvent) -> Void
    ) {
        self.seed = seed
        self.liveSeconds = liveSeconds
        self.emit = emit
        self.clock = clock
        // A link of our own, so concurrent demos (and tests) never see each other's devices.
        world = VirtualWorld(linkName: "bluetide-demo-\(UUID().uuidString.prefix(8))", clock: clock)
        linkSpec = world.transportSpec
    }

    /// Starts the devices, scans, connects to each and shows live data; throws ``DemoFailure``
    /// (one line) when a device does not answer.
    public func run() async throws {
        emit(DemoEvent(device: "world", kind: "section", summary: "Virtual world (\(linkSpec))"))
        var addresses: [BluetoothAddress: String] = [:]
        for (index, name) in Self.deviceNames.enumerated() {
            guard let model = EmulatorCatalog.make(name: name, seed: seed &+ UInt64(index)) else {
                throw DemoFailure("\(name): no such emulator")
            }
            let address = BluetoothAddress.randomStatic(0xDE40_0000_0000 &+ (seed & 0xFFFF) &* 0x100 &+ UInt64(index))
            let peripheral: EmulatedPeripheral
            do {
                peripheral = try await world.emulate([model], address: address)
            } catch {
                throw DemoFailure("\(name): could not start: \(error)")
            }
            addresses[address] = name
            emit(DemoEvent(
                device: name, kind: "started",
                summary: "advertising as \"\(peripheral.advertisedName)\" from \(address.string)",
                fields: ["name": peripheral.advertisedName, "address": address.description], label: pad(name, 11)))
        }
        let bluetooth: Bluetooth
        do { bluetooth = try await world.openHost() } catch {
            throw DemoFailure("central: \(error)")
        }
        self.bluetooth = bluetooth

        // Scan until every device is seen (at most 10 s).
        emit(DemoEvent(device: "scan", kind: "section", summary: "Scan"))
        let queries = Self.deviceNames.map { name in DeviceQuery(address: addresses.first { $0.value == name }?.key) }
        let search = try await bluetooth.central.find(each: queries, within: .seconds(10))
        var seen: [String: Advertisement] = [:]
        for (name, advertisement) in zip(Self.deviceNames, search.found) { seen[name] = advertisement }
        emit(DemoEvent(device: "scan", kind: "header", summary: "\(pad("NAME", 14)) \(pad("ADDRESS", 19)) RSSI"))
        for name in Self.deviceNames {
            guard let advertisement = seen[name] else {
                throw DemoFailure("scan: \(name) was not seen within 10 s")
            }
            let shown = advertisement.name ?? "(no name)"
            emit(DemoEvent(
                device: "scan", kind: "found",
                summary: "\(pad(shown, 14)) \(pad(advertisement.address.string, 19)) \(advertisement.rssi) dBm",
                fields: ["model": name, "name": shown, "address": advertisement.address.description, "rssi": "\(advertisement.rssi)"]))
        }

        // Connect to each, one at a time (a controller makes one connection at a time).
        emit(DemoEvent(device: "world", kind: "section", summary: "Connecting"))
        var connections: [(String, Connection)] = []
        for name in Self.deviceNames {
            guard let advertisement = seen[name] else { continue }
            let connection: Connection
            do {
                connection = try await bluetooth.central.connect(to: advertisement, timeout: .seconds(10))
            } catch {
                throw DemoFailure("\(name): connect failed: \(error)")
            }
            connections.append((name, connection))
            let services = (try? await connection.services().count) ?? 0
            emit(DemoEvent(
                device: name, kind: "connected",
                summary: "connected, \(services) services, MTU \(await connection.mtu)", label: pad(name, 11)))
        }

        // Live data from all devices at once; lines are prefixed with the device.
        emit(DemoEvent(device: "world", kind: "section", summary: "Live data (\(DemoSession.fixed(liveSeconds, 0)) s)"))
        let clock = self.clock
        let softDeadline = clock.now.advanced(by: .seconds(liveSeconds))
        let hardLimit = liveSeconds + 20
        let emit = self.emit
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (name, connection) in connections {
                let session = DemoSession(device: name, connection: connection, clock: clock, softDeadline: softDeadline, emit: emit)
                group.addTask {
                    try await DemoSession.limited(hardLimit, "\(name): no decoded data within \(Int(hardLimit)) s", clock: clock) {
                        try await session.run()
                    }
                }
            }
            try await group.waitForAll()
        }
        emit(DemoEvent(device: "world", kind: "section", summary: "Done"))
        emit(DemoEvent(device: "world", kind: "done", summary: "every device answered; disconnecting"))
    }

    /// Disconnects and stops everything started. Idempotent.
    public func shutDown() async {
        if let bluetooth {
            await bluetooth.close()
            self.bluetooth = nil
        }
        await world.close()
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}

