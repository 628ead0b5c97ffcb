import BluetideTransport
import Foundation
import Synchronization
import Testing
import Bluetide

/// A third peripheral backend added from outside the package (issue 23, the seam under the
/// public peripheral): a test double whose central backend also provides the peripheral role,
/// registered by spec. The public `Peripheral` and the `@Characteristic` DSL run over it
/// unchanged: services handed over, the DSL's rules applied through the characteristics the
/// backend gets, writes and subscriptions reported, assignments sent in order, advertising.
@Suite(.timeLimit(.minutes(1))) struct PeripheralBackendSeamTests {
    final class CounterService: GATTService {
        static let uuid = try! BluetoothUUID("B1DE0500-0000-4000-8000-00000000B1DE")
        @Characteristic(try! BluetoothUUID("B1DE0501-0000-4000-8000-00000000B1DE"), [.read, .notify])
        var count: UInt8 = 1
        @Characteristic(try! BluetoothUUID("B1DE0502-0000-4000-8000-00000000B1DE"), [.read, .write], validate: { $0 > 100 ? ATTErrorCode(0x81) : nil })
        var limit: UInt16 = 10
    }

    /// A central the fake stack reports.
    struct FakeCentral: PeripheralCentralLink {
        let address: BluetoothAddress
        let handle: UInt16
        var identity: AnyHashable { AnyHashable(handle) }
        func mtu() async -> Int { 64 }
        func disconnect(timeout: Double) async throws {}
        func waitForDisconnection() async -> DisconnectReason { await withCheckedContinuation { _ in } }
        func securityLevel() async -> SecurityLevel { .none }
        func requestSecurity() async throws -> SecurityLevel { .none }
        func authorize() async {}
        func waitForRoom() async throws {}
        func isConnected() async -> Bool { true }
    }

    final class FakePeripheral: PeripheralBackend {
        let served = Mutex<[PeripheralBackendService]>([])
        let (sent, sending) = AsyncStream.makeStream(of: (ServedValue, [UInt8]).self)
        /// The advertising data's and scan response's elements.
        let advertised = Mutex<[AdvertisingDataElement]>([])
        let events: AsyncStream<PeripheralBackendEvent>
        let sink: AsyncStream<PeripheralBackendEvent>.Continuation
        init() { (events, sink) = AsyncStream.makeStream() }
        func setServices(_ services: [PeripheralBackendService]) async throws { served.withLock { $0 = services } }
        func startAdvertising(_ advertising: AdvertisingData, scanResponse: AdvertisingData?, intervalMilliseconds: Double) async throws {
            advertised.withLock { $0 = advertising.elements + (scanResponse?.elements ?? []) }
        }
        func stopAdvertising() async throws { advertised.withLock { $0 = [] } }
        var advertisingStopsOnConnection: Bool { false }
        func updateValue(_ bytes: [UInt8], of value: ServedValue) async { sending.yield((value, bytes)) }
        func notifyEveryCentral(_ bytes: [UInt8], of value: ServedValue) async { await updateValue(bytes, of: value) }
        func central(on connection: UInt16) async -> ConnectedCentral? {
            ConnectedCentral(FakeCentral(address: try! BluetoothAddress("C1:00:00:00:00:07/R"), handle: connection))
        }
        func close() async { sink.finish() }
    }

    final class FakeStack: PeripheralBackendProvider {
        let peripheral = FakePeripheral()
        var address: BluetoothAddress? { get async { try? BluetoothAddress("C0:FF:EE:00:00:02/R") } }
        func scan(filter: ScanFilter) async throws -> AsyncStream<Advertisement> { AsyncStream { $0.finish() } }
        func connect(to address: BluetoothAddress, timeout: Duration) async throws -> any CentralLink {
            throw BluetideError.host("the fake stack does not connect")
        }
        var peripheralUnavailable: String? { nil }
        func waitUntilClosed() async -> String? { nil }
        func close() async {}
        func makePeripheral() async throws -> any PeripheralBackend { peripheral }
    }

    struct FakeScheme: BackendScheme {
        let name = "fake-peripheral-backend"
        let syntax = "fake-peripheral-backend"
        let stack: FakeStack
        func openCentral(argument: String?, configuration: Bluetooth.Configuration) async throws -> any CentralBackend { stack }
    }

    @Test func theDSLRunsOverARegisteredPeripheralBackend() async throws {
        let stack = FakeStack()
        try TransportRegistry.register(FakeScheme(stack: stack))
        defer { TransportRegistry.unregister("fake-peripheral-backend") }
        let bluetooth = try await Bluetooth.open(transport: "fake-peripheral-backend")
        let service = CounterService()
        let writes = service.$limit.writes
        let subscriptions = service.$count.subscriptions
        try await bluetooth.peripheral.add(service)
        try await bluetooth.peripheral.startAdvertising(name: "Fake Counter", serviceUUIDs: [CounterService.uuid])
        #expect(stack.peripheral.advertised.withLock { $0 }.contains(.completeLocalName("Fake Counter")))

        // The backend got the service with the DSL's rules behind each characteristic.
        let served = try #require(stack.peripheral.served.withLock { $0 }.first)
        #expect(served.uuid == CounterService.uuid && served.characteristics.count == 2)
        let count = served.characteristics[0], limit = served.characteristics[1]
        #expect(count.properties == [.read, .notify])
        #expect(try count.read(connection: 7).get() == [1])
        #expect(limit.write([1], connection: 7) == .invalidAttributeValueLength)
        #expect(limit.write([0x65, 0x00], connection: 7) == ATTErrorCode(0x81))
        #expect(limit.write([0x20, 0x00], connection: 7) == nil)
        #expect(service.limit == 0x20)
        #expect(try limit.read(offset: 1, connection: 7).get() == [0x00])

        // What the stack reports reaches the DSL's streams.
        stack.peripheral.sink.yield(.written(limit.value, bytes: [0x20, 0x00], connection: 7))
        let written = try #require(await writes.first { _ in true })
        #expect(written.value == 0x20 && written.central?.handle == 7)
        stack.peripheral.sink.yield(.subscriptionChanged(count.value, configuration: .notification, connection: 7))
        let subscribed = try #require(await subscriptions.first { _ in true })
        let subscriber = try BluetoothAddress("C1:00:00:00:00:07/R")
        #expect(subscribed.notifications && subscribed.central?.address == subscriber)

        // Assignments go to the backend in order, for the value it was given.
        for value in UInt8(2)...6 { service.count = value }
        var sent: [(ServedValue, [UInt8])] = []
        for await update in stack.peripheral.sent {
            sent.append(update)
            if sent.count == 5 { break }
        }
        #expect(sent.map(\.1) == [[2], [3], [4], [5], [6]])
        #expect(sent.allSatisfy { $0.0 == count.value })
        await bluetooth.close()
    }
}
