import BluetideCore
import BluetideEmulation
import BluetideEmulators
import BluetideRecording
import BluetideTransport
import Foundation
import Testing
@testable import BluetideCommands

/// `bluetide record` when the link is lost: without `--reconnect` it ends with one line saying
/// what happened, what was kept and what to try (status 1), instead of recording nothing for ever.
@Suite struct RecordLinkLossTests {
    @Test func aLostLinkEndsTheRecordingWithOneLineAndKeepsTheValues() async throws {
        let link = privateLink()
        let name = String(link.dropFirst("virtual:".count))
        let transport = await VirtualTransport.attach(toLinkNamed: name)
        let model = try #require(EmulatorCatalog.make(name: "heart-rate"))
        let device = try await EmulatedPeripheral.launch(transport: transport, models: [model], address: .randomStatic(0xC0FFEF))
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("record-lost-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let collector = LineCollector()
        let command = try RecordCommand.parse(["Bluetide HRM", "heart-rate", "--out", out, "--transport", link])
        let running = Task { try await withGuard { try await command.execute(collector.output) } }
        // Cut the link once two values were recorded (progress-based, no fixed wait).
        let cut = Task {
            while collector.lines.filter({ $0.contains("bpm") }).count < 2 { try await Task.sleep(for: .milliseconds(20)) }
            await transport.controller.link.linkLoss(transport.controller)
        }
        defer { cut.cancel() }
        var failure: CommandFailure?
        do { try await running.value } catch let error as CommandFailure { failure = error } catch {
            Issue.record("unexpected \(error)")
        }
        await device.stop()
        await device.close()
        let message = try #require(failure?.message, "record went on after the link was lost: \(collector.lines)")
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
        let link = privateLink()
        let name = String(link.dropFirst("virtual:".count))
        let transport = await VirtualTransport.attach(toLinkNamed: name)
        let model = try #require(EmulatorCatalog.make(name: "heart-rate"))
        let device = try await EmulatedPeripheral.launch(transport: transport, models: [model], address: .randomStatic(0xC0FFF0))
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("record-back-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let collector = LineCollector()
        let command = try RecordCommand.parse(["Bluetide HRM", "heart-rate", "--out", out, "--count", "4", "--reconnect", "--transport", link])
        let running = Task { try await withGuard { try await command.execute(collector.output) } }
        let cut = Task {
            while collector.lines.filter({ $0.contains("bpm") }).count < 2 { try await Task.sleep(for: .milliseconds(20)) }
            await transport.controller.link.linkLoss(transport.controller)
        }
        defer { cut.cancel() }
        do { try await running.value } catch {
            await device.stop()
            await device.close()
            throw error
        }
        await device.stop()
        await device.close()
        #expect(try ValueLogReader.read(path: out).records.count == 4, "\(collector.lines)")
    }
}
