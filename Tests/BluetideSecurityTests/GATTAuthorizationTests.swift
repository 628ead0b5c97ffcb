import BluetideBase
import Testing

@testable import BluetideHost

/// The GATT server's authorisation (Insufficient Authorization 0x08) as a state machine: which
/// error comes first when several requirements are missing, requests held for the
/// application's answer, grants per connection, the timeout, and what a rebuilt server keeps.
@Suite struct GATTAuthorizationTests {
    static let service = try! BluetoothUUID("B1DE0300-0000-4000-8000-00000000B1DE")
    static let authorizedUUID = try! BluetoothUUID("B1DE0301-0000-4000-8000-00000000B1DE")
    static let everythingUUID = try! BluetoothUUID("B1DE0302-0000-4000-8000-00000000B1DE")
    static let commandUUID = try! BluetoothUUID("B1DE0303-0000-4000-8000-00000000B1DE")
    static let refusingUUID = try! BluetoothUUID("B1DE0304-0000-4000-8000-00000000B1DE")
    static let secondUUID = try! BluetoothUUID("B1DE0305-0000-4000-8000-00000000B1DE")
    static let encryptedUUID = try! BluetoothUUID("B1DE0306-0000-4000-8000-00000000B1DE")
    let c: UInt16 = 0x40

    static func server() -> GATTServer { GATTServer(deviceName: "Authz", services: serverDefinitions) }

    static func refusal(_ opcode: ATTOpcode, _ handle: UInt16, _ code: ATTErrorCode) -> ATTPDU {
        .errorResponse(requestOpcode: opcode, handle: handle, error: code)
    }

    @Test func theDatabaseHasTheLayoutTheTestsUse() {
        let db = Self.server().database
        #expect(db.valueHandle(of: Self.authorizedUUID) == 12)
        #expect(db.valueHandle(of: Self.everythingUUID) == 14)
        #expect(db.valueHandle(of: Self.commandUUID) == 16)
        #expect(db.valueHandle(of: Self.refusingUUID) == 18)
        #expect(db.valueHandle(of: Self.secondUUID) == 20)
        #expect(db.valueHandle(of: Self.encryptedUUID) == 22)
    }

    @Test func aReadWaitsForTheApplicationAndGoesThroughWhenAllowed() {
        var server = Self.server()
        server.connect(c)
        let (response, events) = server.handle(.readRequest(handle: 12), from: c, mtu: 23, now: 100)
        #expect(response == nil, "held until the application answers")
        let request = GATTAuthorizationRequest(connection: c, handle: 12, uuid: Self.authorizedUUID, access: .read)
        #expect(events == [.authorizationRequested(request)])
        #expect(server.nextAuthorizationDeadline == 100 + server.authorizationTimeout)

        let answered = server.authorize(.allow(request), mtu: 23, now: 101)
        #expect(answered.response == .readResponse(value: Array("one".utf8)))
        #expect(answered.events.isEmpty)
        #expect(server.nextAuthorizationDeadline == nil)
        // Allowed for the rest of the connection: the next read is answered at once.
        #expect(server.handle(.readRequest(handle: 12), from: c, mtu: 23).response == .readResponse(value: Array("one".utf8)))
        // A read grant is not a write grant.
        let write = server.handle(.writeRequest(handle: 12, value: [1]), from: c, mtu: 23, now: 102)
        #expect(write.response == nil)
        #expect(write.events == [.authorizationRequested(.init(connection: c, handle: 12, uuid: Self.authorizedUUID, access: .write))])
    }

    @Test func aDeniedRequestGetsInsufficientAuthorizationAndTheNextOneAsksAgain() {
        var server = Self.server()
        server.connect(c)
        let request = GATTAuthorizationRequest(connection: c, handle: 12, uuid: Self.authorizedUUID, access: .write)
        #expect(server.handle(.writeRequest(handle: 12, value: [7]), from: c, mtu: 23).events == [.authorizationRequested(request)])
        let answered = server.authorize(.deny(request), mtu: 23)
        #expect(answered.response == Self.refusal(.writeRequest, 12, .insufficientAuthorization))
        #expect(server.database[12]?.value == Array("one".utf8), "nothing written")
        #expect(server.handle(.writeRequest(handle: 12, value: [7]), from: c, mtu: 23).events == [.authorizationRequested(request)])
        // An answer to a question nobody waits for changes nothing but the grant.
        _ = server.authorize(.deny(request), mtu: 23)
        #expect(server.authorize(.deny(request), mtu: 23).response == nil)
    }

