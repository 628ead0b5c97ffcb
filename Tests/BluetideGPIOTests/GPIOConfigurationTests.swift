import Testing
@testable import BluetideGPIO

@Suite struct GPIOConfigurationTests {
    /// The error message for a file, or nil when it parses.
    func failure(_ text: String) -> String? {
        do {
            _ = try GPIOConfiguration.parse(text)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func defaultMatchesTheReflexTrainerMap() {
        let c = GPIOConfiguration.reflexDefault
        #expect(c.backend == .linux && c.chipPath == "/dev/gpiochip0" && c.debounceMilliseconds == 20)
        #expect(c.sensorActiveLow && c.sensorBias == .pullUp && c.deviceName == nil)
        #expect(c.targets.map(\.ledLine) == [17, 27, 22, 23, 24, 25])
        #expect(c.targets.map(\.sensorLine) == [5, 6, 13, 19, 26, 16])
        #expect(c.targets.map(\.colour) == ["red", "blue", "green", "yellow", "white", "orange"])
        #expect(c.target(forSensorLine: 19)?.index == 3 && c.target(forLEDLine: 25)?.index == 5)
        #expect(throws: Never.self) { try c.validate() }
    }

    @Test func emptyFileGivesTheDefault() throws {
        #expect(try GPIOConfiguration.parse("") == .reflexDefault)
        #expect(try GPIOConfiguration.parse("# only a comment\n\n   \n") == .reflexDefault)
    }

    @Test func fullFileParses() throws {
        let text = """
            # Gym setup
            backend = sim            # simulated GPIO
            chip = gpiochip1
            device-name = "Reflex #2 \\"ring\\""
            debounce-ms = 15
            sensor-active-low = false
            sensor-bias = pull-down

            [target.0]
            led = 2
            sensor = 3
            colour = purple
            [target.1]
            led = 4
            sensor = 5
            [target.2]
            led = 6
            sensor = 7
            [target.3]
            led = 8
            sensor = 9
            [target.4]
            led = 10
            sensor = 11
            [target.5]
            led = 12
            sensor = 13

            [sim]
            reaction-mean-ms = 280.5
            reaction-sd-ms = 40
            reaction-min-ms = 100
            reaction-max-ms = 900
            miss-probability = 0.1
            wrong-target-probability = 0.02
            hold-ms = 80
            seed = 12345
            """
        let c = try GPIOConfiguration.parse(text)
        #expect(c.backend == .sim && c.chipPath == "/dev/gpiochip1" && c.deviceName == "Reflex #2 \"ring\"")
        #expect(c.debounceMilliseconds == 15 && !c.sensorActiveLow && c.sensorBias == .pullDown)
        #expect(c.targets[0] == GPIOTarget(index: 0, colour: "purple", ledLine: 2, sensorLine: 3))
        #expect(c.targets[5] == GPIOTarget(index: 5, colour: "orange", ledLine: 12, sensorLine: 13))
        #expect(c.athlete == AthleteBehaviour(meanReactionMilliseconds: 280.5, reactionStandardDeviationMilliseconds: 40,
            minimumReactionMilliseconds: 100, maximumReactionMilliseconds: 900, missProbability: 0.1,
            wrongTargetProbability: 0.02, holdMilliseconds: 80))
        #expect(c.simulationSeed == 12345)
        #expect(c.sensorSettings == .input(bias: .pullDown, edges: .both, debounceMicroseconds: 15_000, activeLow: false))
        // Dotted keys at the top level mean the same as sections.
        let dotted = try GPIOConfiguration.parse("sim.seed = 7\nchip = 3\n")
        #expect(dotted.simulationSeed == 7 && dotted.chipPath == "/dev/gpiochip3")
    }

    @Test func fileTextRoundTrips() throws {
        #expect(try GPIOConfiguration.parse(GPIOConfiguration.reflexDefault.fileText) == .reflexDefault)
        var custom = GPIOConfiguration.reflexDefault
        custom.deviceName = "Ring \"A\""
        custom.simulationSeed = 99
        custom.athlete.meanReactionMilliseconds = 301.25
        custom.backend = .sim
        #expect(try GPIOConfiguration.parse(custom.fileText) == custom)
    }

