import ArgumentParser
import BluetideDemo
import Foundation

/// `bluetide demo`: a virtual world of emulated devices, scanned, connected and shown live.
///
/// The newcomer's first command: no radio needed. The demo itself (five emulated peripherals on
/// a private virtual link, a central that scans, connects to each and decodes their data
/// through the app libraries) is BluetideDemo's ``DemoWorld``; this command parses its options
/// and prints its events, as text or JSON lines.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Emulated devices in a virtual world: scan, connect and show live decoded data (no radio needed).",
        discussion: """
            Starts a heart-rate strap, a smart trainer (FTMS), a COLMI R02 ring, a reflex (Punch) trainer and an \
            HM-10 serial module on an in-process virtual link, scans for them, connects to each and shows live \
            decoded data: heart rate with RR intervals; trainer speed, cadence and power converging on an ERG \
            target set through the control point; ring battery and a real-time heart-rate reading; the simulated \
            athlete's punch responses; the HM-10's echo. Exits 0 when every device answered.

            Examples:
              bluetide demo
              bluetide demo --duration 15
              bluetide demo --json --seed 7
            """)

    @Option(name: .long, help: "Seconds of live data, about (default 8).")
    var duration: Double = 8

    @Flag(name: .long, help: "Print one JSON object per event.")
    var json = false

    @Option(name: .long, help: "Seed of the emulated devices' randomness (same seed, same data).")
    var seed: UInt64 = 0

    func run() async throws {
        let printer = LinePrinter()
        let json = self.json
        try await perform { event in printer.emit(json ? event.jsonLine : event.text) }
    }

    /// Runs the whole demo, handing every event to `emit`; throws ``CommandFailure`` (one line)
    /// when a device does not answer.
    func perform(emit: @escaping @Sendable (DemoEvent) -> Void) async throws {
        guard duration.isFinite, duration > 0, duration <= 3600 else {
            throw CommandFailure("--duration \(duration): expected seconds > 0 (and at most 3600)")
        }
        let world = DemoWorld(seed: seed, liveSeconds: duration, emit: emit)
        do {
            try await world.run()
        } catch let failure as DemoFailure {
            await world.shutDown()
            throw CommandFailure(failure.message)
        } catch {
            await world.shutDown()
            throw CommandFailure("demo failed: \(error)")
        }
        await world.shutDown()
    }
}

extension DemoEvent {
    /// One record of the one schema: `type` is the kind, `source` the part of the demo
    /// (`world`, `scan`, a model name); an address in the fields becomes the `device` object,
    /// numbers become numbers (an empty field is null).
    var jsonLine: String {
        var rest = fields
        var object: [String: JSONOutputValue] = ["source": .string(device), "summary": .string(summary)]
        if let address = rest.removeValue(forKey: "address") {
            var seen = JSONOutput.device(text: address, name: rest.removeValue(forKey: "name"))
            if let rssi = rest.removeValue(forKey: "rssi").flatMap({ Int64($0) }), case var .object(members) = seen {
                members["rssiDbm"] = .integer(rssi)
                seen = .object(members)
            }
            object["device"] = seen
        }
        for (key, text) in rest {
            if text.isEmpty { object[key] = .null }
            else if let integer = Int64(text) { object[key] = .integer(integer) }
            else if let number = Double(text), number.isFinite { object[key] = .number(number) }
            else { object[key] = .string(text) }
        }
        return JSONOutput.line(kind, object)
    }
}
