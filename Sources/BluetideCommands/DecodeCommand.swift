import ArgumentParser
import BluetideBase
import BluetideProfiles
import Foundation

/// `bluetide decode PROFILE HEX…`: decode packets of a known profile.
struct DecodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode characteristic values or packets of a known profile.",
        discussion: """
            Each HEX argument is one packet: "16 4E 1C", 164e1c, 0x16,0x4E and 16:4E all work (quote hex with spaces). With no HEX arguments, packets are read from standard input, one per line.

            Stateful profiles (csc, cycling-power, fec, colmi) treat the packets as one sequence and also print derived values (speed km/h, cadence rpm, distance m, average power W). Packets are taken to arrive --interval seconds apart; write HEX@SECONDS to give a packet its own arrival time.

            Exit status: 0 when every packet decoded; 2 on malformed hex, an unknown profile or a packet that does not decode, with one line on standard error saying which packet and why.

            Examples:
              bluetide decode heart-rate 164E1C03F402
              bluetide decode csc 01020000000004@0 01060000000008@1 \\
                  --circumference 2.096
              printf '00 48\\n00 4A\\n' | bluetide decode heart-rate --json
            """)

    @Argument(help: "Profile name (see --list).")
    var profile: String?

    @Argument(help: "Packets as hex, one argument per packet; HEX@SECONDS sets its arrival time.")
    var packets: [String] = []

    @Flag(name: .long, help: "List the profiles and what they decode.")
    var list = false

    @Flag(name: .long, help: "Print one JSON object per packet instead of readable lines.")
    var json = false

    @Option(name: .long, help: "Wheel circumference in metres, for speed and distance (csc, cycling-power).")
    var circumference: Double = 2.105

    @Option(name: .long, help: "Seconds between packets that carry no @SECONDS arrival time.")
    var interval: Double = 1.0

    func run() throws {
        for line in try render() { StandardStreams.output.line(line) }
    }

    /// The output lines for the parsed arguments (separate from printing so tests can check it).
    func render(standardInput: () -> String? = { readLine() }) throws -> [String] {
        if list { return listLines() }
        guard let profileName = profile else {
            throw CommandFailure.usage("no profile given: name one of \(ProfileCatalog.all.map(\.name).joined(separator: ", ")) (see --list)")
        }
        guard let descriptor = ProfileCatalog.named(profileName) else {
            throw CommandFailure.usage("unknown profile \"\(profileName)\": expected one of \(ProfileCatalog.all.map(\.name).joined(separator: ", "))")
        }
        guard circumference > 0, circumference < 10 else {
            throw CommandFailure("--circumference \(circumference): expected a wheel circumference in metres between 0 and 10 (e.g. 2.105)")
        }
        guard interval >= 0 else {
            throw CommandFailure("--interval \(interval): expected seconds ≥ 0")
        }
        var inputs = packets
        if inputs.isEmpty {
            while let line = standardInput() {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if !trimmed.isEmpty, !trimmed.hasPrefix("#") { inputs.append(trimmed) }
            }
        }
        guard !inputs.isEmpty else {
            throw CommandFailure.usage("no packets: give hex arguments or lines on standard input")
        }
        var decoder = descriptor.makeDecoder(ProfileOptions(wheelCircumference: circumference))
        var clock = 0.0
        var output: [String] = []
        for (index, input) in inputs.enumerated() {
            let (hexText, time) = try parseArrival(input, index: index, defaultTime: clock)
            clock = time + interval
            let bytes: [UInt8]
            do {
                bytes = try Hex.parse(hexText)
            } catch {
                throw CommandFailure.usage("packet \(index + 1): \(error)")
            }
            let packet: DecodedPacket
            do {
                packet = try decoder.decode(bytes, at: time)
            } catch {
                throw CommandFailure.usage("packet \(index + 1) (\(bytes.spacedHex)): \(descriptor.name): \(error)")
            }
            if json {
                output.append(JSONOutput.line("decoded", [
                    "value": JSONOutput.value(bytes, decoded: packet.value, profile: descriptor.name, summary: packet.summary, derived: packet.derived),
                    "arrivalSeconds": .number(time),
                ]))
            } else {
                var line = packet.summary
                if let derived = packet.derived, case let .object(fields) = JSONOutputValue.encoding(derived), !fields.isEmpty {
                    line += "  →  " + HumanFormat.describe(.object(fields))
                }
                output.append(inputs.count > 1 ? "[\(index + 1)] \(line)" : line)
            }
        }
        return output
    }

    private func parseArrival(_ input: String, index: Int, defaultTime: Double) throws -> (String, Double) {
        guard let at = input.lastIndex(of: "@") else { return (input, defaultTime) }
        let timeText = input[input.index(after: at)...]
        guard let time = Double(timeText), time.isFinite, time >= 0 else {
            throw CommandFailure.usage("packet \(index + 1): arrival time \"\(timeText)\" after @ is not a number of seconds ≥ 0")
        }
        return (String(input[..<at]), time)
    }

    /// The profiles, one line each; with `--json` one `profile` record each (`profile`, `summary`,
    /// `characteristic` when it decodes one, `stateful`); `profile` is the name decode takes.
    private func listLines() -> [String] {
        if json {
            return ProfileCatalog.all.map { descriptor in
                var fields: [String: JSONOutputValue] = [
                    "profile": .string(descriptor.name), "summary": .string(descriptor.summary), "stateful": .bool(descriptor.isStateful),
                ]
                if let uuid = descriptor.characteristic { fields["characteristic"] = JSONOutput.characteristic(uuid) }
                return JSONOutput.line("profile", fields)
            }
        }
        let width = ProfileCatalog.all.map(\.name.count).max() ?? 0
        return ProfileCatalog.all.map { descriptor in
            let pad = String(repeating: " ", count: width - descriptor.name.count)
            let state = descriptor.isStateful ? "  (sequence: derives rates)" : ""
            return "\(descriptor.name)\(pad)  \(descriptor.summary)\(state)"
        }
    }
}
