import Bluetide
import BluetideHost
import BluetideProfiles
import BluetideTransport
import Foundation
import Testing
import BluetideTestSupport

/// A Punch-like service written with the property wrappers (the reflex trainer's).
final class PeripheralTestPunchService: GATTService {
    static let uuid = PunchUUID.service

    /// Notified once per step.
    @Characteristic(PunchUUID.response, [.read, .notify], description: "Punch response")
    var response = PunchResponse(reactionTimeMilliseconds: 0, target: 0, hit: false, step: 0)

    /// Milliseconds per step; bytes that are no valid PunchTimeSequence are refused by decoding.
    @Characteristic(PunchUUID.timeSequence, [.read, .write])
    var times = try! PunchTimeSequence(milliseconds: [1000])

    /// Target per step as raw bytes; the validation hook refuses an invalid sequence with 0x80.
    @Characteristic(PunchUUID.sequence, [.read, .write], validate: { targets in
        (try? PunchSequence(targets: targets)) == nil ? ATTErrorCode(PunchUUID.invalidSequenceATTError) : nil
    })
    var targets: [UInt8] = [0]
}

/// Hosts on a fresh virtual link: one peripheral (a ``Peripheral`` over a ``HostStack``) and
/// centrals made on demand (bare host stacks, using their GATT clients).
struct PeripheralTestWorld {
    let linkName: String
    let stack: HostStack
    let peripheral: Peripheral
    let address: BluetoothAddress

    static func start() async throws -> PeripheralTestWorld {
        let linkName = "test-\(UUID().uuidString)"
        let address = BluetoothAddress.randomStatic(0x00C0_FFEE_0001)
        let transport = await VirtualTransport.attach(toLinkNamed: linkName)
        let stack = HostStack(transport: transport, configuration: .init(randomAddress: address, deviceName: "Reflex-TEST"))
        try await stack.start()
        return PeripheralTestWorld(linkName: linkName, stack: stack, peripheral: Peripheral(stack: stack), address: address)
    }

    /// A started central host with address seeded by `number`.
    func central(_ number: UInt64) async throws -> HostStack {
        let transport = await VirtualTransport.attach(toLinkNamed: linkName)
        let central = HostStack(transport: transport, configuration: .init(randomAddress: .randomStatic(0x0BAD_0000 + number)))
        try await central.start()
        return central
    }

    func close(_ centrals: HostStack...) async {
        for central in centrals { await central.close() }
        await stack.close()
    }
}

enum PeripheralTestKit {
    /// Runs `body`, failing with a clear message when it takes longer than `seconds`.
    static func within<T: Sendable>(
        _ seconds: Double, _ what: String, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withRunTimeLimit(seconds, onTimeout: { HostError.timedOut(what, seconds: seconds) }, body)
    }

    /// The Punch service as `link` discovers it, with a lookup of characteristics by UUID.
    static func discoverPunch(on link: HostConnection) async throws -> GATTRemoteService {
        let services = try await link.gatt.discoverDatabase()
        return try #require(services.first { $0.service.uuid == PunchUUID.service })
    }

    static func characteristic(_ uuid: BluetoothUUID, in service: GATTRemoteService) throws -> GATTRemoteCharacteristic {
        try #require(service.characteristics.first { $0.characteristic.uuid == uuid })
    }

    /// The next `count` values of `stream`.
    static func collect<S: AsyncSequence & Sendable>(_ count: Int, from stream: S) async throws -> [S.Element]
    where S.Element: Sendable {
        var out: [S.Element] = []
        for try await value in stream {
            out.append(value)
            if out.count == count { break }
        }
        return out
    }
}
