import ArgumentParser
import Bluetide
import BluetideRing
import BluetideSupport
import Foundation

/// `bluetide ring pair`: scan for rings, pick one, remember it.
struct RingPairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Find COLMI rings nearby, pick one and remember it for the other ring commands.",
        discussion: """
            Scans for rings (the UART service 6E40FFF0-… or an R02_/R03_/… name), lists them strongest signal first with bars, and asks which one on a terminal. No bonding is needed: the ring is remembered with the transport it was found on (and the --emulate spec), in ~/.local/share/bluetide/ring.json.

            Examples:
              bluetide ring pair                          (choose from the list)
              bluetide ring pair --first                  (the strongest, for scripts)
              bluetide ring pair --address C0:12:34:56:78:9A/R
              bluetide ring pair --first --emulate colmi-r02
            """)

    @OptionGroup var connection: RingConnectionOptions

    @Flag(name: .long, help: "Pick the ring with the strongest signal without asking.")
    var first = false

    @Option(name: .long, help: ArgumentHelp("Pick the ring at this address (or with this name).", valueName: "address"))
    var address: String?

    @Option(name: .customLong("scan-time"), help: "Seconds to scan.")
    var scanTime: Double = 4

    @Flag(name: .long, help: "Print the rings found and the pick as JSON lines.")
    var json = false

    func run() async throws { try await execute(CommandOutput.standardOutput(), input: { readLine() }) }

    /// Scans, picks and remembers. With `--emulate`, the emulated world and the scan's length run
    /// on `clock` (a test's manual clock scans for `--scan-time` of virtual time).
    func execute(_ output: CommandOutput, input: @Sendable () -> String?, clock: BluetideClock = .continuous) async throws {
        try connection.check()
        guard scanTime.isFinite, scanTime > 0 else { throw CommandFailure("--scan-time \(scanTime): expected seconds > 0, e.g. --scan-time 5") }
        let transportText = connection.transport ?? "virtual"
        let session = try await DeviceSession.open(try connection.sessionOptions(remembered: nil), clock: clock)
        let rings: [Advertisement]
        do { rings = try await RingDiscovery.discover(session.central, timeout: .seconds(scanTime)) } catch {
            await session.close()
            throw CommandFailure("cannot scan on \(session.transportText): \(error)")
        }
        await session.close()
        guard !rings.isEmpty else {
            throw CommandFailure("no ring found within \(DeviceSession.format(scanTime)) s on \(transportText); is it charged, nearby and not connected to a phone (a ring takes one connection at a time)? Try --scan-time 10")
        }
        if json {
            for ring in rings { output.emit(Self.foundLine(ring)) }
        } else if !first, address == nil {
            for (index, ring) in rings.enumerated() { output.emit(Self.row(index + 1, ring, colour: output.isTerminal)) }
        }
        let pick = try choose(from: rings, output: output, input: input)
        let pairing = RingPairing(
            address: pick.address, name: pick.name, transport: transportText, emulate: connection.emulate, pairedAt: Date())
        do { try connection.pairing.save(pairing) } catch { throw CommandFailure("\(error)") }
        if json {
            output.emit(RingJSON.line("paired", device: JSONOutput.device(pairing.address, name: pairing.name), Paired(pairing)))
        } else {
            output.emit("paired \(pairing.label) on \(transportText)\(connection.emulate.map { " (emulated: \($0))" } ?? ""); the other ring commands now connect to it")
        }
    }

    private func choose(from rings: [Advertisement], output: CommandOutput, input: () -> String?) throws -> Advertisement {
        if let address {
            let wanted = address.uppercased().replacingOccurrences(of: "/R", with: "").replacingOccurrences(of: "/P", with: "")
            guard let hit = rings.first(where: { $0.address.string.uppercased() == wanted || $0.name == address }) else {
                throw CommandFailure("no ring at \(address) among \(rings.map(Self.label).joined(separator: ", ")); pick one of those or scan longer with --scan-time")
            }
            return hit
        }
        if first || rings.count == 1 { return rings[0] }
        let question = "which ring? [1-\(rings.count), Enter = 1]"
        // With --json standard output holds records only: the question goes to standard error.
        if json { StandardStreams.error.line(question) } else { output.emit(question) }
        guard let line = input() else {
            throw CommandFailure("\(rings.count) rings found but no answer on standard input: pass --first or --address ADDRESS")
        }
        let text = line.trimmingCharacters(in: .whitespaces)
        if text.isEmpty { return rings[0] }
        guard let n = Int(text), (1...rings.count).contains(n) else {
            throw CommandFailure("\"\(text)\" is not one of 1-\(rings.count); run `bluetide ring pair` again")
        }
        return rings[n - 1]
    }

    static func label(_ ring: Advertisement) -> String { ring.name.map { "\($0) (\(ring.address))" } ?? "\(ring.address)" }

    /// `1  ▂▄▆_  -62 dBm  R02_341C  C0:…/R`, bars coloured on a terminal.
    static func row(_ number: Int, _ ring: Advertisement, colour: Bool) -> String {
        let count = RingDiscovery.bars(rssi: ring.rssi)
        let glyphs = ["▂", "▄", "▆", "█"]
        var bars = (0..<4).map { $0 < count ? glyphs[$0] : "·" }.joined()
        if colour {
            let code = count >= 3 ? "32" : count == 2 ? "33" : "31"
            bars = "\u{1B}[\(code)m\(bars)\u{1B}[0m"
        }
        let rssi = "\(ring.rssi) dBm".padding(toLength: 8, withPad: " ", startingAt: 0)
        return "\(number)  \(bars)  \(rssi)  \(ring.name ?? "(no name)")  \(ring.address)"
    }

    /// A `ring` record: one ring found, as `device` (with `rssiDbm`), and its signal `bars` (0-4).
    static func foundLine(_ ring: Advertisement) -> String {
        var device = JSONOutput.device(ring.address, name: ring.name)
        if case var .object(fields) = device {
            fields["rssiDbm"] = .integer(Int64(ring.rssi))
            device = .object(fields)
        }
        return JSONOutput.line("ring", ["device": device, "bars": .integer(Int64(RingDiscovery.bars(rssi: ring.rssi)))])
    }

    /// The `paired` record's fields beside `device`: where the ring was found and when.
    struct Paired: Encodable {
        let transport: String
        let emulate: String?
        let pairedAt: String
        init(_ pairing: RingPairing) {
            transport = pairing.transport
            emulate = pairing.emulate
            pairedAt = RingExport.timeText(pairing.device.lastSeen)
        }
    }
}

/// `bluetide ring forget`: clears the remembered ring.
struct RingForgetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forget",
        abstract: "Forget the paired ring (the other ring commands then need `ring pair` or --device).",
        discussion: "Example:\n  bluetide ring forget")

    @Option(name: .customLong("pairing-file"), help: .hidden)
    var pairingFile: String?

    func run() async throws { try await execute(CommandOutput.standardOutput()) }

    func execute(_ output: CommandOutput) async throws {
        let file = RingPairingFile(url: pairingFile.map { URL(fileURLWithPath: $0) })
        let remembered = try? file.load()
        do {
            let removed = try file.forget()
            output.emit(removed ? "forgot \(remembered?.label ?? "the paired ring")" : "no ring was paired")
        } catch { throw CommandFailure("\(error)") }
    }
}
