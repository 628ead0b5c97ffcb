import BluetideRecording
import Foundation
import Testing
@testable import BluetideCommands

/// The commands run in this process, in virtual time (``inVirtualTime(guard:_:)``): the emulated
/// devices tick and the `--timeout`s pass on a manual clock, however busy the machine is.
@Suite struct ValueCommandTests {
    @Test func readPrintsTheBatteryLevelDecoded() async throws {
        let collector = LineCollector()
        let command = try ReadCommand.parse(["Bluetide HRM", "battery-level", "--transport", privateLink(), "--emulate", "heart-rate", "--timeout", "60"])
        try await inVirtualTime { try await command.execute(collector.output, clock: $0) }
        #expect(collector.lines.count == 1, "\(collector.lines)")
        let line = try #require(collector.lines.first)
        #expect(line.contains("%") && line.contains("["), "decoded with hex: \(line)")

        let raw = LineCollector()
        let rawCommand = try ReadCommand.parse(["Bluetide HRM", "2A19", "--raw", "--transport", privateLink(), "--emulate", "heart-rate", "--timeout", "60"])
        try await inVirtualTime { try await rawCommand.execute(raw.output, clock: $0) }
        let hex = try #require(raw.lines.first)
        #expect(hex.count == 2 && UInt8(hex, radix: 16) != nil, "one byte of hex: \(hex)")
        #expect(line.contains(hex), "\(line) vs \(hex)")
    }

    @Test func writeThenReadBackOnTheHM10DataCharacteristic() async throws {
        let link = privateLink()
        let written = LineCollector()
        let write = try WriteCommand.parse(["HMSoft", "FFE1", "48 69 21", "--without-response", "--transport", link, "--timeout", "60"])
        let read = try ReadCommand.parse(["HMSoft", "ffe1", "--raw", "--transport", link, "--timeout", "60"])
        let readBack = LineCollector()
        // One session for both steps, on one clock: the write and read share the emulated device.
        try await inVirtualTime { clock in
            let session = try await DeviceSession.open(try DeviceSessionOptions.parse(["--transport", link, "--emulate", "hm10"]), clock: clock)
            do {
                try await write.execute(written.output, clock: clock)
                try await read.execute(readBack.output, clock: clock)
            } catch {
                await session.close()
                throw error
            }
            await session.close()
        }
        #expect(written.lines.first?.hasPrefix("wrote 3 bytes to FFE1") == true, "\(written.lines)")
        #expect(readBack.lines == ["48 69 21"])
    }

    /// `bluetide write` takes the shell's values: a typed form of the profile, echoed decoded,
    /// and `--json` gives one `written` record.
    @Test func writeTakesTypedFormsAndPrintsWhatWasWritten() async throws {
        let reset = LineCollector()
        let command = try WriteCommand.parse(["Bluetide HRM", "2A39", "reset", "--transport", privateLink(), "--emulate", "heart-rate", "--timeout", "60"])
        try await inVirtualTime { try await command.execute(reset.output, clock: $0) }
        #expect(reset.lines.count == 1)
        #expect(reset.lines.first?.hasPrefix("wrote 1 byte to 2A39 Heart Rate Control Point on Bluetide HRM (") == true, "\(reset.lines)")
        #expect(reset.lines.first?.hasSuffix("): reset energy expended  [01]") == true, "\(reset.lines)")

        let json = LineCollector()
        let power = try WriteCommand.parse(
            ["Bluetide FTMS", "2AD9", "--json", "--transport", privateLink(), "--emulate", "ftms-bike", "--timeout", "60", "--", "target-power", "-5"])
        try await inVirtualTime { try await power.execute(json.output, clock: $0) }
        let object = try #require(json.lines.first.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        #expect(object["type"] as? String == "written")
        #expect((object["value"] as? [String: Any])?["hex"] as? String == "05fbff")
        #expect((object["value"] as? [String: Any])?["profile"] as? String == "ftms-control-point")
        #expect((object["device"] as? [String: Any])?["name"] as? String == "Bluetide FTMS")
        #expect(object["withResponse"] as? Bool == true)

        let bad = try WriteCommand.parse(["Bluetide HRM", "2A39", "bogus", "--transport", privateLink(), "--emulate", "heart-rate", "--timeout", "60"])
        do {
            try await inVirtualTime { try await bad.execute(LineCollector().output, clock: $0) }
            Issue.record("bogus was written")
        } catch let failure as CommandFailure {
            #expect(failure.status == .usage && failure.field == "VALUE")
            #expect(failure.message.contains("expected reset (its profile's forms), or hex (01FF)"), "\(failure.message)")
        }
    }

