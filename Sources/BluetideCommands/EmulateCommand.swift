import ArgumentParser
import BluetideBase
import BluetideEmulation
import BluetideDeviceModels
import Bluetide
import BluetideTransport
import Dispatch
import Foundation
import Synchronization

/// `bluetide emulate PROFILE…`: run emulated peripherals on the virtual link or a real controller.
struct EmulateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "emulate",
        abstract: "Run emulated BLE peripherals (heart-rate strap, trainers, COLMI ring, Punch trainer, …).",
        discussion: """
            Each PROFILE is one emulated device with its own controller. On the virtual link (the default) any number \
            can run side by side; a real controller (serial, tcp, hci-socket) serves exactly one device. With \
            +snoop:FILE each device captures its own controller's traffic: the first to FILE, the others to \
            FILE-2, FILE-3… (same extension).

            On start, each device's advertised name and address are printed; then one line per connection, \
            disconnection, subscription and write (one JSON object per line with --json). Runs until Ctrl-C or \
            --duration seconds.

            Options (--option key=value, repeatable):
            \(EmulatorOptions.keys.map { "  \($0.key): \($0.meaning)" }.joined(separator: "\n"))

            Examples:
              bluetide emulate --list
              bluetide emulate heart-rate --transport serial:/dev/ttyACM0 \\
                  --name "Test HRM"
              bluetide emulate ftms-bike --option power=250 --duration 60 --json
              bluetide emulate heart-rate csc punch
              bluetide emulate --from ring-clone/device.json
            """)

    @Argument(help: "Device models to emulate (see --list).")
    var profiles: [String] = []

    @Flag(name: .long, help: "List the device models and what they emulate.")
    var list = false

    @Option(name: .long, help: "Serve a device rebuilt by bluetide clone (its device.json) instead of a model.")
    var from: String?

    @Option(name: .long, help: "Controller transport: \(TransportSpec.syntaxSummary)")
    var transport: String = "virtual"

    @Option(name: .long, help: "Advertised local name (with several devices: NAME, NAME-2, …).")
    var name: String?

    @Option(name: .long, help: "Random static address to advertise from, e.g. C6:C5:C4:C3:C2:C1 (one device only).")
    var address: String?

    @Option(name: .long, help: "Seed of the models' randomness and of the default addresses (same seed, same data and addresses; without it each process picks its own addresses).")
    var seed: UInt64?

    @Option(name: .customLong("option"), help: "A model setting as key=value (repeatable; see the list below).")
    var options: [String] = []

    @Option(name: .long, help: "Stop after this many seconds (default: run until Ctrl-C).")
    var duration: Double?

    @Flag(name: .long, help: "Print one JSON object per line.")
    var json = false

    /// A validated request: what to run and where.
    struct Plan {
        var descriptors: [EmulatorDescriptor]
        var options: EmulatorOptions
        var transport: TransportSpec
        var addresses: [BluetoothAddress]
        var names: [String?]
    }

    func run() async throws {
        if list {
            for line in json ? listRecords() : listLines() { StandardStreams.output.line(line) }
            return
        }
        if let from { return try await serveClone(from) }
        let plan = try makePlan()
        // Signals are caught from before the first "advertising as" line, so one sent right after
        // it is not lost (a signal ignored by inheritance, as in a shell's background job, was
        // dropped, and one at its default action killed the process without its clean-up).
        let stopSignal = StopSignal.install(duration: duration)
        let output = LinePrinter()
        var peripherals: [EmulatedPeripheral] = []
        // On a virtual link every device has a controller of its own in one world; each
        // device's capture (when +snoop is given) holds its own traffic only.
        let world: VirtualWorld? = if case let .virtual(name) = plan.transport.kind { VirtualWorld(linkName: name ?? "default") } else { nil }
        for (index, descriptor) in plan.descriptors.enumerated() {
            let model = descriptor.make((seed ?? 0) &+ UInt64(index), plan.options)
            let peripheral: EmulatedPeripheral
            do {
                if let world {
                    peripheral = try await world.emulate(
                        [model], name: plan.names[index], address: plan.addresses[index],
                        snoop: Self.capturePath(plan.transport.snoopPath, device: index, of: plan.descriptors.count))
                } else {
                    peripheral = try await EmulatedPeripheral.open(
                        transport: "\(plan.transport)", models: [model], name: plan.names[index], address: plan.addresses[index])
                }
            } catch {
                for started in peripherals { await started.close() }
                await world?.close()
                throw CommandFailure("\(descriptor.name): could not start on \(plan.transport): \(error)")
            }
            peripherals.append(peripheral)
            let address = peripheral.address
            output.emit(json ? JSONOutput.line("started", [
                "model": .string(descriptor.name), "device": JSONOutput.device(address, name: peripheral.advertisedName),
                "transport": .string("\(plan.transport)"),
            ]) : "\(descriptor.name): advertising as \"\(peripheral.advertisedName)\" from \(address) (random static) on \(plan.transport)")
            let prefix = plan.descriptors.count > 1 ? "[\(descriptor.name)] " : ""
            let json = self.json
            let events = peripheral.events
            Task {
                for await event in events {
                    if json {
                        output.emit(Self.jsonLine(event, model: descriptor.name))
                    } else {
                        output.emit(prefix + event.description)
                    }
                }
            }
        }
        // Until Ctrl-C or --duration, unless a controller goes away first (its process killed,
        // its TCP peer closed, an H4 framing error): then exit 2 with one line, like subscribe.
        let gone = ControllerLoss()
        let watchers = peripherals.enumerated().map { index, peripheral in
            Task { [stopper = stopSignal.stopper, name = plan.descriptors[index].name] in
                // nil: closed here, or the watch was cancelled.
                guard let error = await peripheral.bluetooth.waitUntilClosed() else { return }
                gone.record(name, error)
                stopper.yield("controller gone")
            }
        }
        await stopSignal.wait()
        for watcher in watchers { watcher.cancel() }
        for peripheral in peripherals {
            await PromptShutdown.run({ await peripheral.stop() }, force: { await PromptShutdown.forceClose(peripheral.bluetooth) })
            await PromptShutdown.close(peripheral.bluetooth)
        }
        await world?.close()
        if let (name, error) = gone.first {
            throw CommandFailure("\(name): the controller on \(plan.transport) went away (\(error)); restart it, then run bluetide emulate again")
        }
    }

    /// Checks the arguments; every problem is a ``CommandFailure`` saying what to try.
    func makePlan(process: UInt64 = UInt64(ProcessInfo.processInfo.processIdentifier)) throws -> Plan {
        let known = EmulatorCatalog.all.map(\.name).joined(separator: ", ")
        guard !profiles.isEmpty else {
            throw CommandFailure("no device model given: name one or more of \(known) (see bluetide emulate --list)")
        }
        var descriptors: [EmulatorDescriptor] = []
        for profile in profiles {
            guard let descriptor = EmulatorCatalog.named(profile) else {
                throw CommandFailure.usage("unknown device model \"\(profile)\": expected one of \(known) (see bluetide emulate --list)")
            }
            descriptors.append(descriptor)
        }
        var settings = EmulatorOptions()
        for option in options {
            guard let equals = option.firstIndex(of: "=") else {
                throw CommandFailure("--option \"\(option)\": expected key=value, e.g. --option power=250")
            }
            do {
                try settings.set(String(option[..<equals]), to: String(option[option.index(after: equals)...]))
            } catch {
                throw CommandFailure("--option \(option): \(error)")
            }
        }
        let spec: TransportSpec
        do { spec = try TransportSpec(parsing: transport) } catch { throw CommandFailure("--transport: \(error)") }
        if case .virtual = spec.kind {} else if descriptors.count > 1 {
            throw CommandFailure(
                "\(descriptors.count) devices given, but a real controller (\(spec)) can emulate only one: run one bluetide emulate per controller, or use --transport virtual")
        }
        if let duration, !(duration.isFinite && duration > 0) {
            throw CommandFailure("--duration \(duration): expected a number of seconds > 0")
        }
        var addresses: [BluetoothAddress] = []
        if address != nil, case let .registered(scheme, _) = spec.kind, TransportRegistry.scheme(named: scheme) is any BackendScheme {
            throw CommandFailure(
                "--address: on \(scheme) the system's stack advertises from its adapter's own address; drop --address, or use --transport hci-socket:N to choose it")
        }
        if let address {
            guard descriptors.count == 1 else {
                throw CommandFailure("--address gives one device's address, but \(descriptors.count) devices were given: emulate them one per command")
            }
            let parsed: BluetoothAddress
            do { parsed = try BluetoothAddress(address, type: .random) } catch {
                throw CommandFailure("--address \"\(address)\": \(error) (expected six hex bytes like C6:C5:C4:C3:C2:C1)")
            }
            guard parsed.value >> 46 == 0b11 else {
                throw CommandFailure("--address \(address): a random static address must start with C0–FF (the top two bits set), e.g. C6:C5:C4:C3:C2:C1")
            }
            addresses = [parsed]
        } else {
        }
        var names: [String?] = descriptors.indices.map { _ in nil }
        if let name = name ?? settings.localName {
            names = descriptors.indices.map { $0 == 0 ? name : "\(name)-\($0 + 1)" }
        }
        if address == nil {
            // From the device's name and the seed (stable run to run) or else this process.
            addresses = descriptors.indices.map { index in
                DefaultDeviceAddress.derive(
                    name: names[index] ?? descriptors[index].name, index: index, salt: seed ?? process ^ 0x5EED_0000_0000_0000)
            }
        }
        return Plan(descriptors: descriptors, options: settings, transport: spec, addresses: addresses, names: names)
    }

    /// The first device whose controller went away, and why.
    final class ControllerLoss: Sendable {
        private let value = Mutex<(String, BluetideError)?>(nil)
        func record(_ name: String, _ error: BluetideError) { value.withLock { if $0 == nil { $0 = (name, error) } } }
        var first: (String, BluetideError)? { value.withLock { $0 } }
    }

    /// Where device `index` of `count` writes its capture: `path` itself for one device, else
    /// `NAME-2.btsnoop`, `NAME-3.btsnoop`… for the second and later (one file per host, so no
    /// file mixes two controllers' packets).
    static func capturePath(_ path: String?, device index: Int, of count: Int) -> String? {
        guard let path, index > 0 else { return path }
        let url = URL(fileURLWithPath: path)
        let base = url.deletingPathExtension().lastPathComponent + "-\(index + 1)"
        let named = url.pathExtension.isEmpty ? base : base + "." + url.pathExtension
        return url.deletingLastPathComponent().appendingPathComponent(named).path
    }

    /// `--list` output: one line per model.
    func listLines() -> [String] {
        let width = EmulatorCatalog.all.map(\.name.count).max() ?? 0
        return EmulatorCatalog.all.map { descriptor in
            descriptor.name + String(repeating: " ", count: width - descriptor.name.count) + "  " + descriptor.summary
        }
    }

    /// `--list --json` output: one `model` record per model, `model` (the name `emulate` takes)
    /// and `summary`.
    func listRecords() -> [String] {
        EmulatorCatalog.all.map { JSONOutput.line("model", ["model": .string($0.name), "summary": .string($0.summary)]) }
    }

    /// An emulated device's event as a record of the one schema: `connected` (the `peer`),
    /// `disconnected`, `written` (characteristic, value, `attError` when refused), `subscription`
    /// (`configuration`: 1 notify, 2 indicate, 0 none), `advertising-failed`.
    static func jsonLine(_ event: EmulationEvent, model: String) -> String {
        var fields: [String: JSONOutputValue] = ["model": .string(model)]
        let type: String
        switch event {
        case let .connected(connection, peer):
            type = "connected"
            fields["connection"] = .integer(Int64(connection))
            fields["peer"] = JSONOutput.device(peer)
        case let .disconnected(connection, reason):
            type = "disconnected"
            fields["connection"] = .integer(Int64(connection))
            fields["reason"] = .string("\(reason)")
        case let .wrote(connection, _, characteristic, value, attError):
            type = "written"
            fields["connection"] = .integer(Int64(connection))
            fields["characteristic"] = JSONOutput.characteristic(characteristic)
            fields["value"] = JSONOutput.value(value)
            if let attError { fields["attError"] = .integer(Int64(attError)) }
        case let .subscribed(connection, _, characteristic, configuration):
            type = "subscription"
            fields["connection"] = .integer(Int64(connection))
            fields["characteristic"] = JSONOutput.characteristic(characteristic)
            fields["configuration"] = .integer(Int64(configuration))
        case let .advertisingFailed(message):
            type = "advertising-failed"
            fields["message"] = .string(message)
        }
        return JSONOutput.line(type, fields)
    }
}

/// Prints whole lines from any task, each at once so piped output is live (``StandardStreams``:
/// a closed pipe drops them, never traps).
final class LinePrinter: Sendable {
    func emit(_ line: String) {
        StandardStreams.output.line(line)
    }
}

