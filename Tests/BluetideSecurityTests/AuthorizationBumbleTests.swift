import BluetideBase
import BluetideTestSupport
import BluetideTransport
import Foundation
import Testing

@testable import BluetideHost

/// Bumble as central reading a value of our peripheral that needs the application's
/// authorisation (`Bumble/authorization_central.py`): refused with Insufficient Authorization
/// (0x08) when the application denies, read when it allows.
@Suite("Authorisation ↔ Bumble", .serialized, .bumbleInterop, .timeLimit(.minutes(2)))
struct AuthorizationBumbleTests {
    static let ourAddress = BluetoothAddress.randomStatic(0x31C2_C3C4_C5C7)
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Bumble/authorization_central.py")
    static let service = try! BluetoothUUID("B1DE0500-0000-4000-8000-00000000B1DE")
    static let authorized = try! BluetoothUUID("B1DE0501-0000-4000-8000-00000000B1DE")

    @Test func bumbleIsRefusedUntilTheApplicationAllows() async throws {
        let (controllers, ports) = try await BumbleLinkedControllers.start(count: 2)
        let transport = try await Transport.open("tcp-client:127.0.0.1:\(ports[0])")
        let stack = HostStack(transport: transport, configuration: .init(
            randomAddress: Self.ourAddress,
            services: [GATTServiceDefinition(uuid: Self.service, characteristics: [
                GATTCharacteristicDefinition(
                    uuid: Self.authorized, properties: .read, permissions: [.readable, .readAuthorized],
                    value: Array("authorised".utf8)),
            ])]))
        var peer: BumbleProcess?
        // The application: denies the first request, allows the second.
        let application = Task {
            var answered: [GATTAuthorizationRequest] = []
            for await event in stack.serverEvents {
                guard case let .authorizationRequested(request) = event.event else { continue }
                await stack.authorize(answered.isEmpty ? .deny(request) : .allow(request))
                answered.append(request)
                if answered.count == 2 { break }
            }
            return answered
        }
        do {
            try await stack.start()
            try await stack.startAdvertising(
                AdvertisingData([.flags([.leGeneralDiscoverable, .brEdrNotSupported])]), intervalMilliseconds: 20)
            let central = try await BumbleProcess.launchPython(
                .script(Self.script),
                arguments: ["\(ports[1])", "--peer", Self.ourAddress.description, "--uuid", Self.authorized.description],
                name: "authorization-central")
            peer = central
            let refused = try await central.firstJSON("event", "read", timeout: .seconds(30))
            #expect(refused["code"]?.int == 0x08, "\(refused)")
            try await central.writeToStdin("read\n")
            let read = try await central.firstJSON("event", "read", timeout: .seconds(30))
            #expect(read["value"]?.string == "authorised", "\(read)")
            let asked = await application.value
            #expect(asked.map(\.uuid) == [Self.authorized, Self.authorized])
            #expect(asked.map(\.access) == [.read, .read])
        } catch {
            application.cancel()
            await stack.close()
            await peer?.stop()
            await controllers.stop()
            throw error
        }
        await stack.close()
        await peer?.stop()
        await controllers.stop()
    }
}
