import Bluetide
import BluetideEmulation
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

/// An emulated ring (any ring model) and a central on a fresh virtual link.
struct RingRig {
    let ringTransport: VirtualTransport
    let peripheral: EmulatedPeripheral
    let bluetooth: Bluetooth
    let ringAddress: BluetoothAddress

    static func start(_ model: any DeviceModel = COLMIRingModel(seed: 3)) async throws -> RingRig {
        let link = "ring-\(UUID().uuidString.prefix(8))"
        let transport = await VirtualTransport.attach(toLinkNamed: link)
        let address = BluetoothAddress.randomStatic(0xC011_0000_0000 | UInt64.random(in: 1...0xFFFF))
        let peripheral = try await EmulatedPeripheral.launch(transport: transport, models: [model], address: address, commandTimeout: 120)
        var configuration = Bluetooth.Configuration()
        configuration.commandTimeout = .seconds(120)
        configuration.connectTimeout = .seconds(60)
        let bluetooth = try await Bluetooth.open(transport: "virtual:\(link)", configuration: configuration)
        return RingRig(ringTransport: transport, peripheral: peripheral, bluetooth: bluetooth, ringAddress: address)
    }

    /// A ring session on a new connection (clock set in `calendar`).
    func open(calendar: RingCalendar = .utc, retries: Int = 2) async throws -> Ring {
        let connection = try await bluetooth.central.connect(to: ringAddress, timeout: .seconds(30))
        var options = Ring.Options()
        options.calendar = calendar
        options.retries = retries
        options.replyTimeout = .seconds(5)
        return try await Ring.open(connection, options: options)
    }

    /// Drops every link from the ring's side.
    func dropLinks() async {
        for central in peripheral.bluetooth.peripheral.connectedCentrals { try? await central.disconnect() }
    }

    func close() async {
        await bluetooth.close()
        await peripheral.stop()
        await peripheral.close()
    }

    /// Starts a rig with `model`, runs `body` under a hang guard of `seconds`, closes the rig.
    static func with(
        model: any DeviceModel = COLMIRingModel(seed: 3), _ seconds: Double, _ what: String,
        _ body: @escaping @Sendable (RingRig) async throws -> Void
    ) async throws {
        let rig = try await start(model)
        do {
            try await guarded(seconds, what) { try await body(rig) }
        } catch {
            await rig.close()
            throw error
        }
        await rig.close()
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

/// The emulated ring, but its replies to one opcode carry a bad checksum the first `corruptions` times.
struct CorruptingRing: DeviceModel {
    var inner = COLMIRingModel(seed: 3)
    let opcode: UInt8
    var corruptions: Int

    var name: String { inner.name }
    var advertising: AdvertisingHints { inner.advertising }
    var services: [EmulatedService] { inner.services }
    var tickInterval: Double { inner.tickInterval }
    var acceptsOneCentralAtATime: Bool { true }
    func read(_ characteristic: BluetoothUUID, now: Double) -> [UInt8]? { inner.read(characteristic, now: now) }
    mutating func tick(now: Double) -> [EmulatedOutput] { inner.tick(now: now) }

    mutating func write(_ characteristic: BluetoothUUID, _ bytes: [UInt8], now: Double) -> WriteOutcome {
        let outcome = inner.write(characteristic, bytes, now: now)
        guard case var .accepted(outputs) = outcome, bytes.first == opcode, corruptions > 0 else { return outcome }
        corruptions -= 1
        for i in outputs.indices where outputs[i].characteristic == COLMIUUID.notify && outputs[i].bytes.first == opcode {
            outputs[i].bytes[15] &+= 1
        }
        return .accepted(outputs)
    }
}
