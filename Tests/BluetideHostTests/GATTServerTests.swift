import BluetideBase
import Testing
@testable import BluetideHost

/// The database the GATT suites share. Handles (GAP 1–5, GATT 6–9 come first):
/// Heart Rate 10–17 (2A37 value 12 + CCCD 13, 2A38 value 15, 2A39 value 17),
/// test service 18–35 (include 19, long 21, write-only 23, indicate 25 + CCCD 26 + user
/// description 27, encrypted 29, authenticated 31, read-only 33, dynamic 35), Battery 36–39.
enum GATTFixture {
    static let service = uuid(1)
    static func uuid(_ n: UInt8) -> BluetoothUUID {
        BluetoothUUID(high: 0x6E40_0000_B5A3_F393 | UInt64(n) << 32, low: 0xE0A9_E50E_24DC_CA9E)
    }
    static let longValue: [UInt8] = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 7) }

    static func server() -> GATTServer {
        GATTServer(deviceName: "Bluetide", appearance: 0x0341, services: [
            GATTServiceDefinition(uuid: .heartRate, characteristics: [
                GATTCharacteristicDefinition(uuid: .heartRateMeasurement, properties: .notify, value: [0x00, 60]),
                GATTCharacteristicDefinition(uuid: .bodySensorLocation, properties: .read, value: [1]),
                GATTCharacteristicDefinition(uuid: .heartRateControlPoint, properties: .write, maximumLength: 1,
                                             validateWrite: { $0.value == [1] ? nil : .application(0) }),
            ]),
            GATTServiceDefinition(uuid: service, includedServices: [.battery], characteristics: [
                GATTCharacteristicDefinition(uuid: uuid(2), properties: [.read, .write], value: longValue),
                GATTCharacteristicDefinition(uuid: uuid(3), properties: [.write, .writeWithoutResponse]),
                GATTCharacteristicDefinition(uuid: uuid(4), properties: [.notify, .indicate], value: [0], descriptors: [
                    GATTDescriptorDefinition(uuid: .characteristicUserDescription, value: Array("Punch".utf8)),
                ]),
                GATTCharacteristicDefinition(uuid: uuid(5), properties: .read, permissions: [.readable, .readEncrypted], value: [5]),
                GATTCharacteristicDefinition(uuid: uuid(6), properties: [.read, .write],
                                             permissions: [.readable, .readAuthenticated, .writable, .writeAuthenticated], value: [6]),
                GATTCharacteristicDefinition(uuid: uuid(7), properties: .read, value: [9]),
                GATTCharacteristicDefinition(uuid: uuid(8), properties: .read, onRead: { .success([0xD0, UInt8($0.connection & 0xFF)]) }),
            ]),
            GATTServiceDefinition(uuid: .battery, characteristics: [
                GATTCharacteristicDefinition(uuid: .batteryLevel, properties: [.read, .notify], value: [100]),
            ]),
        ])
    }
}

@Suite struct GATTServerTests {
    let c: UInt16 = 0x40

    private func ask(_ server: inout GATTServer, _ request: String, mtu: Int = 23, from connection: UInt16 = 0x40) -> [UInt8]? {
        guard let pdu = try? ATTPDU(bytes: gattHex(request)) else { return nil }
        return server.handle(pdu, from: connection, mtu: mtu).response?.bytes
    }

    @Test func databaseLayout() {
        let server = GATTFixture.server()
        let db = server.database
        #expect(db.attributes.count == 39)
        #expect(db.valueHandle(of: .heartRateMeasurement) == 12)
        #expect(db.valueHandle(of: GATTFixture.uuid(4)) == 25)
        #expect(db.valueHandle(of: .batteryLevel, in: .battery) == 38)
        #expect(db.valueHandle(of: .batteryLevel, in: .heartRate) == nil)
        #expect(db[11]?.value == gattHex("10 0C 00 37 2A"), "characteristic declaration: properties, value handle, UUID")
        #expect(db[19]?.value == gattHex("24 00 27 00 0F 18"), "include declaration of the 16-bit Battery service")
        #expect(db[13]?.type == .clientCharacteristicConfiguration)
        #expect(db[0] == nil && db[40] == nil)
    }

