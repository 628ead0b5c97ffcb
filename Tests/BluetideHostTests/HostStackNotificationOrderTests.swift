import BluetideBase
import Testing
@testable import BluetideHost

/// Pins the ordered delivery of notifications: values reach the GATT client in the order they
/// arrived, and the stream ends when the link closes.
/// (Delivering each value from its own task let values overtake each other, and let the close
/// overtake values still in flight.)
@Suite(.timeLimit(.minutes(1))) struct HostStackNotificationOrderTests {
    @Test func manyNotificationsArriveInOrderThenTheStreamEnds() async throws {
        let pair = try await VirtualPair.start()
        defer { Task { await pair.close() } }
        let (link, _) = try await within(10, "connect") { try await pair.connect() }
        let services = try await link.gatt.discoverDatabase()
        let service = try #require(services.first { $0.service.uuid == TestService.service })
        let notify = try #require(service.characteristics.first { $0.characteristic.uuid == TestService.notify }).characteristic
        let values = try await link.gatt.subscribe(to: notify)
        let handle = try #require(await pair.peripheral.valueHandle(of: TestService.notify))
        let count = 1000
        for i in 0..<count { await pair.peripheral.updateValue([UInt8(i & 0xFF), UInt8(i >> 8)], at: handle) }
        var received: [Int] = []
        var iterator = values.makeAsyncIterator()
        while received.count < count, let value = await iterator.next(), value.count == 2 {
            received.append(Int(value[0]) | Int(value[1]) << 8)
        }
        #expect(received == Array(0..<count))
        // The close reaches the client after the values: the stream then ends.
        _ = try await link.disconnect()
        let next1 = await iterator.next()
        #expect(next1 == nil)
    }

    /// A subscriber that stops reading holds at most ``HostStack/subscriptionBuffer`` values:
    /// the newest are kept in order, the older ones dropped and counted on the connection.
    @Test func aReaderThatStopsKeepsTheNewestValuesAndCountsTheRest() async throws {
        let pair = try await VirtualPair.start()
        defer { Task { await pair.close() } }
        let (link, _) = try await within(10, "connect") { try await pair.connect() }
        let services = try await link.gatt.discoverDatabase()
        let service = try #require(services.first { $0.service.uuid == TestService.service })
        let characteristics = service.characteristics.map(\.characteristic)
        let notify = try #require(characteristics.first { $0.uuid == TestService.notify })
        let echo = try #require(characteristics.first { $0.uuid == TestService.echo })
        let values = try await link.gatt.subscribe(to: notify)
        let handle = try #require(await pair.peripheral.valueHandle(of: TestService.notify))
        let count = HostStack.subscriptionBuffer + 904
        for i in 0..<count { await pair.peripheral.updateValue([UInt8(i & 0xFF), UInt8(i >> 8)], at: handle) }
        // A read's response follows every notification sent before it on the bearer: once it
        // is back, the host has delivered (or dropped) all of them.
        _ = try await link.gatt.read(handle: echo.valueHandle)
        #expect(await link.droppedValues == 904)
        var received: [Int] = []
        var iterator = values.makeAsyncIterator()
        while received.count < HostStack.subscriptionBuffer, let value = await iterator.next(), value.count == 2 {
            received.append(Int(value[0]) | Int(value[1]) << 8)
        }
        #expect(received == Array(904..<count))
        _ = try await link.disconnect()
    }
}
