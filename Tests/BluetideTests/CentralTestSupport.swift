import BluetideHCI
import BluetideTransport
import BluetideVirtual
import Foundation
import Synchronization
import Testing
@testable import Bluetide
import BluetideHost
import BluetideTestSupport

/// Runs `body`, failing with a clear message when it takes longer than `seconds`.
func within<T: Sendable>(
    _ seconds: Double, _ what: String, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withRunTimeLimit(seconds, onTimeout: { BluetideError.timedOut(operation: "test step \(what)", seconds: seconds) }, body)
}

/// A fresh link name per test, so tests never see each other's devices.
func uniqueLinkName() -> String { "test-\(UUID().uuidString)" }

/// UUIDs of the test service the peripherals serve.
enum TestGATT {
    static let service = try! BluetoothUUID("B1DE1001-0000-4000-8000-00000000B1DE")
    static let otherService = try! BluetoothUUID("B1DE2001-0000-4000-8000-00000000B1DE")
    static let counter = try! BluetoothUUID("B1DE1002-0000-4000-8000-00000000B1DE")
    static let echo = try! BluetoothUUID("B1DE1003-0000-4000-8000-00000000B1DE")
    static let notify = try! BluetoothUUID("B1DE1004-0000-4000-8000-00000000B1DE")
    static let guarded = try! BluetoothUUID("B1DE1005-0000-4000-8000-00000000B1DE")
    static let sink = try! BluetoothUUID("B1DE1006-0000-4000-8000-00000000B1DE")
    static let readOnly = try! BluetoothUUID("B1DE1007-0000-4000-8000-00000000B1DE")

    /// Everything written to ``sink``, in arrival order (written from the server's validator,
    /// which runs for every write as it is handled).
    final class SinkLog: Sendable {
        private struct State {
            var bytes: [UInt8] = []
            /// Waiters for a byte count, resumed by the append that reaches it (or on cancellation).
            var waiters: [Int: (count: Int, continuation: CheckedContinuation<Void, Never>)] = [:]
            var nextWaiter = 0
        }

        private let state = Mutex(State())
        var all: [UInt8] { state.withLock { $0.bytes } }
        var count: Int { state.withLock { $0.bytes.count } }

        func append(_ value: [UInt8]) {
            let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.bytes += value
                let reached = state.waiters.filter { $0.value.count <= state.bytes.count }
                for id in reached.keys { state.waiters[id] = nil }
                return reached.values.map(\.continuation)
            }
            for continuation in ready { continuation.resume() }
        }

        /// Returns once at least `count` bytes were written (an event wait: no polling). Returns
        /// early when the task is cancelled (by a time limit around it).
        func waitForCount(_ count: Int) async {
            let id = state.withLock { state -> Int in
                state.nextWaiter += 1
                return state.nextWaiter
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let now = state.withLock { state -> Bool in
                        if state.bytes.count >= count || Task.isCancelled { return true }
                        state.waiters[id] = (count, continuation)
                        return false
                    }
                    if now { continuation.resume() }
                }
            } onCancel: {
                let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
                waiter?.continuation.resume()
            }
        }
    }

    static func definition(log: SinkLog = SinkLog()) -> GATTServiceDefinition {
        GATTServiceDefinition(uuid: service, characteristics: [
            GATTCharacteristicDefinition(uuid: counter, properties: [.read, .write], value: [0x34, 0x12]),
            GATTCharacteristicDefinition(uuid: echo, properties: [.read, .write, .writeWithoutResponse], value: []),
            GATTCharacteristicDefinition(uuid: notify, properties: [.read, .notify], value: [0]),
            GATTCharacteristicDefinition(
                uuid: guarded, properties: [.read, .write], value: [1],
                validateWrite: { context in context.value.first == 0xFF ? ATTErrorCode(0x80) : nil }),
            GATTCharacteristicDefinition(
                uuid: sink, properties: [.writeWithoutResponse], value: [],
                validateWrite: { context in
                    log.append(context.value)
                    return nil
                }),
            GATTCharacteristicDefinition(uuid: readOnly, properties: [.read], value: [7]),
        ])
    }
}

/// A peripheral host on a virtual link, serving ``TestGATT`` (through HostStack directly: the
/// Peripheral API is written elsewhere). It advertises again whenever a link ends, and right
/// after a connection so other centrals can connect too.
struct TestPeripheral {
    let stack: HostStack
    let transport: VirtualTransport
    let address: BluetoothAddress
    let sink: TestGATT.SinkLog
    let advertising: AdvertisingData
    let scanResponse: AdvertisingData?
    let watcher: Task<Void, Never>

