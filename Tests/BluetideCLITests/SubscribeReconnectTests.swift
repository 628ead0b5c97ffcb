import Testing
@testable import BluetideCommands

@Suite struct SubscribeReconnectTests {
    @Test func subscribeReconnectKeepsPrintingAcrossLinkLoss() async throws {
        let (lines, error) = try await LinkLossRig.run(address: 0xC0FFEE) { link, output, clock in
            let command = try SubscribeCommand.parse(["Bluetide HRM", "heart-rate", "--count", "4", "--reconnect", "--timeout", "10", "--transport", link])
            try await command.execute(output, clock: clock)
        }
        if let error { throw error }
        #expect(lines.filter { $0.contains("bpm") }.count == 4, "\(lines)")
        let reconnecting = try #require(lines.firstIndex { $0.hasPrefix("reconnecting to Bluetide HRM") }, "\(lines)")
        let reconnected = try #require(lines.firstIndex { $0.hasPrefix("reconnected to Bluetide HRM") }, "\(lines)")
        #expect(reconnecting < reconnected)
        #expect(lines[(reconnected + 1)...].contains { $0.contains("bpm") }, "values after reconnecting: \(lines)")
    }
}
