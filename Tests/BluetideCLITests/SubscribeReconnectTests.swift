import Testing
@testable import BluetideCommands

@Suite struct SubscribeReconnectTests {
    @Test func subscribeReconnectKeepsPrintingAcrossLinkLoss() async throws {
        let rig = try await LinkLossRig.start(address: 0xC0FFEE)
        let command = try SubscribeCommand.parse(["Bluetide HRM", "heart-rate", "--count", "4", "--reconnect", "--timeout", "60", "--transport", rig.link])
        let (lines, error) = await rig.run { try await command.execute($0) }
        if let error { throw error }
        #expect(lines.filter { $0.contains("bpm") }.count == 4, "\(lines)")
        let reconnecting = try #require(lines.firstIndex { $0.hasPrefix("reconnecting to Bluetide HRM") }, "\(lines)")
        let reconnected = try #require(lines.firstIndex { $0.hasPrefix("reconnected to Bluetide HRM") }, "\(lines)")
        #expect(reconnecting < reconnected)
        #expect(lines[(reconnected + 1)...].contains { $0.contains("bpm") }, "values after reconnecting: \(lines)")
    }
}