    var controller: VirtualController { transport.controller }

    static func start(
        link: String, seed: UInt64, advertising: AdvertisingData? = nil, scanResponse: AdvertisingData? = nil,
        advertise: Bool = true, readvertise: Bool = true, clock: ManualClock? = nil
    ) async throws -> TestPeripheral {
        if let clock { _ = await VirtualLink.named(link, clock: clock) }
        let transport = await VirtualTransport.attach(toLinkNamed: link)
        let address = BluetoothAddress.randomStatic(seed)
        let sink = TestGATT.SinkLog()
        let configuration = HostStack.Configuration(
            randomAddress: address, deviceName: "Bluetide Test", services: [TestGATT.definition(log: sink)], commandTimeout: 30)
        let stack = clock.map { HostStack(transport: transport, configuration: configuration, clock: $0) }
            ?? HostStack(transport: transport, configuration: configuration)
        try await stack.start()
        let data = advertising ?? AdvertisingData([
            .flags([.leGeneralDiscoverable, .brEdrNotSupported]), .completeLocalName("Bluetide Test"),
        ])
        let watcher = Task {
            guard readvertise else { return }
            for await connection in stack.incomingConnections {
                try? await stack.startAdvertising(data, scanResponse: scanResponse, intervalMilliseconds: 20)
                Task {
                    _ = await connection.waitForDisconnection()
                    try? await stack.startAdvertising(data, scanResponse: scanResponse, intervalMilliseconds: 20)
                }
            }
        }
        let peripheral = TestPeripheral(
            stack: stack, transport: transport, address: address, sink: sink, advertising: data,
            scanResponse: scanResponse, watcher: watcher)
        if advertise { try await peripheral.advertise() }
        return peripheral
    }

    func advertise() async throws {
        try await stack.startAdvertising(advertising, scanResponse: scanResponse, intervalMilliseconds: 20)
    }

    /// Notifies `value` on the notify characteristic; returns how many clients got it.
    @discardableResult
    func notify(_ value: [UInt8]) async throws -> Int {
        let handle = try #require(await stack.valueHandle(of: TestGATT.notify))
        return await stack.updateValue(value, at: handle)
    }

    func close() async {
        watcher.cancel()
        await stack.close()
    }
}

/// A central (the public API over its own host stack) on a virtual link, with its controller
/// reachable for RSSI settings and faults.
struct TestCentral {
    let central: Central
    let stack: HostStack
    let transport: VirtualTransport

    /// With `clock`, the link (when this creates it), the host and the central all run on it
    /// (drive it with ``ManualClock/advancing(step:yields:_:)``).
    static func start(
        link: String, seed: UInt64 = 0x0BAD_CAFE_0001, maximumConnections: Int = 8, clock: ManualClock? = nil,
        randomness: HostRandomness = .system
    ) async throws -> TestCentral {
        if let clock { _ = await VirtualLink.named(link, clock: clock) }
        let transport = await VirtualTransport.attach(toLinkNamed: link)
        let configuration = HostStack.Configuration(randomAddress: .randomStatic(seed), commandTimeout: 30)
        let stack = clock.map { HostStack(transport: transport, configuration: configuration, clock: $0) }
            ?? HostStack(transport: transport, configuration: configuration)
        try await stack.start()
        return TestCentral(
            central: Central(
                stack: stack, maximumConnections: maximumConnections, defaultConnectTimeout: .seconds(20),
                clock: clock.map { BluetideClock($0) } ?? .continuous, randomness: randomness),
            stack: stack, transport: transport)
    }

    func close() async {
        await central.disconnectAll()
        await stack.close()
    }
}

/// A policy for fast tests: quick reconnects. The limits are only guards against hangs, wide
/// enough for a machine loaded by parallel builds.
let fastReconnect = ConnectionPolicy(
    retry: .never,
    reconnect: ConnectionPolicy.Reconnect(
        maximumAttempts: 20, delay: .milliseconds(20), backoffMultiplier: 1.5, maximumDelay: .milliseconds(200),
        jitter: 0.2, attemptTimeout: .seconds(2)),
    operationTimeout: .seconds(20), setupTimeout: .seconds(20))

extension ConnectionPolicy {
    /// The default policy with wide limits (hang guards only) for tests on a loaded machine.
    static let test = ConnectionPolicy(operationTimeout: .seconds(20), setupTimeout: .seconds(20))
}

extension Bluetooth.Configuration {
    /// Defaults with a wide HCI command limit: a guard against hangs on a loaded machine.
    static let testing = Bluetooth.Configuration(commandTimeout: .seconds(30))
}
