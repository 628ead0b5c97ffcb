import ArgumentParser
import BluetideBase
import BluetideTestSupport
import Foundation
import Testing
@testable import BluetideCommands

/// What every command shares: `--version`, exit statuses (0, 1 runtime, 2 usage), errors as one
/// line (a JSON `error` object with `--json`), logs on standard error at the level asked for,
/// numbers rounded the same way, and help examples that survive wrapping.
@Suite(.timeLimit(.minutes(2))) struct CommandLineConventionsTests {
    @Test func versionComesFromOnePlace() async throws {
        let run = try await BluetideExecutable.run(["--version"])
        #expect(run.status == 0)
        #expect(run.stdout == [BluetideVersion.current])
    }

    @Test func badInputExitsTwoAndRuntimeFailuresExitOne() async throws {
        let usage = try await BluetideExecutable.run(["scan", "--no-such-option"])
        #expect(usage.status == 2)
        #expect(usage.stderr.first?.contains("--no-such-option") == true, "\(usage.stderr)")
        let badValue = try await BluetideExecutable.run(["subscribe", "X", "2A37", "--count", "0"])
        #expect(badValue.status == 2)
        #expect(badValue.stderr == ["bluetide: --count 0: expected at least 1"])
        let runtime = try await BluetideExecutable.run(["read", "Nobody", "2A19", "--timeout", "0.5", "--emulate", "heart-rate"])
        #expect(runtime.status == 1)
        #expect(runtime.stderr.count == 1 && runtime.stderr[0].hasPrefix("bluetide: no device named Nobody"), "\(runtime.stderr)")
    }

    @Test func plainVirtualWithNoDevicesWarnsAtStartAndSaysWhatToAdd() async throws {
        let run = try await BluetideExecutable.run(["scan", "--timeout", "0.3"])
        #expect(run.status == 0)
        #expect(run.stderr.count == 1 && run.stderr[0].hasPrefix("WARNING bluetide.app: the virtual transport has no devices"), "\(run.stderr)")
        #expect(run.stderr.first?.contains("--emulate PROFILE") == true)
        let quiet = try await BluetideExecutable.run(["scan", "--timeout", "0.3", "--log-level", "error"])
        #expect(quiet.stderr.isEmpty, "\(quiet.stderr)")
    }

    @Test func withJSONErrorsAreOneJSONObjectOnStandardError() async throws {
        let runtime = try await BluetideExecutable.run(["read", "Nobody", "2A19", "--timeout", "0.5", "--emulate", "heart-rate", "--json"])
        #expect(runtime.status == 1)
        let error = try #require(try Self.errorObject(runtime.stderr))
        #expect(error["code"] as? String == "failure")
        #expect((error["message"] as? String)?.hasPrefix("no device named Nobody") == true)
        let usage = try await BluetideExecutable.run(["decode", "heart-rate", "--json", "--circumference", "-3", "00"])
        #expect(usage.status == 2)
        let refused = try #require(try Self.errorObject(usage.stderr))
        #expect(refused["code"] as? String == "usage")
        #expect(refused["field"] as? String == "--circumference")
    }

    static func errorObject(_ stderr: [String]) throws -> [String: Any]? {
        #expect(stderr.count == 1, "\(stderr)")
        let object = try JSONSerialization.jsonObject(with: Data((stderr.first ?? "").utf8)) as? [String: Any]
        return object?["error"] as? [String: Any]
    }

    @Test func failuresThatNameAnOptionAreUsageErrors() {
        let option = CommandFailure("--count 0: expected at least 1")
        #expect(option.status == .usage && option.field == "--count")
        let runtime = CommandFailure("no device named X seen within 5 s")
        #expect(runtime.status == .failure && runtime.field == nil)
        let explicit = CommandFailure.usage("zz is not hex", field: "HEX")
        #expect(explicit.status == .usage && explicit.field == "HEX")
        #expect(ExitStatus.allCases.map(\.rawValue) == [0, 1, 2, 130])
    }

    /// Issue 21 item 12: at trace level the host logs the protocol, one line per packet: HCI
    /// commands and events by name, ATT operations by name.
    @Test func traceLevelShowsHCIAndATTOneLinePerPacket() async throws {
        let run = try await BluetideExecutable.run(["read", "Bluetide HRM", "battery-level", "--emulate", "heart-rate", "--log-level", "trace"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains { $0.hasPrefix("TRACE bluetide.hci: → HCI command Reset (0x0C03)") }, "\(run.stderr.prefix(20))")
        #expect(run.stderr.contains { $0.hasPrefix("TRACE bluetide.hci: ← HCI event Command Complete: Reset (0x0C03) status 0x00") })
        #expect(run.stderr.contains { $0.hasPrefix("TRACE bluetide.hci: ← HCI event LE Meta: Connection Complete") || $0.contains("LE Meta: Enhanced Connection Complete") })
        #expect(run.stderr.contains { $0.hasPrefix("TRACE bluetide.att: → ATT handle 0x") && $0.contains("Read Request (0x0A) 0a") })
        #expect(run.stderr.contains { $0.hasPrefix("TRACE bluetide.att: ← ATT handle 0x") && $0.contains("Read Response (0x0B) 0b") })
        // Below trace, none of it.
        let debug = try await BluetideExecutable.run(["read", "Bluetide HRM", "battery-level", "--emulate", "heart-rate", "-vv"])
        #expect(!debug.stderr.contains { $0.contains("bluetide.hci: →") || $0.contains("bluetide.att: ←") })
    }

    @Test func logsGoToStandardErrorAtTheLevelAskedFor() async throws {
        var errors: [String: [String]] = [:]
        for level in ["default", "-v", "-vv", "--log-level=error"] {
            let extra = level == "default" ? [] : [level]
            let process = try BluetideExecutable.launch(["shell", "Bluetide HRM", "--emulate", "heart-rate"] + extra)
            try await process.writeToStdin("info\n")
            await process.closeStdin()
            let status = await process.waitForCompletion(timeout: .seconds(60))
            await process.stop()
            let stderr = await process.output(.stderr)
            #expect(status == 0, "\(level): \(stderr)")
            errors[level] = stderr
        }
        #expect(errors["default"] == [])
        #expect(errors["--log-level=error"] == [])
        let info = try #require(errors["-v"])
        #expect(info.contains { $0.hasPrefix("INFO bluetide.app: connected to Bluetide HRM") }, "\(info)")
        #expect(!info.contains { $0.hasPrefix("DEBUG") })
        let debug = try #require(errors["-vv"])
        #expect(debug.contains { $0.hasPrefix("DEBUG bluetide.app: bluetide \(BluetideVersion.current): shell") }, "\(debug)")
        #expect(LoggingOptions.level(in: ["scan", "-vvv"]) == .trace)
        #expect(LoggingOptions.level(in: ["scan", "--log-level", "notice", "-v"]) == .notice)
        #expect(LoggingOptions.level(in: ["decode", "--", "-v"]) == .warning)
        // Every command takes them, not only those that declare the option group.
        #expect(try LoggingOptions.split(["decode", "-vv", "heart-rate", "--log-level", "info", "00"]).rest == ["decode", "heart-rate", "00"])
        #expect(throws: CommandFailure.self) { try LoggingOptions.split(["scan", "--log-level", "loud"]) }
        let decode = try await BluetideExecutable.run(["decode", "heart-rate", "-v", "0048"])
        #expect(decode.status == 0 && decode.stdout.count == 1, "\(decode.stderr)")
    }

    @Test func numbersAreRoundedOneWay() {
        #expect(JSONOutputValue.format(1.1363676329999999) == "1.136368")
        #expect(JSONOutputValue.format(90.0) == "90")
        #expect(JSONOutputValue.format(-0.0000001) == "0")
        #expect(JSONOutputValue.format(.infinity) == "null")
        let value: JSONOutputValue = ["cadenceRPM": 90.02197802197801, "speedKilometresPerHour": 13.7345, "flags": ["a\"b"]]
        #expect(value.text == #"{"cadenceRPM":90.021978,"flags":["a\"b"],"speedKilometresPerHour":13.7345}"#)
        #expect(HumanFormat.describe(value) == "cadence 90.02 rpm, flags a\"b, speed 13.73 km/h")
        struct Trainer: Encodable { let distanceMeters = 12; let att_error = 1 }
        #expect(JSONOutputValue.encoding(Trainer()).text == #"{"attError":1,"distanceMetres":12}"#)
    }

    /// Human output speaks words, not field names: camelCase labels and values split, one unit
    /// per quantity.
    @Test func humanOutputSaysFieldNamesInWords() {
        let derived: JSONOutputValue = [
            "crankStatus": "heldStale", "cadenceRpm": 90, "instantaneousPower": 250,
            "speedKilometresPerHour": 13.7345, "speedMetresPerSecond": 3.8151, "ring": "R02_B3EE", "label": "Bluetide HRM",
        ]
        #expect(HumanFormat.describe(derived)
            == "cadence 90 rpm, crank status held stale, instantaneous power 250, label Bluetide HRM, ring R02_B3EE, speed 13.73 km/h")
        #expect(HumanFormat.words("heartRate") == "heart rate")
        #expect(HumanFormat.words("baseline") == "baseline")
        #expect(HumanFormat.words("URL") == "URL")
        #expect(HumanFormat.words("x2Value") == "x2Value")
    }

    /// Every example line in every command's help fits in 80 columns once indented, so the
    /// wrapping of `--help` never splits a command in two.
    @Test func helpExamplesFitInEightyColumns() {
        var tooLong: [String] = []
        func visit(_ command: any ParsableCommand.Type, path: String) {
            let configuration = command.configuration
            let name = path.isEmpty ? (configuration.commandName ?? "bluetide") : "\(path) \(configuration.commandName ?? "")"
            // Example lines start with a command; a long one continues on lines after a " \\".
            var continues = false
            for line in configuration.discussion.split(separator: "\n") {
                let text = line.trimmingCharacters(in: .whitespaces)
                let isExample = continues || ["bluetide ", "python", "printf ", "swift "].contains { text.hasPrefix($0) }
                if isExample, line.count + 2 > 80 { tooLong.append("\(name): \(line)") }
                continues = isExample && text.hasSuffix("\\")
            }
            for subcommand in configuration.subcommands { visit(subcommand, path: name) }
        }
        visit(BluetideCommand.self, path: "")
        #expect(tooLong.isEmpty, "examples longer than 78 characters:\n\(tooLong.joined(separator: "\n"))")
    }
}
