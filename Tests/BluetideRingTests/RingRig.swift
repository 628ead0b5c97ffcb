import Bluetide
import BluetideEmulation
import BluetideSupport
import BluetideDeviceModels
import BluetideTestSupport
import BluetideTransport
import Foundation
import Testing
@testable import BluetideRing

struct RingTestTimeout: Error, CustomStringConvertible {
    let what: String
    var description: String { "\(what) did not finish in time" }
}

/// Runs `body` with a hang guard (not a timing assertion).
func guarded<T: Sendable>(_ seconds: Double = 60, _ what: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withRunTimeLimit(seconds, onTimeout: { RingTestTimeout(what: what) }, body)
}

/// An emulated ring (any ring model) and a central on a fresh virtual world: on the monotonic
/// clock, or on a ``ManualClock`` (``with(model:clock:_:_:_:)`` then runs the whole test in
/// virtual time, so reply time limits and retry pauses pass without real waiting).
struct RingRig {
    let world: VirtualWorld
    let peripheral: EmulatedPeripheral
    let bluetooth: Bluetooth
    let ringAddress: BluetoothAddress
    /// The manual clock the world runs on; nil on the monotonic clock.
    let clock: ManualClock?

    static func start(_ model: any DeviceModel = COLMIRingModel(seed: 3), clock: ManualClock? = nil) async throws -> RingRig {
        let world = VirtualWorld(linkName: "ring-\(UUID().uuidString.prefix(8))", clock: clock.map(BluetideClock.init) ?? .continuous)
        let address = BluetoothAddress.randomStatic(0xC011_0000_0000 | UInt64.random(in: 1...0xFFFF))
        do {
            let peripheral = try await world.emulate([model], address: address, commandTimeout: .seconds(120))
            var configuration = Bluetooth.Configuration()
            configuration.commandTimeout = .seconds(120)
            configuration.connectTimeout = .seconds(60)
            let bluetooth = try await world.openHost(configuration: configuration)
            return RingRig(world: world, peripheral: peripheral, bluetooth: bluetooth, ringAddress: address, clock: clock)
        } catch {
            await world.close()
            throw error
        }
    }

    /// The link's name (`virtual:NAME` reaches it).
    var linkName: String { world.linkName }

    /// Ring options as the rig's sessions use them: clock set in `calendar`, a reply limit of
    /// 5 s (30 s in virtual time, where it costs no real waiting and leaves thousands of
    /// scheduling windows for a reply in flight on a busy machine).
    func options(calendar: RingCalendar = .utc, retries: Int = 2) -> Ring.Options {
        var options = Ring.Options()
        options.calendar = calendar
        options.retries = retries
        options.replyTimeout = clock == nil ? .seconds(5) : .seconds(30)
        return options
    }

    /// A ring session on a new connection (clock set in `calendar`).
    func open(calendar: RingCalendar = .utc, retries: Int = 2) async throws -> Ring {
        try await open(options: options(calendar: calendar, retries: retries))
    }

    /// A ring session on a new connection with `options`.
    func open(options: Ring.Options) async throws -> Ring {
        let connection = try await bluetooth.central.connect(to: ringAddress, timeout: .seconds(30))
        return try await Ring.open(connection, options: options)
    }

    /// Drops every link from the ring's side.
    func dropLinks() async {
        for central in peripheral.bluetooth.peripheral.connectedCentrals { try? await central.disconnect() }
    }

    func close() async {
        await peripheral.stop()
        await peripheral.close()
        await world.close()
    }

    /// Starts a rig with `model` (on `clock` when given: the whole run, rig set-up included, in
    /// virtual time), runs `body` under a hang guard of `seconds`, closes the rig.
    static func with(
        model: any DeviceModel = COLMIRingModel(seed: 3), clock: ManualClock? = nil, _ seconds: Double, _ what: String,
        _ body: @escaping @Sendable (RingRig) async throws -> Void
    ) async throws {
        try await guarded(seconds, what) {
            @Sendable func run() async throws {
                let rig = try await start(model, clock: clock)
                do {
                    try await body(rig)
                } catch {
                    await rig.close()
                    throw error
                }
                await rig.close()
            }
            if let clock { try await clock.advancing { try await run() } } else { try await run() }
        }
    }
}

/// Runs Python `arguments` in `folder` (at most 120 s); its exit status, stdout lines and stderr tail.
func runPython(_ arguments: [String], in folder: String) async throws -> (status: Int32?, stdout: [String], stderr: String) {
    let python = try await BumbleEnvironment.requirePython()
    let process = try BumbleProcess.launch(name: "python", executable: python, arguments: arguments, workingDirectory: URL(fileURLWithPath: folder))
    let status = await process.waitForCompletion(timeout: .seconds(120))
    let result = (status, await process.output(.stdout), await process.stderrTail())
    await process.stop()
    return result
}

/// The emulated ring, but its replies to one opcode carry a bad checksum the first `corruptions`
/// times; with `writes`, it notes the virtual instant of each request with that opcode.
struct CorruptingRing: DeviceModel {
    var inner = COLMIRingModel(seed: 3)
    let opcode: UInt8
    var corruptions: Int
    var writes: VirtualInstants? = nil

    var name: String { inner.name }
    var advertising: AdvertisingHints { inner.advertising }
    var services: [EmulatedService] { inner.services }
    var tickInterval: Double { inner.tickInterval }
    var acceptsOneCentralAtATime: Bool { true }
    func read(_ characteristic: BluetoothUUID, now: Double) -> [UInt8]? { inner.read(characteristic, now: now) }
    mutating func tick(now: Double) -> [EmulatedOutput] { inner.tick(now: now) }

    mutating func write(_ characteristic: BluetoothUUID, _ bytes: [UInt8], now: Double) -> WriteOutcome {
        if bytes.first == opcode { writes?.record() }
        let outcome = inner.write(characteristic, bytes, now: now)
        guard case var .accepted(outputs) = outcome, bytes.first == opcode, corruptions > 0 else { return outcome }
        corruptions -= 1
        for i in outputs.indices where outputs[i].characteristic == COLMIUUID.notify && outputs[i].bytes.first == opcode {
            outputs[i].bytes[15] &+= 1
        }
        return .accepted(outputs)
    }
}
