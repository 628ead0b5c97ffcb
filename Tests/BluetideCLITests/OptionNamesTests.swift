import ArgumentParser
import BluetideRecording
import Foundation
import Testing
@testable import BluetideCommands

/// One name per idea across commands: `--scan-time` for how long a listing scan runs,
/// `--timeout` for how long to look for the devices a command connects to, `--pace` for a
/// replay's speed; the old spellings still parse (hidden, deprecated), and negative numbers
/// work with a space.
@Suite struct OptionNamesTests {
    @Test func scanTimeAndTimeoutMeanOneThingEach() throws {
        #expect(try ScanCommand.parse(["--scan-time", "3"]).timeout == 3)
        #expect(try ScanCommand.parse(["--timeout", "4"]).timeout == 4, "the old name still works")
        let ride = try #require(try RideCommand.parseAsRoot(["--timeout", "3"]) as? RideRunCommand)
        #expect(ride.options.devices.scan == 3)
        let oldRide = try #require(try RideCommand.parseAsRoot(["--scan", "7"]) as? RideRunCommand)
        #expect(oldRide.options.devices.scan == 7, "the old name still works")
        #expect(try ReflexCoachRun.parse(["--athlete", "A", "--sequence", "S", "--timeout", "9"]).scanSeconds == 9)
        #expect(try ReflexCoachRun.parse(["--athlete", "A", "--sequence", "S", "--scan-seconds", "8"]).scanSeconds == 8)
        #expect(try ReflexCoachServe.parse(["--timeout", "9"]).scanSeconds == 9)
        #expect(try ReflexCoachServe.parse(["--scan-seconds", "8"]).scanSeconds == 8)
    }

    @Test func replayAndRideTakeThePaceTheSameWay() throws {
        for (words, pace) in [(["--pace", "10"], ReplayPace.speed(10)), (["--pace", "fast"], .asFastAsPossible),
                              (["--pace", "original"], .original), (["--speed", "10"], .speed(10)),
                              (["--as-fast-as-possible"], .asFastAsPossible), ([], .original)] {
            #expect(try ReplayCommand.parse(["x.jsonl"] + words).settings().0 == pace, "replay \(words)")
            if words.first == "--pace" {
                let ride = try #require(try RideCommand.parseAsRoot(["--replay", "x.jsonl"] + words) as? RideRunCommand)
                #expect(try RideRunOptions.parsePace(ride.options.pace) == pace, "ride \(words)")
            }
        }
        do {
            _ = try ReplayCommand.parse(["x.jsonl", "--pace", "0"]).settings()
            Issue.record("--pace 0 accepted")
        } catch let failure as CommandFailure {
            #expect(failure.status == .usage && failure.message.hasPrefix("--pace 0: expected original, fast or a speed factor"))
        }
    }

    /// The help shows only the new names; each says its old name still works.
    @Test func oldNamesAreHiddenAndNamedInTheHelp() throws {
        // The help as one line of words (the wrapping does not matter here).
        let helps = Dictionary(uniqueKeysWithValues: HelpSnapshots.all().map {
            ($0.commandLine, $0.text.split(whereSeparator: \.isWhitespace).joined(separator: " "))
        })
        let scan = try #require(helps["bluetide scan"])
        #expect(scan.contains("--scan-time <scan-time>") && !scan.contains("--timeout <") && scan.contains("--timeout, its old name"))
        for command in ["bluetide ride run", "bluetide ride serve", "bluetide ride bridge"] {
            let text = try #require(helps[command], "\(command)")
            #expect(text.contains("--timeout <timeout>") && !text.contains("--scan <") && text.contains("--scan, its old name"), "\(command)")
        }
        for command in ["bluetide reflex coach run", "bluetide reflex coach serve"] {
            let text = try #require(helps[command], "\(command)")
            #expect(text.contains("--timeout <timeout>") && !text.contains("--scan-seconds <"), "\(command)")
        }
        let replay = try #require(helps["bluetide replay"])
        #expect(replay.contains("--pace <pace>") && !replay.contains("--speed <") && !replay.contains("[--as-fast-as-possible]"))
    }

    /// `--grade -2` (no `=`) is a grade, and `weight NAME -3` reaches the weight's own check.
    @Test func negativeNumbersAreValuesWithASpace() throws {
        let ride = try #require(try BluetideMain.parse(["ride", "--grade", "-2", "--duration", "5"]) as? RideRunCommand)
        #expect(ride.options.grade == -2)
        let steep = try #require(try BluetideMain.parse(["ride", "--grade", "-55"]) as? RideRunCommand)
        do {
            _ = try steep.options.target()
            Issue.record("--grade -55 accepted")
        } catch let failure as CommandFailure {
            #expect(failure.message == "--grade -55.0: expected −40…40 percent" && failure.status == .usage)
        }
        let weight = try #require(try BluetideMain.parse(["reflex", "coach", "athletes", "weight", "Ana", "-3", "--db", "/nonexistent/x.sqlite"])
            as? ReflexCoachAthletes.Weight)
        #expect(weight.kilograms == "-3")
        do {
            _ = try weight.outputs()
            Issue.record("a weight of -3 accepted")
        } catch let failure as CommandFailure {
            #expect(failure.status == .usage)
            #expect(failure.message == "KILOGRAMS: expected kilograms above 0 and below 500, as a decimal number like 63.5, got \"-3\"", "\(failure.message)")
        }
        // Not a negative number: the parser's error stands.
        #expect(NegativeNumberArguments.repaired(["ride", "--grade", "--erg"]) == nil)
        struct Other: Error {}
        #expect(NegativeNumberArguments.repaired(["decode", "heart-rate", "-16"], after: Other()) == nil, "only a missing value or argument")
        #expect(NegativeNumberArguments.repaired(["w", "Ana", "-3", "--db", "x"]) == ["w", "Ana", "--db", "x", "--", "-3"])
        #expect(NegativeNumberArguments.repaired(["ride", "--grade", "-2", "--json"]) == ["ride", "--grade=-2", "--json"])
        #expect(NegativeNumberArguments.isNegativeNumber("-2.5") && !NegativeNumberArguments.isNegativeNumber("-v")
            && !NegativeNumberArguments.isNegativeNumber("--json"))
    }
}
