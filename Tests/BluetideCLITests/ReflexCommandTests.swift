import Foundation
import Testing
@testable import BluetideCommands

@Suite struct ReflexCommandTests {
    private func options(_ arguments: [String]) throws -> ReflexDeviceCommand {
        let parsed = try BluetideCommand.parseAsRoot(["reflex", "device"] + arguments)
        return try #require(parsed as? ReflexDeviceCommand)
    }

    private func file(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("reflex-\(UUID().uuidString).conf").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func defaultsAndOverrides() throws {
        let plain = try options([]).resolvedOptions()
        #expect(plain.configuration.backend == .linux && plain.name == nil)
        #expect(try options([]).transport == "virtual")
        let path = try file("backend = linux\ndevice-name = \"Reflex-Gym\"\ndebounce-ms = 30\n")
        let resolved = try options(["--config", path, "--gpio", "sim", "--name", "Ring-1"]).resolvedOptions()
        #expect(resolved.configuration.backend == .sim)
        #expect(resolved.configuration.debounceMilliseconds == 30)
        #expect(resolved.configuration.deviceName == "Reflex-Gym")
        #expect(resolved.name == "Ring-1")
    }

    @Test func badConfigurationFailsWithTheParsersMessage() throws {
        let path = try file("chip = /dev/gpiochip0\n[target.0]\nled = 17\nsensor = 17\n")
        do {
            _ = try options(["--config", path]).resolvedOptions()
            Issue.record("a bad file was accepted")
        } catch let failure as CommandFailure {
            #expect(failure.message.hasPrefix(path + ": "))
            #expect(failure.message.contains("target"))
        }
        let debounce = try file("debounce-ms = abc\n")
        #expect(throws: CommandFailure.self) { try options(["--config", debounce]).resolvedOptions() }
        let missing = "/nonexistent/reflex.conf"
        do {
            _ = try options(["--config", missing]).resolvedOptions()
            Issue.record("a missing file was accepted")
        } catch let failure as CommandFailure {
            #expect(failure.message.contains("cannot read"))
        }
        #expect(throws: CommandFailure.self) { try options(["--gpio", "gpiozero"]).resolvedOptions() }
        #expect(throws: CommandFailure.self) { try options(["--name", String(repeating: "x", count: 40)]).resolvedOptions() }
        #expect(throws: CommandFailure.self) { try options(["--duration=-1"]).resolvedOptions() }
    }

    @Test func debounceErrorNamesLineAndKey() throws {
        let path = try file("# reflex\ndebounce-ms = abc\n")
        do {
            _ = try options(["--config", path]).resolvedOptions()
            Issue.record("accepted")
        } catch let failure as CommandFailure {
            #expect(failure.message == "\(path): line 2: debounce-ms: expected an integer number of milliseconds 0…1000, found \"abc\"")
        }
    }
}