    @Test func syntaxErrorsNameTheLine() {
        #expect(failure("backend = linux\njust words\n") == "line 2: expected \"key = value\" or \"[section]\", found \"just words\"")
        #expect(failure("[sim\nseed = 1") == "line 1: expected a section like [sim] or [target.0], found \"[sim\"")
        #expect(failure("bad key! = 1") == "line 1: expected a key of letters, digits, '-' and '.', found \"bad key!\"")
        #expect(failure("chip = 0\nchip = 1\n") == "line 2: chip: set twice (first on line 1)")
        #expect(failure("device-name = \"open") == "line 1: device-name: unterminated quoted string: \"open")
    }

    @Test func badValuesNameKeyExpectedAndFound() {
        #expect(failure("backend = gpiod") == "line 1: backend: expected linux or sim, found \"gpiod\"")
        #expect(failure("\n\ndebounce-ms = abc") == "line 3: debounce-ms: expected an integer number of milliseconds 0…1000, found \"abc\"")
        #expect(failure("debounce-ms = 5000") == "line 1: debounce-ms: expected an integer number of milliseconds 0…1000, found \"5000\"")
        #expect(failure("debounce-ms = -1") == "line 1: debounce-ms: expected an integer number of milliseconds 0…1000, found \"-1\"")
        #expect(failure("chip = gpio") == "line 1: chip: expected a device path like /dev/gpiochip0 (or gpiochip0, or 0), found \"gpio\"")
        #expect(failure("sensor-active-low = maybe") == "line 1: sensor-active-low: expected true or false, found \"maybe\"")
        #expect(failure("sensor-bias = up") == "line 1: sensor-bias: expected as-is, pull-up, pull-down, disabled, found \"up\"")
        #expect(failure("device-name = \"\"") == "line 1: device-name: expected a name of 1…29 UTF-8 bytes, found \"\"")
        #expect(failure("[sim]\nmiss-probability = 1.5") == "line 2: sim.miss-probability: expected a probability 0…1, found \"1.5\"")
        #expect(failure("[sim]\nreaction-sd-ms = fast") == "line 2: sim.reaction-sd-ms: expected milliseconds 0…60000, found \"fast\"")
        #expect(failure("[sim]\nseed = -4") == "line 2: sim.seed: expected an integer 0…18446744073709551615, found \"-4\"")
    }