    @Test func primaryServiceDiscoveryVectors() {
        var s = GATTFixture.server()
        #expect(ask(&s, "10 01 00 FF FF 00 28") == gattHex("11 06 01 00 05 00 00 18 06 00 09 00 01 18 0A 00 11 00 0D 18"))
        #expect(ask(&s, "10 12 00 FF FF 00 28") == gattHex("11 14 12 00 23 00 9E CA DC 24 0E E5 A9 E0 93 F3 A3 B5 01 00 40 6E"))
        #expect(ask(&s, "10 24 00 FF FF 00 28") == gattHex("11 06 24 00 27 00 0F 18"))
        #expect(ask(&s, "10 28 00 FF FF 00 28") == gattHex("01 10 28 00 0A"))
        #expect(ask(&s, "10 01 00 FF FF 03 28") == gattHex("01 10 01 00 10"), "not a grouping type")
        #expect(ask(&s, "06 01 00 FF FF 00 28 0D 18") == gattHex("07 0A 00 11 00"))
        #expect(ask(&s, "06 01 00 FF FF 00 28 AA AA") == gattHex("01 06 01 00 0A"))
    }

    @Test func characteristicAndDescriptorDiscoveryVectors() {
        var s = GATTFixture.server()
        #expect(ask(&s, "08 0A 00 11 00 03 28") == gattHex("09 07 0B 00 10 0C 00 37 2A 0E 00 02 0F 00 38 2A 10 00 08 11 00 39 2A"))
        #expect(ask(&s, "04 0A 00 0D 00") == gattHex("05 01 0A 00 00 28 0B 00 03 28 0C 00 37 2A 0D 00 02 29"))
        #expect(ask(&s, "04 15 00 15 00") == gattHex("05 02 15 00 9E CA DC 24 0E E5 A9 E0 93 F3 A3 B5 02 00 40 6E"))
        #expect(ask(&s, "04 28 00 FF FF") == gattHex("01 04 28 00 0A"))
        #expect(ask(&s, "04 00 00 05 00") == gattHex("01 04 00 00 01"), "handle 0 is invalid")
        #expect(ask(&s, "08 05 00 01 00 03 28") == gattHex("01 08 05 00 01"), "start after end")
        #expect(ask(&s, "08 12 00 12 00 02 28") == gattHex("01 08 12 00 0A"))
        #expect(ask(&s, "08 13 00 13 00 02 28") == gattHex("09 08 13 00 24 00 27 00 0F 18"))
    }

    @Test func readsAndTheirErrors() {
        var s = GATTFixture.server()
        #expect(ask(&s, "0A 0F 00") == gattHex("0B 01"))
        #expect(ask(&s, "0A 03 00") == gattHex("0B") + Array("Bluetide".utf8))
        #expect(ask(&s, "0A 05 00") == gattHex("0B 41 03"))
        #expect(ask(&s, "0A 00 01") == gattHex("01 0A 00 01 01"), "Invalid Handle")
        #expect(ask(&s, "0A 17 00") == gattHex("01 0A 17 00 02"), "write-only: Read Not Permitted")
        #expect(ask(&s, "0A 08 00") == gattHex("01 0A 08 00 02"), "Service Changed is not readable")
        #expect(ask(&s, "0A 1D 00") == gattHex("01 0A 1D 00 0F"), "Insufficient Encryption")
        #expect(ask(&s, "0A 1F 00") == gattHex("01 0A 1F 00 05"), "Insufficient Authentication")
        s.setSecurity(GATTLinkSecurity(isEncrypted: true), for: c)
        #expect(ask(&s, "0A 1D 00") == gattHex("0B 05"))
        #expect(ask(&s, "0A 1F 00") == gattHex("01 0A 1F 00 05"), "encrypted is not authenticated")
        s.setSecurity(GATTLinkSecurity(isEncrypted: true, isAuthenticated: true), for: c)
        #expect(ask(&s, "0A 1F 00") == gattHex("0B 06"))
        #expect(ask(&s, "0A 23 00") == gattHex("0B D0 40"), "read handler sees the connection")
        #expect(ask(&s, "0A 23 00", from: 0x41) == gattHex("0B D0 41"))
    }

