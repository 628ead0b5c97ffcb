import BluetideRecording
import Foundation
import Testing
@testable import BluetideCommands

/// `bluetide record` when the link is lost: without `--reconnect` it ends with one line saying
/// what happened, what was kept and what to try (status 1), instead of recording nothing for ever.
@Suite struct RecordLinkLossTests {
    @Test func aLostLinkEndsTheRecordingWithOneLineAndKeepsTheValues() async throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("record-lost-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let (lines, error) = try await LinkLossRig.run(address: 0xC0FFEF) { link, output, clock in
            let command = try RecordCommand.parse(["Bluetide HRM", "heart-rate", "--out", out, "--timeout", "10", "--transport", link])
            try await command.execute(output, clock: clock)
        }
        var failure: CommandFailure?
        if let error {
            if let error = error as? CommandFailure { failure = error } else { Issue.record("unexpected \(error)") }
        }
        let message = try #require(failure?.message, "record went on after the link was lost: \(lines)")
        #expect(failure?.status == .failure, "status 1: a runtime failure")
        #expect(message.hasPrefix("the link to Bluetide HRM"), "\(message)")
        #expect(message.contains("was lost after"))
        #expect(message.contains("they are saved in \(out)"))
        #expect(message.contains("--reconnect"))
        #expect(!message.contains("\n"), "one line")
        let saved = try ValueLogReader.read(path: out)
        #expect(saved.records.count >= 2, "the values before the loss are in the file")
    }

    @Test func withReconnectTheRecordingGoesOnAfterTheLinkComesBack() async throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("record-back-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let (lines, error) = try await LinkLossRig.run(address: 0xC0FFF0) { link, output, clock in
            let command = try RecordCommand.parse(["Bluetide HRM", "heart-rate", "--out", out, "--count", "4", "--reconnect", "--timeout", "10", "--transport", link])
            try await command.execute(output, clock: clock)
        }
        if let error { throw error }
        #expect(try ValueLogReader.read(path: out).records.count == 4, "\(lines)")
    }
}
