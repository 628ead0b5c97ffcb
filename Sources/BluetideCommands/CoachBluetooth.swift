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
    /// The emulated trainers (the first is the one a single run finds), then the emulated straps.
    let trainers: [EmulatedPeripheral]
    /// The first emulated trainer, when asked for.
    var emulated: EmulatedPeripheral? { trainers.first }
    /// The transport actually opened (a private `virtual:` link with `--emulate`).
    let spec: String

    /// Opens `transport`; with `emulate`, first starts `count` emulated trainers on it (a plain
    /// `virtual` becomes a fresh private link; `+snoop:FILE` captures the coach's host only).
    /// `output` gets one line about the trainer.
    static func open(transport: String, emulate: Bool, count: Int = 1, straps: Int = 0, seed: UInt64 = UInt64.random(in: 0...UInt64.max),
                     output: (String) -> Void) async throws -> CoachBluetooth {
        guard emulate else {
            do {
                return CoachBluetooth(bluetooth: try await Bluetooth.open(transport: transport), world: nil, trainers: [], spec: transport)
            } catch {
                throw CommandFailure.cannotOpenTransport(transport, error)
            }
        }
        let parsed: TransportSpec
        do { parsed = try TransportSpec(parsing: transport) } catch { throw CommandFailure("--transport: \(error)") }
        guard case let .virtual(name) = parsed.kind else {
            throw CommandFailure("--emulate needs a virtual transport (virtual or virtual:NAME)")
        }
        let world = VirtualWorld(linkName: name ?? "reflex-coach-\(UUID().uuidString)")
        let spec = world.transportSpec + (parsed.snoopPath.map { "+snoop:\($0)" } ?? "")
        var trainers: [EmulatedPeripheral] = []
        do {
            for index in 0..<max(1, count) {
                let model = count <= 1 ? PunchTrainerModel(seed: seed) : PunchTrainerModel(seed: seed &+ UInt64(index), options: skill(index))
                let trainer = try await world.emulate([model])
                trainers.append(trainer)
                output("emulated trainer \"\(trainer.advertisedName)\" on \(world.transportSpec)"
                       + (count <= 1 ? "" : " (simulated athlete: mean \(Int(skill(index).reactionMeanMilliseconds)) ms, misses \(Int(skill(index).missProbability * 100)) %)"))
            }
            for index in 0..<straps {
                var options = EmulatorOptions()
                options.localName = Self.strapName(index)
                let strap = try await world.emulate([HeartRateModel(seed: seed &+ 0x57AB &+ UInt64(index), options: options)])
                trainers.append(strap)
                output("emulated heart-rate strap \"\(strap.advertisedName)\" on \(world.transportSpec)")
            }
        } catch {
            await world.close()
            throw CommandFailure("cannot start the emulated trainer on \(world.transportSpec): \(error)")
        }
        do {
            let bluetooth = try await world.openHost(snoop: parsed.snoopPath)
            return CoachBluetooth(bluetooth: bluetooth, world: world, trainers: trainers, spec: spec)
        } catch {
            await world.close()
            throw CommandFailure.cannotOpenTransport("\(spec)", error)
        }
    }

    /// The simulated athlete in front of emulated trainer `index` of several: the first the
    /// fastest and surest, each next one 40 ms slower on average and a little more likely to miss,
    /// so a game between them has a clear order.
    static func skill(_ index: Int) -> EmulatorOptions {
        var options = EmulatorOptions()
        options.reactionMeanMilliseconds = 300 + 40 * Double(index % 8)
        options.reactionStandardDeviationMilliseconds = 60
        options.missProbability = 0.02 + 0.02 * Double(index % 8)
        return options
    }

    /// The advertised name of emulated strap `index` (from 0): `Strap-1`, `Strap-2`, …
    static func strapName(_ index: Int) -> String { "Strap-\(index + 1)" }

    /// Closes the host, then the emulated trainers.
    func close() async {
        await PromptShutdown.close(bluetooth)
        for trainer in trainers {
            await PromptShutdown.run({ await trainer.stop() }, force: { await PromptShutdown.forceClose(trainer.bluetooth) })
        }
        await world?.close()
    }
}