    @Test func unknownKeysAndSections() {
        #expect(failure("debounce = 20") == "line 1: debounce: unknown key: expected one of backend, chip, device-name, "
            + "debounce-ms, sensor-active-low, sensor-bias, a [target.N] section or a [sim] section")
        #expect(failure("[sim]\nspeed = 3") == "line 2: sim.speed: unknown key: expected one of sim.reaction-mean-ms, "
            + "sim.reaction-sd-ms, sim.reaction-min-ms, sim.reaction-max-ms, sim.miss-probability, "
            + "sim.wrong-target-probability, sim.hold-ms, sim.seed")
        #expect(failure("[target.6]\nled = 1") == "line 2: target.6.led: target index \"6\" out of range: expected 0…5")
        #expect(failure("[target.0]\nbutton = 1") == "line 2: target.0.button: unknown key \"button\" in a target: expected one of led, sensor, colour")
        #expect(failure("[leds]\nred = 17")?.hasPrefix("line 2: leds.red: unknown key: expected one of backend") == true)
    }

    /// The default map as file text, with `edit` applied to its lines.
    func defaultTargets(_ edit: (inout [String]) -> Void) -> String {
        var lines = GPIOConfiguration.defaultTargets.flatMap { t in ["[target.\(t.index)]", "led = \(t.ledLine)", "sensor = \(t.sensorLine)"] }
        edit(&lines)
        return lines.joined(separator: "\n")
    }

    @Test func targetValidation() {
        // Target 3's LED moved onto target 0's LED line (17).
        #expect(failure(defaultTargets { $0[10] = "led = 17" })
            == "line 11: target.3.led: GPIO line 17 is used twice: by target.0.led (line 2) and target.3.led (line 11); "
            + "give every LED and sensor its own line")
        // Target 2's sensor on its own LED line.
        #expect(failure(defaultTargets { $0[8] = "sensor = 22" })
            == "line 9: target.2.sensor: GPIO line 22 is used as both LED and sensor: by target.2.led (line 8) and "
            + "target.2.sensor (line 9); give every LED and sensor its own line")
        #expect(failure(defaultTargets { $0.removeSubrange(12..<18) })
            == "targets 4, 5 missing: give all six targets 0…5 a led and a sensor line, or none to use the default map")
        #expect(failure(defaultTargets { $0.remove(at: 5) }) == "target.1.sensor: missing: each target needs a led and a sensor line")
        #expect(failure(defaultTargets { $0[1] = "led = 900" })
            == "line 2: target.0.led: expected a GPIO line number 0…511, found \"900\"")
    }

    @Test func simulationValuesAreCheckedTogether() {
        #expect(failure("[sim]\nmiss-probability = 0.6\nwrong-target-probability = 0.5")
            == "line 3: sim.wrong-target-probability: miss-probability + wrong-target-probability must be at most 1, found 1.1")
        #expect(failure("[sim]\nreaction-min-ms = 500\nreaction-max-ms = 400")
            == "line 3: sim.reaction-max-ms: must be at least sim.reaction-min-ms (500.0), found 400.0")
    }

    @Test func validateCatchesConfigurationsBuiltInCode() {
        var c = GPIOConfiguration.reflexDefault
        c.debounceMilliseconds = 2_000
        #expect(throws: GPIOConfigurationError(line: nil, key: "debounce-ms",
            message: "expected an integer number of milliseconds 0…1000, found \"2000\"")) { try c.validate() }
        c = .reflexDefault
        c.targets.removeLast()
        #expect(throws: GPIOConfigurationError.self) { try c.validate() }
    }

    @Test func lineRequestHoldsLEDsThenSensors() {
        let request = GPIOConfiguration.reflexDefault.lineRequest(consumer: "reflex")
        #expect(request.offsets == [17, 27, 22, 23, 24, 25, 5, 6, 13, 19, 26, 16])
        #expect(request.lines.prefix(6).allSatisfy { $0.settings == .output(initial: false) })
        #expect(request.lines.suffix(6).allSatisfy {
            $0.settings == .input(bias: .pullUp, edges: .both, debounceMicroseconds: 20_000, activeLow: true)
        })
    }

    @Test func unreadableFileIsNamed() {
        #expect(throws: GPIOConfigurationError(line: nil, key: nil,
            message: "cannot read GPIO configuration file /nonexistent/reflex.conf: it must exist and be readable UTF-8 text")) {
            try GPIOConfiguration.load(path: "/nonexistent/reflex.conf")
        }
    }
}

#if canImport(Foundation)
import Foundation
import BluetideSupport

@Suite struct GPIOConfigurationDocumentationTests {
    /// docs/gpio-config.md shows the default file exactly as `fileText` writes it.
    @Test func documentedDefaultFileIsCurrent() throws {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/gpio-config.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        let marker = "## The default file\n\n```\n"
        let start = try #require(text.range(of: marker)).upperBound
        let end = try #require(text.range(of: "```", range: start..<text.endIndex)).lowerBound
        #expect(String(text[start..<end]) == GPIOConfiguration.reflexDefault.fileText)
    }
}
#endif

@Suite struct GPIOConfigurationRobustnessTests {
    /// Random text built from the file's own vocabulary: a configuration or an error, never a trap.
    @Test func randomFilesNeverTrap() {
        let pieces = ["backend", "chip", "=", "[sim]", "[target.", "]", "led", "sensor", "17", "-1", "\"", "#", "\n",
                      " ", "0.5", "target.3.led", "sim.seed", "99999999999999999999", "é", "\\", ".", "debounce-ms", "\r\n"]
        var rng = SplitMix64(seed: 11)
        var parsed = 0
        for _ in 0..<3_000 {
            let count = Int(rng.next() % 40)
            let text = (0..<count).map { _ in pieces[Int(rng.next() % UInt64(pieces.count))] }.joined()
            if (try? GPIOConfiguration.parse(text)) != nil { parsed += 1 }
        }
        #expect(parsed > 0)
    }
}