    @Test func anUnansweredRequestIsRefusedAtTheTimeout() {
        var server = Self.server()
        server.connect(c)
        server.authorizationTimeout = 20
        _ = server.handle(.readBlobRequest(handle: 12, offset: 1), from: c, mtu: 23, now: 5)
        #expect(server.expireAuthorizations(now: 24.9).isEmpty)
        let expired = server.expireAuthorizations(now: 25)
        #expect(expired.count == 1)
        #expect(expired.first?.connection == c)
        #expect(expired.first?.response == Self.refusal(.readBlobRequest, 12, .insufficientAuthorization))
        #expect(server.nextAuthorizationDeadline == nil)
        // A late allow still grants the characteristic for the next read.
        _ = server.authorize(.allow(.init(connection: c, handle: 12, uuid: Self.authorizedUUID, access: .read)), mtu: 23)
        #expect(server.handle(.readRequest(handle: 12), from: c, mtu: 23).response == .readResponse(value: Array("one".utf8)))
    }

    /// Several requirements missing at once: the link's security first (0x05 before 0x0F, as
    /// before), the application's authorisation (0x08) last, once the link qualifies.
    @Test func theLinkSecurityIsCheckedBeforeAuthorization() {
        var server = Self.server()
        server.connect(c)
        #expect(server.handle(.readRequest(handle: 14), from: c, mtu: 23).response
                == Self.refusal(.readRequest, 14, .insufficientAuthentication))
        #expect(server.handle(.writeRequest(handle: 14, value: [1]), from: c, mtu: 23).response
                == Self.refusal(.writeRequest, 14, .insufficientEncryption))
        #expect(server.handle(.readRequest(handle: 22), from: c, mtu: 23).response
                == Self.refusal(.readRequest, 22, .insufficientEncryption))
        server.setSecurity(GATTLinkSecurity(isEncrypted: true, isAuthenticated: false), for: c)
        let encryptedRead = server.handle(.readRequest(handle: 22), from: c, mtu: 23)
        #expect(encryptedRead.response == nil)
        #expect(encryptedRead.events == [.authorizationRequested(.init(connection: c, handle: 22, uuid: Self.encryptedUUID, access: .read))])
        _ = server.authorize(.deny(.init(connection: c, handle: 22, uuid: Self.encryptedUUID, access: .read)), mtu: 23)
        #expect(server.handle(.readRequest(handle: 14), from: c, mtu: 23).response
                == Self.refusal(.readRequest, 14, .insufficientAuthentication))
        // Encrypted is enough for writing: now the application is asked.
        let write = server.handle(.writeRequest(handle: 14, value: [1]), from: c, mtu: 23)
        #expect(write.response == nil)
        #expect(write.events == [.authorizationRequested(.init(connection: c, handle: 14, uuid: Self.everythingUUID, access: .write))])
        #expect(server.authorize(.allowAll(connection: c), mtu: 23).response == .writeResponse)
        // Authorised, but still not authenticated for reading: 0x05 stays.
        #expect(server.handle(.readRequest(handle: 14), from: c, mtu: 23).response
                == Self.refusal(.readRequest, 14, .insufficientAuthentication))
        server.setSecurity(GATTLinkSecurity(isEncrypted: true, isAuthenticated: true), for: c)
        #expect(server.handle(.readRequest(handle: 14), from: c, mtu: 23).response == .readResponse(value: [1]))
    }

    @Test func allowAllCoversEveryAttributeOfThatConnectionOnly() {
        var server = Self.server()
        server.connect(c)
        server.connect(c + 1)
        _ = server.authorize(.allowAll(connection: c), mtu: 23)
        #expect(server.handle(.readRequest(handle: 12), from: c, mtu: 23).response == .readResponse(value: Array("one".utf8)))
        #expect(server.handle(.readRequest(handle: 20), from: c, mtu: 23).response == .readResponse(value: Array("three".utf8)))
        #expect(server.handle(.readRequest(handle: 12), from: c + 1, mtu: 23).response == nil, "the other connection is asked")
    }

    @Test func aReadMultipleAsksForEachAttributeInTurn() {
        var server = Self.server()
        server.connect(c)
        let first = server.handle(.readMultipleRequest(handles: [12, 20]), from: c, mtu: 23)
        let one = GATTAuthorizationRequest(connection: c, handle: 12, uuid: Self.authorizedUUID, access: .read)
        let three = GATTAuthorizationRequest(connection: c, handle: 20, uuid: Self.secondUUID, access: .read)
        #expect(first.events == [.authorizationRequested(one)])
        let second = server.authorize(.allow(one), mtu: 23)
        #expect(second.response == nil)
        #expect(second.events == [.authorizationRequested(three)])
        #expect(server.authorize(.allow(three), mtu: 23).response == .readMultipleResponse(values: Array("onethree".utf8)))
    }

    @Test func aWriteCommandCannotWaitButIsReported() {
        var server = Self.server()
        server.connect(c)
        let request = GATTAuthorizationRequest(connection: c, handle: 16, uuid: Self.commandUUID, access: .write)
        let dropped = server.handle(.writeCommand(handle: 16, value: [1]), from: c, mtu: 23)
        #expect(dropped.response == nil)
        #expect(dropped.events == [.authorizationRequested(request)])
        #expect(server.database[16]?.value == [])
        #expect(server.nextAuthorizationDeadline == nil, "nothing is held for a command")
        #expect(server.authorize(.allow(request), mtu: 23).response == nil)
        let next = server.handle(.writeCommand(handle: 16, value: [2]), from: c, mtu: 23)
        #expect(next.events == [.valueWritten(connection: c, handle: 16, uuid: Self.commandUUID, value: [2])])
    }

    @Test func aHandlerThatAnswers0x08ItselfIsNotAskedAbout() {
        var server = Self.server()
        server.connect(c)
        _ = server.authorize(.allowAll(connection: c), mtu: 23)
        #expect(server.handle(.writeRequest(handle: 18, value: [1]), from: c, mtu: 23).response
                == Self.refusal(.writeRequest, 18, .insufficientAuthorization))
        #expect(server.nextAuthorizationDeadline == nil)
    }

    @Test func authorizationEndsWithTheConnection() {
        var server = Self.server()
        server.connect(c)
        _ = server.authorize(.allowAll(connection: c), mtu: 23)
        _ = server.handle(.readRequest(handle: 12), from: c, mtu: 23)
        server.disconnect(c)
        server.connect(c)  // the controller reuses the handle for the next central
        #expect(server.handle(.readRequest(handle: 12), from: c, mtu: 23).response == nil)
    }

    @Test func aRebuiltServerKeepsGrantsOfUnchangedAttributesAndRefusesHeldRequests() {
        var previous = Self.server()
        previous.connect(c)
        _ = previous.authorize(.allow(.init(connection: c, handle: 12, uuid: Self.authorizedUUID, access: .read)), mtu: 23)
        _ = previous.handle(.readRequest(handle: 20), from: c, mtu: 23)
        previous.connect(c + 1)
        _ = previous.authorize(.allowAll(connection: c + 1), mtu: 23)

        // The same services plus one more at the end: old handles keep their meaning.
        var fresh = GATTServer(deviceName: "Authz", services: Self.serverDefinitions + [
            GATTServiceDefinition(uuid: .battery, characteristics: [GATTCharacteristicDefinition(uuid: .batteryLevel, properties: .read)]),
        ])
        fresh.connect(c)
        fresh.connect(c + 1)
        let refused = fresh.adoptAuthorizations(from: previous)
        #expect(refused.map(\.connection) == [c])
        #expect(refused.first?.response == Self.refusal(.readRequest, 20, .insufficientAuthorization))
        #expect(fresh.handle(.readRequest(handle: 12), from: c, mtu: 23).response == .readResponse(value: Array("one".utf8)))
        #expect(fresh.handle(.readRequest(handle: 20), from: c, mtu: 23).response == nil, "not granted before: asked")
        #expect(fresh.handle(.readRequest(handle: 20), from: c + 1, mtu: 23).response == .readResponse(value: Array("three".utf8)))

        // A different layout: a grant on a handle that now holds another type is dropped.
        var other = GATTServer(deviceName: "Authz", services: [
            GATTServiceDefinition(uuid: Self.service, characteristics: [
                GATTCharacteristicDefinition(
                    uuid: Self.secondUUID, properties: .read, permissions: [.readable, .readAuthorized], value: [3]),
            ]),
        ])
        other.connect(c)
        _ = other.adoptAuthorizations(from: previous)
        #expect(other.handle(.readRequest(handle: 12), from: c, mtu: 23).response == nil)
    }

    /// Handles (GAP 1–5, GATT 6–9 first): authorised read/write value 12, authorised +
    /// authenticated + encrypted value 14, write-without-response value 16, a value whose
    /// validator itself answers 0x08 at 18, a second authorised read value 20, an encrypted +
    /// authorised read value 22.
    static var serverDefinitions: [GATTServiceDefinition] {
        [GATTServiceDefinition(uuid: service, characteristics: [
            GATTCharacteristicDefinition(
                uuid: authorizedUUID, properties: [.read, .write],
                permissions: [.readable, .writable, .readAuthorized, .writeAuthorized], value: Array("one".utf8)),
            GATTCharacteristicDefinition(
                uuid: everythingUUID, properties: [.read, .write],
                permissions: [.readable, .writable, .readAuthorized, .readAuthenticated, .readEncrypted,
                              .writeAuthorized, .writeEncrypted],
                value: Array("two".utf8)),
            GATTCharacteristicDefinition(uuid: commandUUID, properties: [.writeWithoutResponse], permissions: [.writable, .writeAuthorized]),
            GATTCharacteristicDefinition(
                uuid: refusingUUID, properties: [.write], permissions: [.writable, .writeAuthorized],
                validateWrite: { _ in .insufficientAuthorization }),
            GATTCharacteristicDefinition(
                uuid: secondUUID, properties: .read, permissions: [.readable, .readAuthorized], value: Array("three".utf8)),
            GATTCharacteristicDefinition(
                uuid: encryptedUUID, properties: .read, permissions: [.readable, .readEncrypted, .readAuthorized], value: [4]),
        ])]
    }
}
