import Bluetide
import BluetideHost
import BluetideTransport
import Testing

/// Pins HostStack fixes found while building the peripheral role.
@Suite(.timeLimit(.minutes(1))) struct PeripheralHostStackTests {
    /// Advertising without a scan response after advertising with one must not keep answering
    /// scans with the old scan response (controllers keep it until it is replaced).
    @Test func advertisingWithoutAScanResponseClearsThePreviousOne() async throws {
        let world = try await PeripheralTestWorld.start()
        let central = try await world.central(9)
        defer { Task { await world.close(central) } }
        try await world.stack.startAdvertising(
            AdvertisingData([.flags([.leGeneralDiscoverable])]), scanResponse: AdvertisingData([.completeLocalName("Old")]),
            intervalMilliseconds: 20)
        try await world.stack.startAdvertising(
            AdvertisingData([.flags([.leGeneralDiscoverable]), .completeLocalName("New")]), intervalMilliseconds: 20)

        let address = world.address
        let response: AdvertisementReport? = try await PeripheralTestKit.within(20, "scan response") {
            for await report in try await central.scan(active: true) where report.address == address && report.isScanResponse {
                return report
            }
            return nil
        }
        let report = try #require(response)
        #expect(report.data.localName == nil)
        #expect(report.rawData.isEmpty)
    }
}
