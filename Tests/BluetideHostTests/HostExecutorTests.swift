import BluetideBase
import BluetideTransport
import BluetideVirtual
import Foundation
import Synchronization
import Testing
@testable import BluetideHost

/// One executor per host: the stack runs on its transport's executor, so a packet is read,
/// handled by the core and answered on one thread, with no hand-over between them.
/// (Before, the transport's thread woke a reader task on the cooperative pool, which hopped to
/// the stack actor; a TCP write then hopped back to the event loop.)
@Suite(.timeLimit(.minutes(1))) struct HostExecutorTests {
    static let service = BluetoothUUID(0xFFD0)
    static let sink = BluetoothUUID(0xFFD1)

    /// Records, for each write the peripheral's core handles, whether it ran on `executor`'s thread.
    final class Witness: Sendable {
        let onExecutor = Mutex<[Bool]>([])
    }

    static func peripheralServices(_ witness: Witness, executor: @escaping @Sendable () -> (any SerialExecutor)?) -> [GATTServiceDefinition] {
        [GATTServiceDefinition(uuid: service, characteristics: [
            GATTCharacteristicDefinition(
                uuid: sink, properties: [.write, .writeWithoutResponse],
                validateWrite: { _ in
                    let here = executor().map(HostExecutors.isCurrent) ?? false
                    witness.onExecutor.withLock { $0.append(here) }
                    return nil
                }),
        ])]
    }

    @Test func bothHostsOfAVirtualLinkShareItsExecutorAndHandleWritesOnIt() async throws {
        let linkName = "executor-\(UUID().uuidString)"
        let witness = Witness()
        let centralTransport = await VirtualTransport.attach(toLinkNamed: linkName)
        let peripheralTransport = await VirtualTransport.attach(toLinkNamed: linkName)
        let shared = try #require(peripheralTransport.executor)
        #expect(centralTransport.executor.map { $0 as AnyObject } === shared as AnyObject)
        let address = BluetoothAddress.randomStatic(0x0000_E5EC_0001)
        let peripheral = HostStack(
            transport: peripheralTransport,
            configuration: .init(randomAddress: address, services: Self.peripheralServices(witness) { shared }))
        let central = HostStack(transport: centralTransport, configuration: .init(randomAddress: .randomStatic(0x0000_E5EC_0002)))
        #expect(peripheral.executor as AnyObject === shared as AnyObject)
        #expect(central.executor as AnyObject === shared as AnyObject)
        try await exchangeWrites(central: central, peripheral: peripheral, address: address)
        let seen = witness.onExecutor.withLock { $0 }
        #expect(seen.count == 20)
        #expect(seen.allSatisfy { $0 })
    }

    @Test func aHostOverTCPRunsOnItsConnectionsEventLoop() async throws {
        let server = try await VirtualControllerServer.start([.init(host: "127.0.0.1", port: 0), .init(host: "127.0.0.1", port: 0)])
        defer { Task { await server.close() } }
        let witness = Witness()
        let peripheralTransport = try await Transport.open("tcp-client:127.0.0.1:\(server.endpoints[0].port)")
        let centralTransport = try await Transport.open("tcp-client:127.0.0.1:\(server.endpoints[1].port)")
        let loop = try #require(peripheralTransport.executor)
        let address = BluetoothAddress.randomStatic(0x0000_E5EC_0003)
        let peripheral = HostStack(
            transport: peripheralTransport,
            configuration: .init(randomAddress: address, services: Self.peripheralServices(witness) { loop }))
        let central = HostStack(transport: centralTransport, configuration: .init(randomAddress: .randomStatic(0x0000_E5EC_0004)))
        #expect(peripheral.executor as AnyObject === loop as AnyObject)
        try await exchangeWrites(central: central, peripheral: peripheral, address: address)
        let seen = witness.onExecutor.withLock { $0 }
        #expect(seen.count == 20)
        #expect(seen.allSatisfy { $0 })
    }

    /// Starts both, connects, and writes 20 values (10 Write Commands, 10 Write Requests),
    /// then reads back so every write has been handled.
    private func exchangeWrites(central: HostStack, peripheral: HostStack, address: BluetoothAddress) async throws {
        defer {
            Task {
                await central.close()
                await peripheral.close()
            }
        }
        try await within(20, "start, connect and write") {
            try await peripheral.start()
            try await central.start()
            try await peripheral.startAdvertising(AdvertisingData([.completeLocalName("Executor")]), intervalMilliseconds: 20)
            let link = try await central.connect(to: address, timeout: 5)
            let characteristics = try await link.gatt.discoverDatabase().flatMap(\.characteristics).map(\.characteristic)
            let sink = try #require(characteristics.first { $0.uuid == Self.sink })
            for i in 0..<10 {
                try await link.gatt.writeWithoutResponse(handle: sink.valueHandle, value: [UInt8(i)])
                try await link.gatt.write(handle: sink.valueHandle, value: [UInt8(i)])
            }
            _ = try await link.disconnect()
        }
    }
}