    @Test func readBlobAndReadMultiple() {
        var s = GATTFixture.server()
        #expect(ask(&s, "0A 15 00") == [0x0B] + GATTFixture.longValue.prefix(22))
        #expect(ask(&s, "0C 15 00 16 00") == [0x0D] + GATTFixture.longValue[22..<44])
        #expect(ask(&s, "0C 15 00 2A 01") == [0x0D] + GATTFixture.longValue[298...], "offset 298: last 2 bytes")
        #expect(ask(&s, "0C 15 00 2C 01") == [0x0D], "offset == length: empty")
        #expect(ask(&s, "0C 15 00 2D 01") == gattHex("01 0C 15 00 07"), "Invalid Offset")
        #expect(ask(&s, "0C 17 00 00 00") == gattHex("01 0C 17 00 02"))
        #expect(ask(&s, "0E 0F 00 21 00 05 00") == gattHex("0F 01 09 41 03"))
        #expect(ask(&s, "0E 0F 00 99 00") == gattHex("01 0E 99 00 01"))
        #expect(ask(&s, "0E 0F 00 17 00") == gattHex("01 0E 17 00 02"))
        // Read Multiple Variable: length-prefixed values; the one that does not fit is cut.
        #expect(ask(&s, "20 0F 00 21 00 05 00") == gattHex("21 01 00 01 01 00 09 02 00 41 03"))
        #expect(ask(&s, "20 0F 00 15 00 21 00") == [0x21, 0x01, 0x00, 0x01, 0x2C, 0x01] + GATTFixture.longValue.prefix(17), "cut to fill the 23-byte MTU")
        #expect(ask(&s, "20 0F 00 17 00") == gattHex("01 20 17 00 02"))
        #expect(ask(&s, "20 0F 00 99 00") == gattHex("01 20 99 00 01"))
    }

    @Test func writesAndTheirErrors() {
        var s = GATTFixture.server()
        #expect(ask(&s, "12 17 00 AA BB") == gattHex("13"))
        #expect(s.database[23]?.value == [0xAA, 0xBB])
        #expect(ask(&s, "12 21 00 01") == gattHex("01 12 21 00 03"), "read-only: Write Not Permitted")
        #expect(ask(&s, "12 00 02 01") == gattHex("01 12 00 02 01"))
        #expect(ask(&s, "12 1F 00 01") == gattHex("01 12 1F 00 05"))
        #expect(ask(&s, "12 11 00 02") == gattHex("01 12 11 00 80"), "validation hook: application error")
        #expect(s.database[17]?.value == [], "refused value not stored")
        #expect(ask(&s, "12 11 00 01") == gattHex("13"))
        #expect(ask(&s, "12 11 00 01 01") == gattHex("01 12 11 00 0D"), "longer than the maximum length")
        #expect(ask(&s, "12 0D 00 01") == gattHex("01 12 0D 00 0D"), "CCCD must be 2 bytes")
        let tooLong = ATTPDU.writeRequest(handle: 21, value: [UInt8](repeating: 0, count: 513))
        #expect(s.handle(tooLong, from: c, mtu: 517).response == .errorResponse(requestOpcode: .writeRequest, handle: 21, error: .invalidAttributeValueLength))
        #expect(ask(&s, "3E 01 00") == gattHex("01 3E 00 00 06"), "Request Not Supported")
    }

    @Test func commandsHaveNoResponse() {
        var s = GATTFixture.server()
        let (r1, e1) = s.handle(.writeCommand(handle: 23, value: [7]), from: c, mtu: 23)
        #expect(r1 == nil)
        #expect(e1 == [.valueWritten(connection: c, handle: 23, uuid: GATTFixture.uuid(3), value: [7])])
        let (r2, e2) = s.handle(.writeCommand(handle: 33, value: [7]), from: c, mtu: 23)
        #expect(r2 == nil && e2.isEmpty && s.database[33]?.value == [9], "not writable: silently ignored")
        let (r3, e3) = s.handle(.signedWriteCommand(handle: 23, value: [8], signature: [UInt8](repeating: 0, count: 12)), from: c, mtu: 23)
        #expect(r3 == nil && e3 == [.signedWriteIgnored(connection: c, handle: 23)] && s.database[23]?.value == [7])
        #expect(s.handle(.unknown(opcode: ATTOpcode(0x7F), parameters: []), from: c, mtu: 23).response == nil)
    }

