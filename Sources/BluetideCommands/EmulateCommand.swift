import ArgumentParser
import BluetideCore
import BluetideEmulation
import BluetideEmulators
import BluetideHost
import BluetideTransport
import Dispatch
import Foundation

/// `bluetide emulate PROFILE…`: run emulated peripherals on the virtual link or a real controller.
struct EmulateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "emulate",
        abstract: "Run emulated BLE peripherals (heart-rate strap, trainers, COLMI ring, Punch trainer, …).",
        discussion: """
            Each PROFILE is one emulated device with its own controller. On the virtual link (the default) any number \
            can run side by side; a real controller (serial, tcp, hci-socket) serves exactly one device.

            On start, each device's advertised name and address are printed; then one line per connection, \
            disconnection, subscription and write (one JSON object per line with --json). Runs until Ctrl-C or \
            --duration seconds.

            Options (--option key=value, repeatable):
            \(EmulatorOptions.keys.map { "  \($0.key): \($0.meaning)" }.joined(separator: "\n"))

            Examples:
              bluetide emulate --list
              bluetide emulate heart-rate --transport serial:/dev/ttyACM0 --name "Test HRM"
              bluetide emulate ftms-bike --option power=250 --duration 60 --json
              bluetide emulate heart-rate csc punch
            """)

    @Argument(help: "Device models to emulate (see --list).")
    var profiles: [String] = []

    @Flag(name: .long, help: "List the device models and what they emulate.")
    var list = false

    @Option(name: .long, help: "Controller transport: \(TransportSpec.syntaxSummary)")
    var transport: String = "virtual"

    @Option(name: .long, help: "Advertised local name (with several devices: NAME, NAME-2, …).")
    var name: String?

    @Option(name: .long, help: "Random static address to advertise from, e.g. C6:C5:C4:C3:C2:C1 (one device only).")
    var address: String?

    @Option(name: .long, help: "Seed of the models' randomness (same seed, same data).")
    var seed: UInt64 = 0

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
            for line in listLines() { print(line) }
            return
        }
        let plan = try makePlan()
        let output = LinePrinter()
        var peripherals: [EmulatedPeripheral] = []
        for (index, descriptor) in plan.descriptors.enumerated() {
            let model = descriptor.make(seed &+ UInt64(index), plan.options)
            let controller: any HCITransport
            do {
                controller = try await Transport.open(plan.transport)
            } catch {
                throw CommandFailure("cannot open transport \(plan.transport): \(error)")
            }
            let peripheral: EmulatedPeripheral
            do {
                peripheral = try await EmulatedPeripheral.launch(
                    transport: controller, models: [model], name: plan.names[index], address: plan.addresses[index])
            } catch {
                throw CommandFailure("\(descriptor.name): could not start on \(plan.transport): \(error)")
            }
            peripherals.append(peripheral)
            let address = await peripheral.address ?? plan.addresses[index]
            output.emit(json ? Self.jsonLine([
                "event": "started", "device": descriptor.name, "name": peripheral.advertisedName,
                "address": address.string, "transport": "\(plan.transport)",
            ]) : "\(descriptor.name): advertising as \"\(peripheral.advertisedName)\" from \(address.string) (random static) on \(plan.transport)")
            let prefix = plan.descriptors.count > 1 ? "[\(descriptor.name)] " : ""
            let json = self.json
            let events = peripheral.events
            Task {
                for await event in events {
                    if json {
                        var fields = event.fields
                        fields["device"] = fields["device"] ?? descriptor.name
                        output.emit(Self.jsonLine(fields))
                    } else {
                        output.emit(prefix + event.description)
                    }
                }
            }
        }
        await StopSignal.install(duration: duration).wait()
        for peripheral in peripherals {
            await peripheral.stop()
            await peripheral.stack.close()
        }
    }

    /// Checks the arguments; every problem is a ``CommandFailure`` saying what to try.
    func makePlan() throws -> Plan {
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
            // Derived from the seed, so a device keeps its address from run to run.
            addresses = descriptors.indices.map { index in
                BluetoothAddress.randomStatic(0xB1DE_0000_0000 &+ (seed &* 0x1_0000) &+ UInt64(index))
            }
        }
        var names: [String?] = descriptors.indices.map { _ in nil }
        if let name = name ?? settings.localName {
            names = descriptors.indices.map { $0 == 0 ? name : "\(name)-\($0 + 1)" }
        }
        return Plan(descriptors: descriptors, options: settings, transport: spec, addresses: addresses, names: names)
    }

    /// `--list` output: one line per model.
    func listLines() -> [String] {
        let width = EmulatorCatalog.all.map(\.name.count).max() ?? 0
        return EmulatorCatalog.all.map { descriptor in
            descriptor.name + String(repeating: " ", count: width - descriptor.name.count) + "  " + descriptor.summary
        }
    }

    static func jsonLine(_ fields: [String: String]) -> String {
        guard let data = try? JSONLine.encoder().encode(fields) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}

/// Prints whole lines from any task, flushing each so piped output is live.
final class LinePrinter: Sendable {
    private let queue = DispatchQueue(label: "bluetide.output")

    func emit(_ line: String) {
        queue.sync {
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
        }
    }
}

