import BluetideBase
import BluetideHCI
import BluetideTransport
import BluetideVirtual
import Foundation
import Testing
@testable import BluetideHost
import BluetideTestSupport

/// Runs `body`, failing with a clear message when it takes longer than `seconds`.
func within<T: Sendable>(
    _ seconds: Double, _ what: String, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withRunTimeLimit(seconds, onTimeout: { HostError.timedOut(what, seconds: seconds) }, body)
}

/// UUIDs of the test service both hosts use.
enum TestService {
    static let service = try! BluetoothUUID("B1DE0001-0000-4000-8000-00000000B1DE")
    static let longValue = try! BluetoothUUID("B1DE0002-0000-4000-8000-00000000B1DE")
    static let echo = try! BluetoothUUID("B1DE0003-0000-4000-8000-00000000B1DE")
    static let notify = try! BluetoothUUID("B1DE0004-0000-4000-8000-00000000B1DE")
    static let indicate = try! BluetoothUUID("B1DE0005-0000-4000-8000-00000000B1DE")
    static let secret = try! BluetoothUUID("B1DE0006-0000-4000-8000-00000000B1DE")
    static let guarded = try! BluetoothUUID("B1DE0007-0000-4000-8000-00000000B1DE")

    /// 300 bytes, i % 256: needs Read Blob at any MTU below 301.
    static let longBytes = (0..<300).map { UInt8($0 % 256) }

    static var definition: GATTServiceDefinition {
        GATTServiceDefinition(uuid: service, characteristics: [
            GATTCharacteristicDefinition(uuid: longValue, properties: .read, value: longBytes),
            GATTCharacteristicDefinition(uuid: echo, properties: [.read, .write, .writeWithoutResponse], value: []),
            GATTCharacteristicDefinition(uuid: notify, properties: [.read, .notify], value: [0]),
            GATTCharacteristicDefinition(uuid: indicate, properties: [.read, .indicate], value: [0]),
            GATTCharacteristicDefinition(uuid: secret, properties: .write, value: []),
            GATTCharacteristicDefinition(
                uuid: guarded, properties: [.read, .write], value: [1],
                validateWrite: { context in context.value.first == 0xFF ? ATTErrorCode(rawValue: 0x80) : nil }),
        ])
    }
}

/// Two Bluetide hosts on a fresh virtual link: a peripheral serving ``TestService`` and a central.
struct VirtualPair {
    let linkName: String
    let central: HostStack
    let peripheral: HostStack
    let centralTransport: VirtualTransport
    let peripheralTransport: VirtualTransport
    let peripheralAddress: BluetoothAddress

    /// With `clock`, the link and both stacks run on it (drive it with
    /// ``ManualClock/advancing(step:yields:_:)``).
    static func start(localMTU: Int = 517, clock: ManualClock? = nil) async throws -> VirtualPair {
        let linkName = "test-\(UUID().uuidString)"
        if let clock { _ = await VirtualLink.named(linkName, clock: clock) }
        let centralTransport = await VirtualTransport.attach(toLinkNamed: linkName)
        let peripheralTransport = await VirtualTransport.attach(toLinkNamed: linkName)
        let peripheralAddress = BluetoothAddress.randomStatic(0x1234_5678_9ABC)
        func stack(_ transport: VirtualTransport, _ configuration: HostStack.Configuration) -> HostStack {
            clock.map { HostStack(transport: transport, configuration: configuration, clock: $0) }
                ?? HostStack(transport: transport, configuration: configuration)
        }
        let peripheral = stack(
            peripheralTransport,
            .init(randomAddress: peripheralAddress, deviceName: "Bluetide Test", services: [TestService.definition], localMTU: localMTU))
        let central = stack(centralTransport, .init(randomAddress: .randomStatic(0x0BAD_CAFE_0001), localMTU: localMTU))
        try await peripheral.start()
        try await central.start()
        try await peripheral.startAdvertising(
            AdvertisingData([.flags([.leGeneralDiscoverable, .brEdrNotSupported]), .completeLocalName("Bluetide Test")]),
            intervalMilliseconds: 20)
        return VirtualPair(
            linkName: linkName, central: central, peripheral: peripheral, centralTransport: centralTransport,
            peripheralTransport: peripheralTransport, peripheralAddress: peripheralAddress)
    }

    /// Connects central → peripheral and returns both ends.
    func connect() async throws -> (central: HostConnection, peripheral: HostConnection) {
        let central = try await self.central.connect(to: peripheralAddress, timeout: 5)
        var incoming = peripheral.incomingConnections.makeAsyncIterator()
        let peripheralSide = try #require(await incoming.next())
        return (central, peripheralSide)
    }

    func close() async {
        await central.close()
        await peripheral.close()
    }
}