    @Test func aWriteCommandToACharacteristicWithoutWriteWithoutResponseIsIgnored() throws {
        // Core Vol 3 Part G 3.3.1.1. The Heart Rate Control Point (handle 0x11) is writable by
        // Write Request only: `52 11 00 01` must change nothing and report nothing.
        var s = GATTFixture.server()
        let (response, events) = s.handle(try ATTPDU(bytes: gattHex("52 11 00 01")), from: c, mtu: 23)
        #expect(response == nil && events.isEmpty)
        #expect(s.database[17]?.value == [], "value not applied")
        #expect(ask(&s, "12 11 00 01") == gattHex("13"), "a Write Request still works")
    }

    @Test func preparedWrites() {
        var s = GATTFixture.server()
        s.maximumPreparedWrites = 3
        #expect(ask(&s, "16 15 00 00 00 01 02") == gattHex("17 15 00 00 00 01 02"))
        #expect(ask(&s, "16 15 00 02 00 03") == gattHex("17 15 00 02 00 03"))
        #expect(ask(&s, "16 21 00 00 00 01") == gattHex("01 16 21 00 03"))
        #expect(ask(&s, "16 99 00 00 00 01") == gattHex("01 16 99 00 01"))
        #expect(ask(&s, "16 1F 00 00 00 01") == gattHex("01 16 1F 00 05"))
        #expect(ask(&s, "16 17 00 00 00 09") == gattHex("17 17 00 00 00 09"))
        #expect(ask(&s, "16 17 00 01 00 09") == gattHex("01 16 17 00 09"), "Prepare Queue Full")
        #expect(ask(&s, "18 01") == gattHex("19"))
        #expect(s.database[21]?.value == [1, 2, 3])
        #expect(s.database[23]?.value == [9])
        // Cancel drops the queue.
        #expect(ask(&s, "16 15 00 00 00 07") == gattHex("17 15 00 00 00 07"))
        #expect(ask(&s, "18 00") == gattHex("19"))
        #expect(ask(&s, "18 01") == gattHex("19"))
        #expect(s.database[21]?.value == [1, 2, 3])
        // A gap between parts: Invalid Offset, nothing applied.
        #expect(ask(&s, "16 15 00 00 00 07") == gattHex("17 15 00 00 00 07"))
        #expect(ask(&s, "16 15 00 05 00 07") == gattHex("17 15 00 05 00 07"))
        #expect(ask(&s, "18 01") == gattHex("01 18 15 00 07"))
        #expect(s.database[21]?.value == [1, 2, 3])
        // The validation hook sees the assembled value.
        #expect(ask(&s, "16 11 00 00 00 05") == gattHex("17 11 00 00 00 05"))
        #expect(ask(&s, "18 01") == gattHex("01 18 11 00 80"))
        #expect(ask(&s, "18 02") == gattHex("01 18 00 00 04"), "reserved flags")
    }

