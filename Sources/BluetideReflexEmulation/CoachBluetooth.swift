import Bluetide
import BluetideEmulation
import BluetideDeviceModels
import BluetideSupport
import Foundation

/// The coach's Bluetooth: a host on a transport, or with emulation a ``VirtualWorld`` holding
/// emulated punch trainers (simulated athletes in front of them) and heart-rate straps beside
/// the coach's host — what `reflex coach run`, `session` and `serve` use, and tests of the coach
/// and its dashboard. (The coach library itself knows no emulators: this target joins the two.)
public struct CoachBluetooth: Sendable {
    /// The coach's host (scan and connect through ``Bluetooth/central``).
    public let bluetooth: Bluetooth
    /// The emulated trainers and the coach's host share it, when emulated.
    public let world: VirtualWorld?
    /// The emulated trainers (the first is the one a single run finds), then the emulated straps.
    public let trainers: [EmulatedPeripheral]
    /// The first emulated trainer, when there is one.
    public var emulated: EmulatedPeripheral? { trainers.first }
    /// The transport actually opened (a private `virtual:` link when emulated).
    public let spec: String

    /// A coach on `bluetooth`, opened on `spec`, with nothing emulated.
    public init(bluetooth: Bluetooth, spec: String) {
        self.init(bluetooth: bluetooth, world: nil, trainers: [], spec: spec)
    }

    init(bluetooth: Bluetooth, world: VirtualWorld?, trainers: [EmulatedPeripheral], spec: String) {
        self.bluetooth = bluetooth
        self.world = world
        self.trainers = trainers
        self.spec = spec
    }

    /// Starts `count` emulated trainers (at least one) and `straps` emulated heart-rate straps on
    /// the virtual link `linkName` (nil: a fresh private link), then the coach's host on it
    /// (capturing its HCI traffic to `snoop` when given). `output` gets one line per device.
    /// The world — radio, devices and the coach's host — runs on `clock`: a
    /// `BluetideClock(ManualClock())` driven by ``ManualClock/advancing(step:yields:_:)`` runs a
    /// whole session in virtual time (tests, fast simulations).
    /// Throws ``EmulatedCoachError``; nothing is left running then.
    public static func emulated(
        linkName: String?, snoop: String? = nil, count: Int = 1, straps: Int = 0, seed: UInt64 = UInt64.random(in: 0...UInt64.max),
        clock: BluetideClock = .continuous, output: (String) -> Void
    ) async throws -> CoachBluetooth {
        let world = VirtualWorld(linkName: linkName ?? "reflex-coach-\(UUID().uuidString)", clock: clock)
        let spec = world.transportSpec + (snoop.map { "+snoop:\($0)" } ?? "")
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
                options.localName = strapName(index)
                let strap = try await world.emulate([HeartRateModel(seed: seed &+ 0x57AB &+ UInt64(index), options: options)])
                trainers.append(strap)
                output("emulated heart-rate strap \"\(strap.advertisedName)\" on \(world.transportSpec)")
            }
        } catch {
            await world.close()
            throw EmulatedCoachError.trainerNotStarted(transport: world.transportSpec, reason: "\(error)")
        }
        do {
            let bluetooth = try await world.openHost(snoop: snoop)
            return CoachBluetooth(bluetooth: bluetooth, world: world, trainers: trainers, spec: spec)
        } catch {
            await world.close()
            throw EmulatedCoachError.hostNotOpened(transport: spec, error)
        }
    }

    /// The simulated athlete in front of emulated trainer `index` of several: the first the
    /// fastest and surest, each next one 40 ms slower on average and a little more likely to miss,
    /// so a game between them has a clear order.
    public static func skill(_ index: Int) -> EmulatorOptions {
        var options = EmulatorOptions()
        options.reactionMeanMilliseconds = 300 + 40 * Double(index % 8)
        options.reactionStandardDeviationMilliseconds = 60
        options.missProbability = 0.02 + 0.02 * Double(index % 8)
        return options
    }

    /// The advertised name of emulated strap `index` (from 0): `Strap-1`, `Strap-2`, …
    public static func strapName(_ index: Int) -> String { "Strap-\(index + 1)" }

    /// How many emulated straps the dashboard's lanes get beside `trainers` emulated trainers:
    /// one per lane while trainers and straps fit the central's 8 links (lanes past that run
    /// without one: a lane is not an athlete, so a partial set is still useful); none without
    /// emulation. A game's rule differs (``CoachGame/emulatedStraps(_:athletes:emulate:)``).
    public static func laneStraps(trainers: Int, emulate: Bool) -> Int {
        emulate ? max(0, min(trainers, 8 - trainers)) : 0
    }
}

