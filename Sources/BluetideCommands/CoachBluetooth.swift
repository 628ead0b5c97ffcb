import Bluetide
import BluetideReflexEmulation
import BluetideSupport
import BluetideTransport

/// The CLI's side of the coach's Bluetooth (``CoachBluetooth``, in `BluetideReflexEmulation`):
/// reading `--transport` and `--emulate` into it, errors as command failures, a bounded close.
extension CoachBluetooth {
    /// Opens `transport`; with `emulate`, first starts `count` emulated trainers on it (a plain
    /// `virtual` becomes a fresh private link; `+snoop:FILE` captures the coach's host only).
    /// `output` gets one line about the trainer. The emulated world runs on `clock` (a test's
    /// manual clock runs it in virtual time); a real transport always runs on the monotonic clock.
    static func open(transport: String, emulate: Bool, count: Int = 1, straps: Int = 0, seed: UInt64 = UInt64.random(in: 0...UInt64.max),
                     clock: BluetideClock = .continuous, output: (String) -> Void) async throws -> CoachBluetooth {
        guard emulate else {
            do {
                return CoachBluetooth(bluetooth: try await Bluetooth.open(transport: transport), spec: transport)
            } catch {
                throw CommandFailure.cannotOpenTransport(transport, error)
            }
        }
        let parsed: TransportSpec
        do { parsed = try TransportSpec(parsing: transport) } catch { throw CommandFailure("--transport: \(error)") }
        guard case let .virtual(name) = parsed.kind else {
            throw CommandFailure("--emulate needs a virtual transport (virtual or virtual:NAME)")
        }
        do {
            return try await emulated(linkName: name, snoop: parsed.snoopPath, count: count, straps: straps, seed: seed, clock: clock, output: output)
        } catch let EmulatedCoachError.hostNotOpened(spec, error) {
            throw CommandFailure.cannotOpenTransport(spec, error)
        } catch {
            throw CommandFailure("\(error)")
        }
    }

    /// Closes the host, then the emulated trainers, each within ``PromptShutdown``'s bound.
    func close() async {
        await PromptShutdown.close(bluetooth)
        for trainer in trainers {
            await PromptShutdown.run({ await trainer.stop() }, force: { await PromptShutdown.forceClose(trainer.bluetooth) })
        }
        await world?.close()
    }
}
