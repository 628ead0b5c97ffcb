import Bluetide
import BluetideEmulation
import BluetideEmulators
import BluetideTransport
import Foundation

/// The coach's Bluetooth for `reflex coach run` and `serve`: the host on `--transport`, and with
/// `--emulate` an emulated punch trainer (simulated athletes) beside it in a ``VirtualWorld``.
struct CoachBluetooth: Sendable {
    /// The coach's host (scan and connect through ``Bluetooth/central``).
    let bluetooth: Bluetooth
    /// The emulated trainer and the coach's host share it, with `--emulate`.
    let world: VirtualWorld?
    /// The emulated trainer, when asked for.
    let emulated: EmulatedPeripheral?
    /// The transport actually opened (a private `virtual:` link with `--emulate`).
    let spec: String

    /// Opens `transport`; with `emulate`, first starts an emulated trainer on it (a plain
    /// `virtual` becomes a fresh private link; `+snoop:FILE` captures the coach's host only).
    /// `output` gets one line about the trainer.
    static func open(transport: String, emulate: Bool, seed: UInt64 = UInt64.random(in: 0...UInt64.max),
                     output: (String) -> Void) async throws -> CoachBluetooth {
        guard emulate else {
            do {
                return CoachBluetooth(bluetooth: try await Bluetooth.open(transport: transport), world: nil, emulated: nil, spec: transport)
            } catch {
                throw CommandFailure("cannot open transport \(transport): \(error)")
            }
        }
        let parsed: TransportSpec
        do { parsed = try TransportSpec(parsing: transport) } catch { throw CommandFailure("--transport: \(error)") }
        guard case let .virtual(name) = parsed.kind else {
            throw CommandFailure("--emulate needs a virtual transport (virtual or virtual:NAME)")
        }
        let world = VirtualWorld(linkName: name ?? "reflex-coach-\(UUID().uuidString)")
        let spec = world.transportSpec + (parsed.snoopPath.map { "+snoop:\($0)" } ?? "")
        let emulated: EmulatedPeripheral
        do {
            emulated = try await world.emulate([PunchTrainerModel(seed: seed)])
            output("emulated trainer \"\(emulated.advertisedName)\" on \(world.transportSpec)")
        } catch {
            await world.close()
            throw CommandFailure("cannot start the emulated trainer on \(world.transportSpec): \(error)")
        }
        do {
            let bluetooth = try await world.openHost(snoop: parsed.snoopPath)
            return CoachBluetooth(bluetooth: bluetooth, world: world, emulated: emulated, spec: spec)
        } catch {
            await world.close()
            throw CommandFailure("cannot open transport \(spec): \(error)")
        }
    }

    /// Closes the host, then the emulated trainer.
    func close() async {
        await PromptShutdown.close(bluetooth)
        if let emulated { await PromptShutdown.run({ await emulated.stop() }, force: { await PromptShutdown.forceClose(emulated.bluetooth) }) }
        await world?.close()
    }
}