/// Why ``CoachBluetooth/emulated(linkName:snoop:count:straps:seed:clock:output:)`` failed.
public enum EmulatedCoachError: Error, CustomStringConvertible {
    /// An emulated trainer or strap did not start on `transport`.
    case trainerNotStarted(transport: String, reason: String)
    /// The coach's host did not open on `transport` (the library's error).
    case hostNotOpened(transport: String, any Error)

    public var description: String {
        switch self {
        case let .trainerNotStarted(transport, reason): "cannot start the emulated trainer on \(transport): \(reason)"
        case let .hostNotOpened(transport, error): "cannot open transport \(transport): \(error)"
        }
    }
}

extension CoachBluetooth {
    /// Opens the coach's Bluetooth on `transport`; with `emulate`, first starts `count` emulated
    /// trainers and `straps` heart-rate straps on it (a plain `virtual` becomes a fresh private
    /// link; `+snoop:FILE` captures the coach's host only). `output` gets one line per emulated
    /// device. The emulated world runs on `clock` (a manual clock runs it in virtual time); a
    /// real transport always runs on the monotonic clock.
    /// - Throws: ``CoachBluetoothError``; nothing is left running then.
    public static func open(
        transport: String, emulate: Bool, count: Int = 1, straps: Int = 0, seed: UInt64 = UInt64.random(in: 0...UInt64.max),
        clock: BluetideClock = .continuous, output: (String) -> Void
    ) async throws(CoachBluetoothError) -> CoachBluetooth {
        guard emulate else {
            do {
                return CoachBluetooth(bluetooth: try await Bluetooth.open(transport: transport), spec: transport)
            } catch {
                throw .cannotOpen(transport: transport, error)
            }
        }
        let link: VirtualLinkSpec?
        do { link = try VirtualLinkSpec.parse(transport) } catch { throw .invalidTransport(transport, error) }
        guard let link else { throw .emulationNeedsVirtualTransport(transport) }
        do {
            return try await emulated(
                linkName: link.linkName, snoop: link.snoopPath, count: count, straps: straps, seed: seed, clock: clock, output: output)
        } catch let EmulatedCoachError.hostNotOpened(spec, error) {
            throw .cannotOpen(transport: spec, error)
        } catch {
            throw .emulationFailed("\(error)")
        }
    }

    /// Closes the host, then the emulated trainers and straps, each within
    /// ``PromptShutdown``'s bound (a controller that stopped answering cannot hold it up).
    public func close() async {
        await PromptShutdown.close(bluetooth)
        for trainer in trainers {
            await PromptShutdown.run({ await trainer.stop() }, force: { await PromptShutdown.forceClose(trainer.bluetooth) })
        }
        await world?.close()
    }
}

/// Why ``CoachBluetooth/open(transport:emulate:count:straps:seed:clock:output:)`` failed.
public enum CoachBluetoothError: Error, CustomStringConvertible {
    /// `transport` is not a transport spec (the parser's error says what was expected).
    case invalidTransport(String, any Error)
    /// Emulated trainers live on the in-process virtual radio only; `transport` names another.
    case emulationNeedsVirtualTransport(String)
    /// The coach's host did not open on `transport` (the library's error).
    case cannotOpen(transport: String, any Error)
    /// An emulated trainer or strap did not start (what went wrong).
    case emulationFailed(String)

    public var description: String {
        switch self {
        case let .invalidTransport(_, error): "--transport: \(error)"
        case .emulationNeedsVirtualTransport: "--emulate needs a virtual transport (virtual or virtual:NAME)"
        case let .cannotOpen(transport, error): "cannot open transport \(transport): \(error)"
        case let .emulationFailed(reason): reason
        }
    }
}
