import Bluetide
import BluetideBase
import BluetideEmulation
import BluetideDeviceModels
import BluetideHost
import BluetideSupport
import BluetideTransport
import Foundation
import Testing
import BluetideTestSupport

/// Runs `body`, failing with a clear message when it takes longer than `seconds` (a guard
/// against hangs, not a timing assertion).
func within<T: Sendable>(
    _ seconds: Double, _ what: String, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withRunTimeLimit(seconds, onTimeout: { HostError.timedOut(what, seconds: seconds) }, body)
}

/// Runs `body` in virtual time on a fresh manual clock, under a wall-clock hang guard of
/// `seconds`: a rig made on the clock it is given (its link, stacks and devices) ticks, waits
/// and times out in virtual time, the same way however busy the machine is.
func inVirtualTime<T: Sendable>(
    _ seconds: Double = 120, _ what: String = "the test in virtual time", _ body: @escaping @Sendable (BluetideClock) async throws -> T
) async throws -> T {
    let manual = ManualClock()
    return try await within(seconds, what) { try await manual.advancing { try await body(BluetideClock(manual)) } }
}

/// HCI command timeout for test stacks, seconds: generous, because the whole test run shares two
/// cores: a run stalled by other suites (observed: 36 s at the start of `swift test`) must not
/// make a stack take a late answer for a missing one.
let testCommandTimeout = 120.0

/// A served device and a Bluetide central connected to it, on a fresh virtual link.
struct EmulationRig {
    let central: HostStack
    let connection: HostConnection
    let database: [GATTRemoteService]

    /// Starts a peripheral (made by `serve` from the link's peripheral transport) and connects a
    /// central to `address`, then discovers the database. The link and the central run on
    /// `clock` (`serve` puts the peripheral's host on it too).
    static func connect<P: Sendable>(
        address: BluetoothAddress, clock: BluetideClock, serve: (VirtualTransport) async throws -> P
    ) async throws -> (EmulationRig, P) {
        let link = "emulation-\(UUID().uuidString)"
        await Bluetooth.prepareVirtualLink(named: link, clock: clock)
        let peripheralTransport = await VirtualTransport.attach(toLinkNamed: link)
        let centralTransport = await VirtualTransport.attach(toLinkNamed: link)
        let served = try await serve(peripheralTransport)
        let central = HostStack(transport: centralTransport, configuration: .init(randomAddress: .randomStatic(0x0BAD_CAFE_0002), commandTimeout: testCommandTimeout), clock: clock)
        try await central.start()
        let connection = try await central.connect(to: address, timeout: 60)
        _ = try await connection.gatt.exchangeMTU()
        let database = try await connection.gatt.discoverDatabase()
        return (EmulationRig(central: central, connection: connection, database: database), served)
    }

    /// Serves `models` with an ``EmulatedPeripheral`` and connects.
    static func serving(
        _ models: [any DeviceModel], address: UInt64 = 0x1234_5678_0001, clock: BluetideClock
    ) async throws -> (EmulationRig, EmulatedPeripheral) {
        try await connect(address: .randomStatic(address), clock: clock) { transport in
            try await EmulatedPeripheral.launch(
                transport: transport, models: models, address: .randomStatic(address), commandTimeout: testCommandTimeout, clock: clock)
        }
    }

    /// The discovered characteristic `uuid` (in `service` when given).
    func characteristic(_ uuid: BluetoothUUID, in service: BluetoothUUID? = nil) throws -> GATTCharacteristic {
        let found = database
            .filter { service == nil || $0.service.uuid == service }
            .flatMap(\.characteristics)
            .first { $0.characteristic.uuid == uuid }
        return try #require(found?.characteristic, "characteristic \(uuid) not discovered")
    }

    func close() async {
        await central.close()
    }
}

/// Takes `count` values from a subscription.
func take(_ count: Int, from stream: AsyncStream<[UInt8]>, seconds: Double = 30, _ what: String) async throws -> [[UInt8]] {
    try await within(seconds, what) {
        var values: [[UInt8]] = []
        for await value in stream {
            values.append(value)
            if values.count == count { break }
        }
        return values
    }
}
