import BluetideTransport
import Foundation
import Synchronization
import Testing
import Bluetide

/// A backend added from outside the package (issue 23, the seam under the public API): a test
/// double registered as a ``BackendScheme`` and opened by spec; the public `Central` and
/// `Connection` run over it unchanged (discovery, reads, writes, notifications, link loss), and
/// what it cannot do is refused in one line.
@Suite(.timeLimit(.minutes(1)), .serialized) struct BackendSeamTests {
    static let heartRate = BluetoothUUID(0x180D)
    static let measurement = BluetoothUUID(0x2A37)
    static let location = BluetoothUUID(0x2A38)
    static let device = try! BluetoothAddress("C1:00:00:00:00:42/R")

    /// One link of the double: a heart-rate service whose location reads 0x01; values written
    /// are kept; notifications are pushed by the test.
    final class FakeLink: CentralLink {
        struct State {
            var written: [[UInt8]] = []
            var notify: AsyncStream<[UInt8]>.Continuation?
            var ended: DisconnectReason?
            var waiters: [CheckedContinuation<DisconnectReason, Never>] = []
        }
        let state = Mutex(State())

        func exchangeMTU(_ mtu: Int) async throws -> Int { 185 }
        func discoverDatabase() async throws -> [GATTRemoteService] {
            [GATTRemoteService(
                service: GATTServiceRange(uuid: BackendSeamTests.heartRate, startHandle: 0x0A, endHandle: 0x0F),
                characteristics: [
                    GATTRemoteCharacteristic(
                        characteristic: GATTCharacteristic(uuid: BackendSeamTests.measurement, declarationHandle: 0x0B, valueHandle: 0x0C, endHandle: 0x0D, properties: .notify),
                        descriptors: [GATTDescriptor(uuid: BluetoothUUID(0x2902), handle: 0x0D)]),
                    GATTRemoteCharacteristic(
                        characteristic: GATTCharacteristic(uuid: BackendSeamTests.location, declarationHandle: 0x0E, valueHandle: 0x0F, endHandle: 0x0F, properties: [.read, .write]),
                        descriptors: []),
                ])]
        }
        func read(_ characteristic: GATTCharacteristic) async throws -> [UInt8] {
            state.withLock { $0.written.last } ?? [0x01]
        }
        func read(_ descriptor: GATTDescriptor, of characteristic: GATTCharacteristic) async throws -> [UInt8] { [0x01, 0x00] }
        func write(_ value: [UInt8], to characteristic: GATTCharacteristic, withResponse: Bool) async throws {
            state.withLock { $0.written.append(value) }
        }
        func subscribe(to characteristic: GATTCharacteristic) async throws -> AsyncStream<[UInt8]> {
            let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self)
            state.withLock { $0.notify = continuation }
            return stream
        }
        func unsubscribe(from characteristic: GATTCharacteristic) async throws {}
        func mtu() async -> Int { 185 }
        func rssi() async throws -> Int { -40 }
        func disconnect() async throws -> DisconnectReason {
            end(.localHostTerminated)
            return .localHostTerminated
        }
        func waitForDisconnection() async -> DisconnectReason {
            await withCheckedContinuation { continuation in
                let ended = state.withLock { state -> DisconnectReason? in
                    if let ended = state.ended { return ended }
                    state.waiters.append(continuation)
                    return nil
                }
                if let ended { continuation.resume(returning: ended) }
            }
        }
        func isOpen() async -> Bool { state.withLock { $0.ended == nil } }
        func pair(force: Bool) async throws -> SecurityLevel { .encrypted }
        func securityLevel() async -> SecurityLevel { .none }
        func parameters() async -> ConnectionParameters? { nil }
        func requestParameters(intervalMin: UInt16, intervalMax: UInt16, latency: UInt16, supervisionTimeout: UInt16) async throws {}
        var pairsOnSecurityErrors: Bool { false }

        /// Pushes a notification.
        func push(_ value: [UInt8]) { _ = state.withLock { $0.notify }?.yield(value) }

        /// The link ends, as a peer leaving would end it.
        func end(_ reason: DisconnectReason) {
            let (waiters, notify) = state.withLock { state -> ([CheckedContinuation<DisconnectReason, Never>], AsyncStream<[UInt8]>.Continuation?) in
                guard state.ended == nil else { return ([], nil) }
                state.ended = reason
                defer { state.waiters = [] }
                return (state.waiters, state.notify)
            }
            notify?.finish()
            for waiter in waiters { waiter.resume(returning: reason) }
        }
    }

    final class FakeBackend: CentralBackend {
        let links = Mutex<[FakeLink]>([])
        let closed = Mutex(false)
        var address: BluetoothAddress? { get async { try? BluetoothAddress("C0:FF:EE:00:00:01/R") } }
        func scan(filter: ScanFilter) async throws -> AsyncStream<Advertisement> {
            let (stream, continuation) = AsyncStream.makeStream(of: Advertisement.self)
            continuation.yield(Advertisement(address: BackendSeamTests.device, name: "Other", rssi: -70))
            continuation.yield(Advertisement(address: BackendSeamTests.device, name: "Fake HRM", rssi: -50, serviceUUIDs: [BackendSeamTests.heartRate]))
            return stream
        }
        func connect(to address: BluetoothAddress, timeout: Duration) async throws -> any CentralLink {
            let link = FakeLink()
            links.withLock { $0.append(link) }
            return link
        }
        var peripheralUnavailable: String? { "the fake backend has no peripheral role: use virtual" }
        func waitUntilClosed() async -> String? { nil }
        func close() async { closed.withLock { $0 = true } }
    }

    struct FakeScheme: BackendScheme {
        let name = "fake-backend"
        let syntax = "fake-backend"
        let backend: FakeBackend
        func openCentral(argument: String?, configuration: Bluetooth.Configuration) async throws -> any CentralBackend { backend }
    }

    @Test func theCentralRunsOverARegisteredBackend() async throws {
        let backend = FakeBackend()
        try TransportRegistry.register(FakeScheme(backend: backend))
        defer { TransportRegistry.unregister("fake-backend") }
        let bluetooth = try await Bluetooth.open(transport: "fake-backend")
        #expect(bluetooth.address == (try BluetoothAddress("C0:FF:EE:00:00:01/R")))

        // The central's filter applies to the backend's advertisements.
        var found: Advertisement?
        for await advertisement in try await bluetooth.central.scan(filter: ScanFilter(serviceUUIDs: [Self.heartRate])) {
            found = advertisement
            break
        }
        #expect(found?.name == "Fake HRM")

        let connection = try await bluetooth.central.connect(to: try #require(found), policy: ConnectionPolicy(preferredMTU: 185))
        #expect(try await connection.services().map(\.service.uuid) == [Self.heartRate])
        #expect(await connection.mtu == 185)
        #expect(try await connection.read(Self.location) == [0x01])
        try await connection.write([UInt8]([0x02]), to: Self.location)
        #expect(try await connection.read(Self.location) == [0x02])
        #expect(try await connection.readDescriptor(BluetoothUUID(0x2902), of: Self.measurement) == [0x01, 0x00])
        await #expect(throws: BluetideError.self) { try await connection.read(BluetoothUUID(0x2A19)) }

        let values = try await connection.notifications(of: Self.measurement)
        let link = try #require(backend.links.withLock { $0.first })
        link.push([0x06, 0x48])
        link.push([0x06, 0x49])
        var iterator = values.makeAsyncIterator()
        #expect(try await iterator.next() == [0x06, 0x48])
        #expect(try await iterator.next() == [0x06, 0x49])

        // The peer leaves: the sequence ends with the reason, the connection closes.
        var events = connection.events.makeAsyncIterator()
        #expect(await events.next() == .connected)
        link.end(.remoteUserTerminated)
        await #expect(throws: BluetideError.self) { _ = try await iterator.next() }
        #expect(await events.next() == .disconnected(reason: .remoteUserTerminated))
        #expect(await connection.isConnected == false)

        // What the backend cannot do is refused in one line.
        await #expect(throws: BluetideError.self) { try await bluetooth.peripheral.startAdvertising(name: "X") }
        do {
            try await bluetooth.peripheral.startAdvertising(name: "X")
        } catch {
            #expect("\(error)" == "the fake backend has no peripheral role: use virtual")
        }
        await bluetooth.close()
        #expect(backend.closed.withLock { $0 })
    }

    @Test func aBackendHasNoCaptureAndNoHCITransport() async throws {
        try TransportRegistry.register(FakeScheme(backend: FakeBackend()))
        defer { TransportRegistry.unregister("fake-backend") }
        do {
            _ = try await Bluetooth.open(transport: "fake-backend+snoop:/tmp/never.btsnoop")
            Issue.record("a capture of a backend was accepted")
        } catch {
            #expect("\(error)".contains("btmon"), "\(error)")
        }
        await #expect(throws: (any Error).self) { _ = try await Transport.open("fake-backend") }
    }
}