    @Test func subscribeCountThreePrintsThreeDecodedHeartRateLines() async throws {
        let collector = LineCollector()
        let command = try SubscribeCommand.parse(
            ["Bluetide HRM", "heart-rate", "--count", "3", "--transport", privateLink(), "--emulate", "heart-rate", "--timeout", "60"])
        try await inVirtualTime { try await command.execute(collector.output, clock: $0) }
        #expect(collector.lines.count == 3, "\(collector.lines)")
        for line in collector.lines { #expect(line.contains("bpm"), "decoded: \(line)") }

        let json = LineCollector()
        let jsonCommand = try SubscribeCommand.parse(
            ["Bluetide HRM", "2A37", "--count", "2", "--json", "--transport", privateLink(), "--emulate", "heart-rate", "--timeout", "60"])
        try await inVirtualTime { try await jsonCommand.execute(json.output, clock: $0) }
        let objects = json.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(objects.count == 2)
        // One schema (docs/json-output.md): characteristic and value are objects, with the time.
        #expect(objects.allSatisfy { object in
            let value = object["value"] as? [String: Any]
            return (object["characteristic"] as? [String: Any])?["uuid"] as? String == "2A37" && value?["decoded"] != nil && value?["hex"] is String
                && object["type"] as? String == "notification" && object["time"] is [String: Any]
        })
    }

    @Test func recordWritesALogThatReadsBackAndReplaysToTheSameValues() async throws {
        let directory = FileManager.default.temporaryDirectory
        let out = directory.appendingPathComponent("record-\(UUID().uuidString).jsonl").path
        let snoop = directory.appendingPathComponent("record-\(UUID().uuidString).btsnoop").path
        defer {
            try? FileManager.default.removeItem(atPath: out)
            try? FileManager.default.removeItem(atPath: snoop)
        }
        let collector = LineCollector()
        let command = try RecordCommand.parse(
            ["Bluetide HRM", "heart-rate", "--out", out, "--snoop", snoop, "--count", "4", "--transport", privateLink(),
             "--emulate", "heart-rate", "--timeout", "60"])
        try await inVirtualTime { try await command.execute(collector.output, clock: $0) }
        let lines = collector.lines
        #expect(lines.count == 6, "\(lines)")
        let recorded = Array(lines.dropFirst().prefix(4))
        let log = try ValueLogReader.read(path: out)
        #expect(log.records.count == 4)
        #expect(log.records.allSatisfy { $0.characteristic == .heartRateMeasurement && $0.operation == .notify && $0.profile == "heart-rate" })
        #expect(log.records.first?.device.name == "Bluetide HRM")
        // Timed on the command's clock. The recorder starts before the subscription, and the strap's
        // measurements fall due once a second of its (the same, virtual) clock and go out at its
        // next 0.1 s tick, so the fourth value cannot be recorded before 3 − 0.1 s (one run saw
        // 2.98 s); on the monotonic clock it was stamped after a few milliseconds.
        // (Not the gaps between records: a loaded machine may handle several values at one instant.)
        let last = try #require(log.records.last).timestamp
        #expect(last >= 2.899, "the fourth record's time, s: \(last)")
        let snoopSize = (try? FileManager.default.attributesOfItem(atPath: snoop)[.size] as? Int) ?? 0
        #expect(snoopSize > 16, "btsnoop capture written")

        let replay = try ReplayCommand.parse([out, "--as-fast-as-possible"])
        let (replayLog, pace, decoder) = try replay.prepare()
        var replayed: [String] = []
        await replay.play(replayLog, pace: pace, decoder: decoder) { replayed.append($0) }
        #expect(replayed.count == 4)
        for (live, played) in zip(recorded, replayed) {
            // The decoded summary (before the hex) appears in the replayed line.
            let summary = String(live.components(separatedBy: "  [").first ?? live)
            #expect(played.contains(summary), "live \(live) vs replay \(played)")
        }
    }
}
