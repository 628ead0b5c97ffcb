import BluetideCore
import BluetideEmulation
import BluetideEmulators
import BluetideTransport
import Foundation
import Testing
@testable import BluetideCommands

@Suite struct SubscribeReconnectTests {
    @Test func subscribeReconnectKeepsPrintingAcrossLinkLoss() async throws {
        let link = privateLink()
        let name = String(link.dropFirst("virtual:".count))
        // The emulated device is started here (not with --emulate) so the test can cut its link.
        let transport = await VirtualTransport.attach(toLinkNamed: name)
        let model = try #require(EmulatorCatalog.make(name: "heart-rate"))
        let device = try await EmulatedPeripheral.launch(
            transport: transport, models: [model], address: .randomStatic(0xC0FFEE))
        let collector = LineCollector()
        let command = try SubscribeCommand.parse(["Bluetide HRM", "heart-rate", "--count", "4", "--reconnect", "--transport", link])
        let running = Task { try await withGuard { try await command.execute(collector.output) } }
        // Cut the link once two values have arrived (progress-based, no fixed wait).
        let cut = Task {
            while collector.lines.filter({ $0.contains("bpm") }).count < 2 {
                try await Task.sleep(for: .milliseconds(20))
            }
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
        let lines = collector.lines
        #expect(lines.filter { $0.contains("bpm") }.count == 4, "\(lines)")
        let reconnecting = try #require(lines.firstIndex { $0.hasPrefix("reconnecting to Bluetide HRM") }, "\(lines)")
        let reconnected = try #require(lines.firstIndex { $0.hasPrefix("reconnected to Bluetide HRM") }, "\(lines)")
        #expect(reconnecting < reconnected)
        #expect(lines[(reconnected + 1)...].contains { $0.contains("bpm") }, "values after reconnecting: \(lines)")
    }
}
