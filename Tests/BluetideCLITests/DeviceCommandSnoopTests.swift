import BluetideHCI
import BluetideTransport
import Foundation
import Testing
@testable import BluetideCommands

/// `+snoop:FILE` together with `--emulate`: the capture is written, and holds the central's
/// own HCI traffic only (the emulated devices have controllers of their own), in time order.
@Suite struct DeviceCommandSnoopTests {
    /// Reads `2A19` from an emulated strap over `transport` and returns the capture's records.
    static func readCaptured(transport: (String) -> String) async throws -> [BTSnoopRecord] {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("cli-snoop-\(UUID().uuidString).btsnoop").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let collector = LineCollector()
        let command = try ReadCommand.parse(["Bluetide HRM", "2A19", "--raw", "--transport", transport(path), "--emulate", "heart-rate,csc"])
        try await inVirtualTime { try await command.execute(collector.output, clock: $0) }
        #expect(collector.lines.count == 1, "\(collector.lines)")
        return try BTSnoopReader.records(atPath: path)
    }

    static func commands(_ opcode: HCIOpcode, in records: [BTSnoopRecord]) -> Int {
        records.count { if case let .command(sent, _) = $0.packet { sent == opcode } else { false } }
    }

    static func expectCentralOnly(_ records: [BTSnoopRecord]) {
        #expect(records.count > 10, "capture written: \(records.count) records")
        // One controller: one reset; two emulated devices would add two more and their advertising.
        #expect(commands(HCIReset.opcode, in: records) == 1)
        #expect(commands(LESetAdvertisingData.opcode, in: records) == 0)
        #expect(commands(LECreateConnection.opcode, in: records) == 1)
        #expect(records.contains { if case .acl = $0.packet { $0.direction == .received } else { false } })
        #expect(zip(records, records.dropFirst()).allSatisfy { $0.timestamp <= $1.timestamp }, "timestamps run backwards")
    }

    @Test func plainVirtualWithSnoopAndEmulateWritesTheCentralsCapture() async throws {
        Self.expectCentralOnly(try await Self.readCaptured { "virtual+snoop:\($0)" })
    }

    @Test func namedVirtualWithSnoopKeepsTheDevicesPacketsOut() async throws {
        Self.expectCentralOnly(try await Self.readCaptured { "\(privateLink())+snoop:\($0)" })
    }

    @Test func snoopTwiceIsRefusedSayingWhich() async throws {
        let message = try await failureMessage {
            let session = try await DeviceSession.open(
                try DeviceSessionOptions.parse(["--transport", "virtual+snoop:/tmp/a.btsnoop", "--emulate", "heart-rate"]),
                snoop: "/tmp/b.btsnoop")
            await session.close()
        }
        #expect(message?.contains("already has +snoop") == true, "\(message ?? "no failure")")
    }

    @Test func emulateWritesOneCapturePerDeviceEachWithItsOwnControllerOnly() async throws {
        let directory = FileManager.default.temporaryDirectory
        let first = directory.appendingPathComponent("emulate-\(UUID().uuidString).btsnoop").path
        let second = EmulateCommand.capturePath(first, device: 1, of: 2) ?? ""
        defer {
            try? FileManager.default.removeItem(atPath: first)
            try? FileManager.default.removeItem(atPath: second)
        }
        let run = try await BluetideExecutable.run(
            ["emulate", "heart-rate", "csc", "--transport", "virtual+snoop:\(first)", "--duration", "0.5", "--seed", "3"])
        #expect(run.status == 0, "\(run.stderr)")
        for path in [first, second] {
            let records = try BTSnoopReader.records(atPath: path)
            #expect(Self.commands(HCIReset.opcode, in: records) == 1, "\(path): one controller's reset")
            #expect(Self.commands(LESetAdvertisingData.opcode, in: records) >= 1, "\(path): the device advertised")
            #expect(zip(records, records.dropFirst()).allSatisfy { $0.timestamp <= $1.timestamp }, "\(path): timestamps run backwards")
        }
    }

    @Test func emulateGivesEachDeviceItsOwnCaptureFile() {
        #expect(EmulateCommand.capturePath("/tmp/x.btsnoop", device: 0, of: 2) == "/tmp/x.btsnoop")
        #expect(EmulateCommand.capturePath("/tmp/x.btsnoop", device: 1, of: 2) == "/tmp/x-2.btsnoop")
        #expect(EmulateCommand.capturePath("/tmp/capture", device: 2, of: 3) == "/tmp/capture-3")
        #expect(EmulateCommand.capturePath(nil, device: 1, of: 2) == nil)
    }
}