    @Test func pushesOnlyToSubscribersAndIndicationsOneAtATime() {
        var s = GATTFixture.server()
        s.connect(0x40)
        s.connect(0x41)
        #expect(s.notify(valueHandle: 12, value: [0, 61]).isEmpty, "nobody subscribed")
        #expect(s.handle(.writeRequest(handle: 13, value: [1, 0]), from: 0x40, mtu: 23).events
                == [.subscriptionChanged(connection: 0x40, valueHandle: 12, configuration: .notification)])
        #expect(s.notify(valueHandle: 12, value: [0, 62]) == [GATTServerPush(connection: 0x40, kind: .notification, handle: 12, value: [0, 62])])
        #expect(s.indicate(valueHandle: 12, value: [0, 63]).isEmpty, "indications not enabled (and not supported)")
        #expect(ask(&s, "0A 0D 00", from: 0x40) == gattHex("0B 01 00"))
        #expect(ask(&s, "0A 0D 00", from: 0x41) == gattHex("0B 00 00"), "CCCD is per connection")
        // Indications on handle 25 for connection 0x41.
        #expect(ask(&s, "12 1A 00 02 00", from: 0x41) == gattHex("13"))
        #expect(s.indicate(valueHandle: 25, value: [1]) == [GATTServerPush(connection: 0x41, kind: .indication, handle: 25, value: [1])])
        #expect(s.indicate(valueHandle: 25, value: [2]).isEmpty, "queued until confirmed")
        #expect(s.indicationConfirmed(by: 0x41) == [GATTServerPush(connection: 0x41, kind: .indication, handle: 25, value: [2])])
        #expect(s.indicationConfirmed(by: 0x41).isEmpty)
        #expect(s.notify(valueHandle: 25, value: [3]).isEmpty, "0x41 asked for indications only")
        // Unsubscribing and disconnecting drop the subscriptions.
        #expect(ask(&s, "12 0D 00 00 00", from: 0x40) == gattHex("13"))
        #expect(s.notify(valueHandle: 12, value: [0, 64]).isEmpty)
        s.disconnect(0x41)
        #expect(s.indicate(valueHandle: 25, value: [4]).isEmpty)
        #expect(s.configuration(of: 25, for: 0x41) == [])
    }

    @Test func bearerGlueAnswersRequestsAndReleasesIndications() {
        var s = GATTFixture.server()
        var bearer = ATTBearer(localMTU: 23)
        var r = bearer.receive(gattHex("0A 0F 00"), now: 0, server: &s, connection: c)
        #expect(r == .init(bearer: [.send(gattHex("0B 01"))], server: []))
        r = bearer.receive(gattHex("52 17 00 05"), now: 0, server: &s, connection: c)
        #expect(r == .init(bearer: [], server: [.valueWritten(connection: c, handle: 23, uuid: GATTFixture.uuid(3), value: [5])]))
        r = bearer.receive(gattHex("3E"), now: 0, server: &s, connection: c)
        #expect(r.bearer == [.send(gattHex("01 3E 00 00 06"))])
        r = bearer.receive(gattHex("12 1A 00 02 00"), now: 0, server: &s, connection: c)
        #expect(r.bearer == [.send(gattHex("13"))])
        #expect(r.server == [.subscriptionChanged(connection: c, valueHandle: 25, configuration: .indication)])
        var sent: [ATTBearerEvent] = []
        for p in s.indicate(valueHandle: 25, value: [1]) + s.indicate(valueHandle: 25, value: [2]) { sent += bearer.send(p, now: 1) }
        #expect(sent == [.send(gattHex("1D 19 00 01"))])
        r = bearer.receive(gattHex("1E"), now: 2, server: &s, connection: c)
        guard case .indicationConfirmed = r.bearer.first else { Issue.record("expected a confirmation"); return }
        #expect(Array(r.bearer.dropFirst()) == [.send(gattHex("1D 19 00 02"))], "the queued indication follows the confirmation")
    }

    @Test func serviceChangedIsIndicatedToSubscribers() {
        var s = GATTFixture.server()
        #expect(s.indicateServiceChanged().isEmpty)
        #expect(ask(&s, "12 09 00 02 00") == gattHex("13"))
        #expect(s.indicateServiceChanged(start: 0x0A, end: 0x27)
                == [GATTServerPush(connection: c, kind: .indication, handle: 8, value: gattHex("0A 00 27 00"))])
    }

    @Test func randomizedRequests() {
        var rng = GATTSeededRandom(seed: 0x5E)
        var s = GATTFixture.server()
        for _ in 0..<20_000 {
            guard let pdu = try? ATTPDU(bytes: rng.bytes(upTo: 23)) else { continue }
            let mtu = Int.random(in: 0...600, using: &rng)
            if let response = s.handle(pdu, from: UInt16.random(in: 0...3, using: &rng), mtu: mtu).response {
                #expect(response.bytes.count <= max(mtu, 23), "\(pdu) → \(response)")
            }
        }
    }
}
