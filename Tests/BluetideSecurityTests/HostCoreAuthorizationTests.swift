import BluetideBase
import BluetideHCI
import Testing

@testable import BluetideHost

/// ``HostCore``'s authorisation seam alone, time chosen by the test: a held request leaves no
/// response, the application's answer sends it, the timeout refuses it at the core's deadline,
/// and a rebuilt server keeps what was granted.
@Suite struct HostCoreAuthorizationTests {
    static let peer = BluetoothAddress.randomStatic(0x0000_0000_8888)
    static let service = try! BluetoothUUID("B1DE0600-0000-4000-8000-00000000B1DE")
    static let door = try! BluetoothUUID("B1DE0601-0000-4000-8000-00000000B1DE")
    static let link: UInt16 = 0x40

    /// The value of ``door`` sits at handle 12 (GAP 1–5, GATT 6–9, the service from 10).
    static var services: [GATTServiceDefinition] {
        [GATTServiceDefinition(uuid: service, characteristics: [
            GATTCharacteristicDefinition(uuid: door, properties: .read, permissions: [.readable, .readAuthorized], value: [0xD0]),
        ])]
    }

    struct Harness {
        var core = HostCore(configuration: HostConfiguration(
            randomAddress: .randomStatic(0x1111_2222_4444), services: HostCoreAuthorizationTests.services))
        var now: Duration = .zero

        mutating func feed(_ input: HostInput) -> HostOutputs {
            var outputs = HostOutputs()
            core.handle(input, now: now, into: &outputs)
            return outputs
        }

        mutating func open() {
            _ = feed(.configureBuffers(ACLBufferSize(packetLength: 27, packetCount: 8)))
            _ = feed(.received(LEConnectionComplete(
                handle: HostCoreAuthorizationTests.link, role: .peripheral, peerAddress: HostCoreAuthorizationTests.peer,
                interval: 24, latency: 0, supervisionTimeout: 72).packet))
        }

        /// An ATT PDU from the peer at `seconds`.
        mutating func att(_ pdu: [UInt8], at seconds: Double) -> HostOutputs {
            now = .milliseconds(Int64(seconds * 1000))
            let frame = [UInt8(pdu.count), 0, 4, 0] + pdu
            return feed(.received(.acl(handle: HostCoreAuthorizationTests.link, boundary: .firstFlushable, broadcast: 0, data: frame)))
        }

        mutating func tick(at seconds: Double) -> HostOutputs {
            now = .milliseconds(Int64(seconds * 1000))
            return feed(.tick)
        }

        mutating func authorize(_ answer: GATTAuthorizationAnswer, at seconds: Double) -> HostOutputs {
            now = .milliseconds(Int64(seconds * 1000))
            var outputs = HostOutputs()
            core.authorize(answer, now: now, into: &outputs)
            return outputs
        }
    }

    /// ATT PDUs the core sent (the L2CAP header removed).
    static func sent(_ outputs: HostOutputs) -> [[UInt8]] {
        outputs.packets.compactMap { if case let .acl(_, _, _, data) = $0 { Array(data.dropFirst(4)) } else { nil } }
    }

    static func asked(_ outputs: HostOutputs) -> [GATTAuthorizationRequest] {
        outputs.events.compactMap {
            if case let .server(_, .authorizationRequested(request)) = $0 { request } else { nil }
        }
    }

    static let readDoor: [UInt8] = [0x0A, 0x0C, 0x00]
    static let refused: [UInt8] = [0x01, 0x0A, 0x0C, 0x00, 0x08]
    static var request: GATTAuthorizationRequest { .init(connection: link, handle: 12, uuid: door, access: .read) }

    @Test func aHeldReadIsRefusedAtTheCoresDeadline() {
        var h = Harness()
        h.open()
        let out = h.att(Self.readDoor, at: 1)
        #expect(Self.sent(out).isEmpty, "no response while the application decides")
        #expect(Self.asked(out) == [Self.request])
        #expect(h.core.nextDeadline == .seconds(21))
        #expect(Self.sent(h.tick(at: 20.9)).isEmpty)
        #expect(Self.sent(h.tick(at: 21)) == [Self.refused])
        #expect(h.core.nextDeadline == nil)
        // A late answer sends nothing more (the bearer has no request in progress).
        #expect(Self.sent(h.authorize(.allow(Self.request), at: 22)).isEmpty)
    }

    @Test func theApplicationsAnswerSendsTheResponse() {
        var h = Harness()
        h.open()
        _ = h.att(Self.readDoor, at: 1)
        #expect(Self.sent(h.authorize(.deny(Self.request), at: 2)) == [Self.refused])
        _ = h.att(Self.readDoor, at: 3)
        #expect(Self.sent(h.authorize(.allow(Self.request), at: 4)) == [[0x0B, 0xD0]])
        #expect(Self.sent(h.att(Self.readDoor, at: 5)) == [[0x0B, 0xD0]], "allowed for the rest of the connection")
    }

    @Test func grantsSurviveNewServicesAndEndWithTheLink() {
        var h = Harness()
        h.open()
        _ = h.authorize(.allowAll(connection: Self.link), at: 1)
        var out = HostOutputs()
        h.core.setServices(Self.services + [GATTServiceDefinition(uuid: .battery, characteristics: [
            GATTCharacteristicDefinition(uuid: .batteryLevel, properties: .read, value: [50]),
        ])], now: .seconds(2), into: &out)
        #expect(Self.sent(h.att(Self.readDoor, at: 3)) == [[0x0B, 0xD0]])
        _ = h.feed(.received(HCIDisconnectionComplete(handle: Self.link, reason: .remoteUserTerminated).packet))
        h.open()
        let again = h.att(Self.readDoor, at: 4)
        #expect(Self.sent(again).isEmpty)
        #expect(Self.asked(again) == [Self.request])
    }

    @Test func aRequestHeldWhenTheServicesChangeIsRefused() {
        var h = Harness()
        h.open()
        _ = h.att(Self.readDoor, at: 1)
        var out = HostOutputs()
        h.core.setServices(Self.services, now: .seconds(2), into: &out)
        #expect(Self.sent(out) == [Self.refused])
        #expect(h.core.nextDeadline == nil)
    }
}
