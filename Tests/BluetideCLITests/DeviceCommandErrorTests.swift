import Foundation
import Testing
@testable import BluetideCommands

@Suite struct DeviceCommandErrorTests {
    @Test func unknownNameSaysWhatWasLookedForAndSuggestsScan() async throws {
        let command = try ReadCommand.parse(
            ["Nobody", "2A19", "--timeout", "1", "--transport", privateLink(), "--emulate", "heart-rate"])
        let message = try await failureMessage(inVirtualTime: { try await command.execute(LineCollector().output, clock: $0) })
        #expect(message == "no device named Nobody seen within 1 s; try `bluetide scan`")
    }

    /// `--timeout` bounds a connect to an address (issue 21 item 4: `--timeout 2` took 27.6 s
    /// and the error said "within 5 s"; the ring's 10 s took 1 min 45 s).
    @Test func anAddressThatDoesNotAnswerFailsWithinTheTimeoutGivenAndSaysIt() async throws {
        let command = try ReadCommand.parse(
            ["C1:C2:C3:C4:C5:C6/R", "2A19", "--timeout", "1", "--transport", privateLink(), "--emulate", "heart-rate"])
        let message = try await failureMessage(inVirtualTime: { try await command.execute(LineCollector().output, clock: $0) })
        #expect(message == "cannot connect to C1:C2:C3:C4:C5:C6/R: no connection to C1:C2:C3:C4:C5:C6/R within 1 s: is it advertising and connectable, and is the address type (/P public, /R random) right?")
        // (In virtual time here; how long it takes in real time is checked on the executable below.)
    }

    /// The ring's connect, as its own process: `--timeout 3` ends in about 3 s. Before, the
    /// floor made it 5 s and the stack's clamped clock stretched that to 27.5 s (a 3 s limit
    /// alone to 10.5 s).
    @Test func theRingsTimeoutBoundsItsConnectToo() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bluetide-ring-timeout-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let started = ContinuousClock.now
        let run = try await BluetideExecutable.run([
            "ring", "battery", "--device", "C1:C2:C3:C4:C5:C6/R", "--timeout", "3", "--emulate", "colmi-r02",
            "--pairing-file", folder.appendingPathComponent("ring.json").path,
        ])
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr == ["bluetide: cannot connect to C1:C2:C3:C4:C5:C6/R: no connection to C1:C2:C3:C4:C5:C6/R within 3 s: is it advertising and connectable, and is the address type (/P public, /R random) right?"])
        // A hang guard with room for a busy machine, still well short of the 27.5 s it took before.
        #expect(ContinuousClock.now - started < .seconds(20), "\(ContinuousClock.now - started)")
    }

    @Test func missingCharacteristicListsWhatExists() async throws {
        let command = try ReadCommand.parse(["Bluetide HRM", "2A5B", "--transport", privateLink(), "--emulate", "heart-rate"])
        let message = try #require(try await failureMessage(inVirtualTime: { try await command.execute(LineCollector().output, clock: $0) }))
        #expect(message.hasPrefix("characteristic 2A5B not found on Bluetide HRM"), "\(message)")
        #expect(message.contains("2A37 Heart Rate Measurement") && message.contains("2A19"), "\(message)")
        #expect(!message.contains("\n"))
    }

    @Test func valueThatDoesNotDecodeShowsHexAndTheDecoderError() async throws {
        let command = try ReadCommand.parse(
            ["Bluetide HRM", "battery-level", "--profile", "heart-rate", "--transport", privateLink(), "--emulate", "heart-rate"])
        let message = try #require(try await failureMessage(inVirtualTime: { try await command.execute(LineCollector().output, clock: $0) }))
        #expect(message.hasPrefix("value ") && message.contains("does not decode as heart-rate"), "\(message)")
    }

    @Test func transportThatCannotOpenIsOneLine() async throws {
        let command = try ScanCommand.parse(["--transport", "tcp-client:127.0.0.1:1", "--timeout", "1"])
        let message = try #require(try await failureMessage { try await command.execute(LineCollector().output) })
        #expect(message.hasPrefix("cannot open transport tcp-client:127.0.0.1:1"), "\(message)")
        #expect(message.components(separatedBy: "cannot open transport").count == 2, "said once: \(message)")
        let emulateOnSerial = try ScanCommand.parse(["--transport", "tcp-client:127.0.0.1:1", "--emulate", "csc"])
        let refused = try #require(try await failureMessage { try await emulateOnSerial.execute(LineCollector().output) })
        #expect(refused.contains("--emulate needs a virtual transport"))
        let badModel = try ScanCommand.parse(["--emulate", "toaster"])
        #expect(try await failureMessage { try await badModel.execute(LineCollector().output) }?.contains("unknown device model") == true)
    }

    @Test func executableExitsOneWithOneLineForAnUnknownDevice() async throws {
        // Stderr is also copied byte for byte to a file, so the exact text (newline included) is checked.
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("bluetide-gatt-error-\(UUID().uuidString).txt")
        defer { try? FileManager.default.removeItem(at: log) }
        let run = try await BluetideExecutable.run(["gatt", "Nobody", "--timeout", "1", "--emulate", "heart-rate"], stderrLog: log)
        #expect(run.status == 1)  // a device not found is a runtime failure (bad input is 2)
        let text = String(decoding: try Data(contentsOf: log), as: UTF8.self)
        #expect(text == "bluetide: no device named Nobody seen within 1 s; try `bluetide scan`\n")
    }
}
