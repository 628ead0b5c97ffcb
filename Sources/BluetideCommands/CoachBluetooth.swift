import Bluetide
import BluetideEmulation
import BluetideEmulators
import BluetideTransport
import Foundation

/// The coach's Bluetooth for `reflex coach run` and `serve`: the host on `--transport`, and with
/// `--emulate` an emulated punch trainer (simulated athletes) on the same private virtual link.
struct CoachBluetooth: Sendable {
    /// The coach's host (scan and connect through ``Bluetooth/central``).
    let bluetooth: Bluetooth
    /// The emulated trainer, when asked for.
    let emulated: EmulatedPeripheral?
    /// The transport actually opened (a private `virtual:` link with `--emulate`).
    let spec: String

    /// Opens `transport`; with `emulate`, first starts an emulated trainer on it (a plain
    /// `virtual` becomes a fresh private link). `output` gets one line about the trainer.
    static func open(transport: String, emulate: Bool, seed: UInt64 = UInt64.random(in: 0...UInt64.max),
                     output: (String) -> Void) async throws -> CoachBluetooth {
        var spec = transport
        if emulate {
            if spec == "virtual" { spec = "virtual:reflex-coach-\(UUID().uuidString)" }
            guard spec.hasPrefix("virtual") else { throw CommandFailure("--emulate needs a virtual transport (virtual or virtual:NAME)") }
        }
        var emulated: EmulatedPeripheral?
        if emulate {
            do {
                let controller = try await Transport.open(spec)
                emulated = try await EmulatedPeripheral.launch(transport: controller, models: [PunchTrainerModel(seed: seed)])
                output("emulated trainer \"\(emulated?.advertisedName ?? "?")\" on \(spec)")
            } catch {
                throw CommandFailure("cannot start the emulated trainer on \(spec): \(error)")
            }
        }
        do {
            return CoachBluetooth(bluetooth: try await Bluetooth.open(transport: spec), emulated: emulated, spec: spec)
        } catch {
            if let emulated { await emulated.stop(); await emulated.stack.close() }
            throw CommandFailure("cannot open transport \(spec): \(error)")
        }
    }

    /// Closes the host, then the emulated trainer.
    func close() async {
        await bluetooth.close()
        if let emulated { await emulated.stop(); await emulated.stack.close() }
    }
}
