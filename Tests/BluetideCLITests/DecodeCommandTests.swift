import BluetideProfiles
import BluetideTestSupport
import Foundation
import Testing
@testable import BluetideCommands

@Suite struct DecodeCommandTests {
    private func render(_ arguments: [String], stdin: [String] = []) throws -> [String] {
        var lines = stdin[...]
        let command = try DecodeCommand.parse(arguments)
        return try command.render(standardInput: { lines.popFirst() })
    }

    @Test func listNamesEveryProfileTheIssueAsksFor() throws {
        let names = Set(try render(["--list"]).compactMap { $0.split(separator: " ").first.map(String.init) })
        for required in [
            "heart-rate", "battery", "csc", "cycling-power", "ftms-indoor-bike", "ftms-control-point",
            "ftms-status", "fec", "colmi", "punch-response",
        ] {
            #expect(names.contains(required), "missing profile \(required)")
        }
    }

    @Test func listWithJSONIsOneProfileRecordEach() throws {
        let lines = try render(["--list", "--json"])
        #expect(lines.count == ProfileCatalog.all.count)
        let objects = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(objects.count == lines.count, "every line is JSON: \(lines.prefix(2))")
        let battery = try #require(objects.first { $0["profile"] as? String == "battery" })
        #expect(battery["type"] as? String == "profile")
        #expect((battery["characteristic"] as? [String: Any])?["uuid"] as? String == "2A19")
        #expect(battery["stateful"] as? Bool == false)
        #expect(objects.first { $0["profile"] as? String == "csc" }?["stateful"] as? Bool == true)
    }

    @Test func heartRateReadable() throws {
        let lines = try render(["heart-rate", "164E1C03F402"])
        #expect(lines.count == 1)
        #expect(lines[0].contains("78"))
    }

    @Test func heartRateJSONCarriesFieldsAndHex() throws {
        let lines = try render(["heart-rate", "--json", "16 4E 1C 03 F4 02"])
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        // One schema (docs/json-output.md): the value object holds hex, profile and decoded fields.
        #expect(object["type"] as? String == "decoded")
        let value = try #require(object["value"] as? [String: Any])
        #expect(value["profile"] as? String == "heart-rate")
        #expect(value["hex"] as? String == "164e1c03f402")
        #expect(value["decoded"] is [String: Any])
    }

    @Test func cscSequenceDerivesSpeed() throws {
        // fitness.md §1.4 A→B: 13.73 km/h at 2.105 m.
        let lines = try render(["csc", "--json", "03A25E01006D0E4B63967F@0", "03A45E0100D7124B63967F@1.1"])
        #expect(lines.count == 2)
        let second = try #require(
            try JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as? [String: Any])
        let derived = try #require((second["value"] as? [String: Any])?["derived"] as? [String: Any])
        let text = "\(derived)"
        #expect(text.contains("13.7"), "derived values were \(text)")
    }

    @Test func packetsFromStandardInput() throws {
        let lines = try render(["heart-rate"], stdin: ["00 48", "# comment", "", "00 4A"])
        #expect(lines.count == 2)
        #expect(lines[0].hasPrefix("[1]") && lines[0].contains("72"))
        #expect(lines[1].contains("74"))
    }

    @Test func unknownProfileNamesTheChoices() throws {
        #expect(throws: CommandFailure.self) { try render(["heart-rat", "00"]) }
        do {
            _ = try render(["heart-rat", "00"])
        } catch let failure as CommandFailure {
            #expect(failure.message.contains("unknown profile \"heart-rat\""))
            #expect(failure.message.contains("heart-rate"))
        }
    }

    @Test func malformedHexSaysWhere() throws {
        do {
            _ = try render(["heart-rate", "00 48", "0G"])
            Issue.record("malformed hex was accepted")
        } catch let failure as CommandFailure {
            #expect(failure.message.hasPrefix("packet 2"))
            #expect(failure.message.contains("not a hex digit"))
        }
    }

    @Test func truncatedPacketNamesTheField() throws {
        do {
            _ = try render(["csc", "03A25E01"])
            Issue.record("truncated packet was accepted")
        } catch let failure as CommandFailure {
            #expect(failure.message.contains("needs"))
            #expect(failure.message.contains("present"))
        }
    }

    @Test func badOptionsAreRefused() throws {
        #expect(throws: CommandFailure.self) { try render(["csc", "--circumference=-1", "01"]) }
        #expect(throws: CommandFailure.self) { try render(["heart-rate", "0048@soon"]) }
        #expect(throws: CommandFailure.self) { try render(["heart-rate"]) }
    }

    @Test func executableExitsWithStatusTwoAndOneLine() async throws {
        let run = try await BluetideExecutable.run(["decode", "no-such-profile", "00"])
        #expect(run.status == 2)
        let text = run.stderr.joined(separator: "\n")
        #expect(text.split(separator: "\n").count == 1)
        #expect(text.hasPrefix("bluetide: unknown profile"))
    }

    @Test func usageErrorsAreOneLineThatSaysWhatWasWrong() async throws {
        // A packet that starts with "-": one line, not the usage text.
        let dash = try await BluetideExecutable.run(["decode", "heart-rate", "-16"])
        #expect(dash.status == 2)
        #expect(dash.stderr.count == 1, "\(dash.stderr)")
        #expect(dash.stderr.first?.contains("-16 is not an option") == true, "\(dash.stderr)")
        #expect(dash.stderr.first?.contains("bluetide decode --help") == true, "\(dash.stderr)")
        // A negative interval with a space reaches the command, which says what is wrong.
        let negative = try await BluetideExecutable.run(["decode", "heart-rate", "0048", "--interval", "-1"])
        #expect(negative.status == 2)
        #expect(negative.stderr.count == 1, "\(negative.stderr)")
        #expect(negative.stderr.first == "bluetide: --interval -1.0: expected seconds ≥ 0", "\(negative.stderr)")
        // Passed that way, the command itself says what is wrong.
        #expect(throws: CommandFailure.self) { try render(["heart-rate", "0048", "--interval=-1"]) }
        // An unknown option.
        let unknown = try await BluetideExecutable.run(["decode", "heart-rate", "--frobnicate"])
        #expect(unknown.status == 2 && unknown.stderr.count == 1, "\(unknown.stderr)")
    }

    /// The `bluetide` binary SwiftPM builds next to the test bundle.
    static func bluetideBinary() -> URL? { BuiltExecutables.bluetide }
}
