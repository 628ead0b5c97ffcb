import BluetideBase
import Testing
@testable import BluetideHost

/// The GATT client talking to the GATT server in memory through two ATT bearers.
@Suite struct GATTClientServerTests {
    private func makeLink(clientMTU: Int = 517, serverMTU: Int = 517) async -> (InMemoryGATTLink, GATTClient) {
        let link = InMemoryGATTLink(server: GATTFixture.server(), clientMTU: clientMTU, serverMTU: serverMTU)
        let client = GATTClient(channel: link)
        await link.attach(client)
        return (link, client)
    }

    private func characteristic(_ client: GATTClient, _ uuid: BluetoothUUID, in service: BluetoothUUID) async throws -> GATTCharacteristic {
        let services = try await client.discoverPrimaryServices(uuid: service)
        let s = try #require(services.first)
        let all = try await client.discoverCharacteristics(in: s)
        return try #require(all.first { $0.uuid == uuid })
    }

    @Test func discoverEverything() async throws {
        let (_, client) = await makeLink()
        let services = try await client.discoverPrimaryServices()
        #expect(services.map(\.uuid) == [.genericAccess, .genericAttribute, .heartRate, GATTFixture.service, .battery])
        #expect(services.map(\.startHandle) == [1, 6, 10, 18, 36])
        #expect(services.map(\.endHandle) == [5, 9, 17, 35, 39])

        let hr = try await client.discoverCharacteristics(in: services[2])
        #expect(hr.map(\.uuid) == [.heartRateMeasurement, .bodySensorLocation, .heartRateControlPoint])
        #expect(hr.map(\.valueHandle) == [12, 15, 17])
        #expect(hr.map(\.endHandle) == [13, 15, 17])
        #expect(hr[0].properties == .notify)

        let test = try await client.discoverCharacteristics(in: services[3])
        #expect(test.count == 7)
        #expect(test.map(\.uuid) == (2...8).map { GATTFixture.uuid(UInt8($0)) })
        let descriptors = try await client.discoverDescriptors(of: test[2])
        #expect(descriptors.map(\.uuid) == [.clientCharacteristicConfiguration, .characteristicUserDescription])
        #expect(try await client.read(handle: descriptors[1].handle) == Array("Punch".utf8))
        #expect(try await client.discoverDescriptors(of: test[0]).isEmpty)

        let included = try await client.findIncludedServices(in: services[3])
        #expect(included == [GATTIncludedService(declarationHandle: 19, service: GATTServiceRange(uuid: .battery, startHandle: 36, endHandle: 39))])
        #expect(try await client.findIncludedServices(in: services[2]).isEmpty)

        #expect(try await client.discoverPrimaryServices(uuid: .heartRate) == [GATTServiceRange(uuid: .heartRate, startHandle: 10, endHandle: 17)])
        #expect(try await client.discoverPrimaryServices(uuid: BluetoothUUID(0xFEED)).isEmpty, "bogus UUID: empty")
        #expect(try await client.read(handle: 3) == Array("Bluetide".utf8))
    }

    @Test func discoverWholeDatabase() async throws {
        let (_, client) = await makeLink()
        let db = try await client.discoverDatabase()
        #expect(db.map(\.service.uuid) == [.genericAccess, .genericAttribute, .heartRate, GATTFixture.service, .battery])
        #expect(db[0].characteristics.map(\.characteristic.uuid) == [.deviceName, .appearance])
        let serviceChanged = try #require(db[1].characteristics.first)
        #expect(serviceChanged.characteristic.uuid == .serviceChanged)
        #expect(serviceChanged.characteristic.properties == .indicate)
        #expect(serviceChanged.descriptors == [GATTDescriptor(uuid: .clientCharacteristicConfiguration, handle: 9)])
        #expect(db.flatMap(\.characteristics).count == 14)
        #expect(db.flatMap(\.characteristics).flatMap(\.descriptors).count == 5)
    }

    @Test func readShortAndLongValues() async throws {
        let (link, client) = await makeLink()
        #expect(try await client.read(handle: 15) == [1])
        #expect(try await client.read(handle: 21) == GATTFixture.longValue)
        // At MTU 23: one Read Request for 22 bytes, then Read Blob parts of 22 until a short one.
        let reads = await link.wireLog().filter(\.fromClient).map { $0.bytes[0] }.filter { $0 == 0x0A || $0 == 0x0C }
        #expect(reads == [0x0A, 0x0A] + [UInt8](repeating: 0x0C, count: 13))
        // After an MTU exchange the long value fits one Read Response.
        #expect(try await client.exchangeMTU() == 517)
        #expect(await link.clientMTU() == 517)
        #expect(try await client.read(handle: 21) == GATTFixture.longValue)
        let after = await link.wireLog().filter(\.fromClient).map { $0.bytes[0] }.filter { $0 == 0x0A || $0 == 0x0C }
        #expect(after.count == reads.count + 1)
    }

    @Test func readEdgeLengthsExactlyFillingTheMTU() async throws {
        let (link, client) = await makeLink()
        for length in [0, 21, 22, 23, 44, 45, 512] {
            let value = (0..<length).map { UInt8(truncatingIfNeeded: $0) }
            await link.setServerValue(value, at: 21)
            #expect(try await client.read(handle: 21) == value, "length \(length)")
        }
    }

    @Test func readMultiple() async throws {
        let (_, client) = await makeLink()
        #expect(try await client.readMultiple(handles: [15, 33, 5]) == [1, 9, 0x41, 0x03])
        #expect(try await client.readMultipleVariable(handles: [15, 5, 3]) == [[1], [0x41, 0x03], Array("Bluetide".utf8)])
    }

    @Test func writeShortAndLong() async throws {
        let (link, client) = await makeLink()
        try await client.write(handle: 21, value: [1, 2, 3])
        #expect(try await client.read(handle: 21) == [1, 2, 3])
        let long = (0..<300).map { UInt8(truncatingIfNeeded: 255 - $0) }
        try await client.write(handle: 21, value: long)
        #expect(try await client.read(handle: 21) == long)
        let ops = await link.wireLog().filter(\.fromClient).map { $0.bytes[0] }
        #expect(ops.filter { $0 == 0x16 }.count == 17, "300 bytes in parts of MTU − 5 = 18")
        #expect(await link.wireLog().contains { $0.fromClient && $0.bytes == [0x18, 0x01] })
        try await client.writeWithoutResponse(handle: 23, value: [0xAB])
        #expect(await link.events().contains(.valueWritten(connection: 0x40, handle: 23, uuid: GATTFixture.uuid(3), value: [0xAB])))
        await #expect(throws: GATTClientError.valueTooLong(length: 21, maximum: 20)) {
            try await client.writeWithoutResponse(handle: 23, value: [UInt8](repeating: 0, count: 21))
        }
    }

    @Test func concurrentLongWritesDoNotShareAPreparedQueue() async throws {
        // The server has one prepared-write queue per connection: a refused long write must not
        // take a concurrent one down with it, so the client runs long writes one at a time.
        let link = InMemoryGATTLink(server: GATTFixture.server())
        let client = GATTClient(channel: YieldingChannel(link))
        let good = [UInt8](repeating: 0xAA, count: 100)
        async let refused: Void = client.write(handle: 17, value: [UInt8](repeating: 1, count: 30))
        async let accepted: Void = client.write(handle: 21, value: good)
        let refusal: (any Error)?
        do { try await refused; refusal = nil } catch { refusal = error }
        try await accepted
        #expect(refusal as? GATTClientError == .att(.invalidAttributeValueLength, handle: 17, request: .executeWriteRequest))
        #expect(await link.serverState().database[21]?.value == good)
        let ops = await link.wireLog().filter(\.fromClient).map { $0.bytes[0] }
        #expect(ops.contains(0x16))
    }

    @Test func permissionAndValidationErrorsReachTheClient() async throws {
        let (_, client) = await makeLink()
        await #expect(throws: GATTClientError.att(.readNotPermitted, handle: 23, request: .readRequest)) { try await client.read(handle: 23) }
        await #expect(throws: GATTClientError.att(.writeNotPermitted, handle: 33, request: .writeRequest)) { try await client.write(handle: 33, value: [1]) }
        await #expect(throws: GATTClientError.att(.insufficientEncryption, handle: 29, request: .readRequest)) { try await client.read(handle: 29) }
        await #expect(throws: GATTClientError.att(.insufficientAuthentication, handle: 31, request: .readRequest)) { try await client.read(handle: 31) }
        await #expect(throws: GATTClientError.att(.invalidHandle, handle: 0x300, request: .readRequest)) { try await client.read(handle: 0x300) }
        await #expect(throws: GATTClientError.att(ATTErrorCode(0x80), handle: 17, request: .writeRequest)) { try await client.write(handle: 17, value: [2]) }
        try await client.write(handle: 17, value: [1])
        // A long write refused by the validation hook at execute time.
        await #expect(throws: GATTClientError.att(.invalidAttributeValueLength, handle: 17, request: .executeWriteRequest)) {
            try await client.writeLong(handle: 17, value: [1, 1])
        }
    }

    @Test func notifications() async throws {
        let (link, client) = await makeLink()
        let hrm = try await characteristic(client, .heartRateMeasurement, in: .heartRate)
        let stream = try await client.subscribe(to: hrm)
        #expect(await link.serverState().configuration(of: 12, for: 0x40) == .notification)
        await link.serverPush(valueHandle: 12, value: [0x00, 72], indicate: false)
        await link.serverPush(valueHandle: 12, value: [0x00, 73], indicate: false)
        await link.serverPush(valueHandle: 12, value: [0x00, 74], indicate: true)  // not enabled: nothing sent
        var it = stream.makeAsyncIterator()
        #expect(await it.next() == [0x00, 72])
        #expect(await it.next() == [0x00, 73])
        try await client.unsubscribe(from: hrm)
        #expect(await it.next() == nil, "unsubscribing ends the stream")
        #expect(await link.serverState().configuration(of: 12, for: 0x40) == [])
        try await client.unsubscribe(from: hrm)  // idempotent
        let pushes = await link.wireLog().filter { !$0.fromClient && ($0.bytes[0] == 0x1B || $0.bytes[0] == 0x1D) }
        #expect(pushes.count == 2)
    }

    @Test func indicationsAreConfirmedOneAtATime() async throws {
        let (link, client) = await makeLink()
        let punch = try await characteristic(client, GATTFixture.uuid(4), in: GATTFixture.service)
        let stream = try await client.subscribe(to: punch, preferIndications: true)
        #expect(await link.serverState().configuration(of: 25, for: 0x40) == .indication)
        await link.setClientConfirms(false)
        await link.serverPush(valueHandle: 25, value: [1], indicate: true)
        await link.serverPush(valueHandle: 25, value: [2], indicate: true)
        var pushes = await link.wireLog().filter { !$0.fromClient && $0.bytes[0] == 0x1D }
        #expect(pushes.map(\.bytes) == [gattHex("1D 19 00 01")], "the second waits for a confirmation")
        await link.setClientConfirms(true)
        await link.serverPush(valueHandle: 25, value: [3], indicate: true)
        pushes = await link.wireLog().filter { !$0.fromClient && $0.bytes[0] == 0x1D }
        #expect(pushes.count == 1, "still waiting for the first confirmation")
        // The first indication's confirmation was dropped; the server times out after 30 s.
        await link.advance(to: 30)
        #expect(await link.bearers().server.isClosed)
        var it = stream.makeAsyncIterator()
        #expect(await it.next() == [1])
    }

    @Test func indicationFlowWithConfirmations() async throws {
        let (link, client) = await makeLink()
        let punch = try await characteristic(client, GATTFixture.uuid(4), in: GATTFixture.service)
        let stream = try await client.subscribe(to: punch, preferIndications: true)
        await link.serverPush(valueHandle: 25, value: [1], indicate: true)
        await link.serverPush(valueHandle: 25, value: [2], indicate: true)
        #expect(await link.confirmations() == 2)
        let flow = await link.wireLog().map(\.bytes).filter { $0[0] == 0x1D || $0[0] == 0x1E }
        #expect(flow == [gattHex("1D 19 00 01"), gattHex("1E"), gattHex("1D 19 00 02"), gattHex("1E")])
        var it = stream.makeAsyncIterator()
        #expect(await it.next() == [1])
        #expect(await it.next() == [2])
    }

    @Test func subscribeNeedsNotifyOrIndicate() async throws {
        let (_, client) = await makeLink()
        let bsl = try await characteristic(client, .bodySensorLocation, in: .heartRate)
        await #expect(throws: GATTClientError.notSubscribable(valueHandle: 15)) { _ = try await client.subscribe(to: bsl) }
    }

    @Test func mtuExchangeTakesTheSmaller() async throws {
        let (link, client) = await makeLink(clientMTU: 517, serverMTU: 100)
        #expect(try await client.exchangeMTU() == 100)
        let (c, s) = await link.bearers()
        #expect(c.mtu == 100 && s.mtu == 100)
        #expect(await link.wireLog().first?.bytes == gattHex("02 05 02"))
        // Discovery uses the larger MTU: more services per response.
        #expect(try await client.discoverPrimaryServices().count == 5)
        // A 97-byte write fits MTU − 3 at 100: no prepared write.
        try await client.write(handle: 21, value: [UInt8](repeating: 4, count: 97))
        #expect(!(await link.wireLog().contains { $0.bytes[0] == 0x16 }))
    }

    @Test func transactionTimeoutFailsTheRequest() async throws {
        let channel = ScriptedATTChannel { _ in throw ATTBearerError.timedOut }
        let client = GATTClient(channel: channel)
        await #expect(throws: ATTBearerError.timedOut) { try await client.read(handle: 3) }
    }

    @Test func longWriteEchoMismatchCancels() async throws {
        let channel = ScriptedATTChannel { pdu in
            if case let .prepareWriteRequest(h, o, v) = pdu { return .prepareWriteResponse(handle: h, offset: o, value: v.map { $0 ^ 1 }) }
            if case .executeWriteRequest = pdu { return .executeWriteResponse }
            return .errorResponse(requestOpcode: pdu.opcode, handle: 0, error: .requestNotSupported)
        }
        let client = GATTClient(channel: channel)
        await #expect(throws: GATTClientError.writeVerificationFailed(handle: 21, offset: 0)) {
            try await client.write(handle: 21, value: [UInt8](repeating: 7, count: 40))
        }
        #expect(await channel.sent.last == .executeWriteRequest(flags: 0), "the queue is cancelled")
    }

    @Test func responsesOfTheWrongKindAreErrors() async throws {
        let channel = ScriptedATTChannel { _ in .writeResponse }
        let client = GATTClient(channel: channel)
        await #expect(throws: GATTClientError.unexpectedResponse(.writeResponse, request: .readRequest)) { try await client.read(handle: 3) }
        // A server that never advances cannot make discovery loop forever: a backwards range,
        // or the same answer again, is a protocol error.
        let stuck = ScriptedATTChannel { _ in .readByGroupTypeResponse([ATTGroupValue(handle: 1, endGroupHandle: 0, value: [0x00, 0x18])]) }
        await #expect(throws: GATTClientError.protocolViolation("Read By Group Type Response (0x11) lists the backwards handle range 1–0")) {
            try await GATTClient(channel: stuck).discoverPrimaryServices()
        }
        let repeating = ScriptedATTChannel { _ in .readByGroupTypeResponse([ATTGroupValue(handle: 1, endGroupHandle: 5, value: [0x00, 0x18])]) }
        await #expect(throws: GATTClientError.protocolViolation("Read By Group Type Response (0x11) lists handles 1–5, outside the range 6–65535 asked for")) {
            try await GATTClient(channel: repeating).discoverPrimaryServices()
        }
        let malformed = ScriptedATTChannel { _ in .readByGroupTypeResponse([ATTGroupValue(handle: 1, endGroupHandle: 5, value: [0x00])]) }
        await #expect(throws: GATTClientError.self) { try await GATTClient(channel: malformed).discoverPrimaryServices() }
    }
}

/// A channel answering each request with a closure, recording what was sent.
actor ScriptedATTChannel: ATTRequestChannel {
    let answer: @Sendable (ATTPDU) throws -> ATTPDU
    private(set) var sent: [ATTPDU] = []
    init(_ answer: @escaping @Sendable (ATTPDU) throws -> ATTPDU) { self.answer = answer }
    func request(_ pdu: ATTPDU) async throws -> ATTPDU {
        sent.append(pdu)
        return try answer(pdu)
    }
    func send(command: ATTPDU) async throws { sent.append(command) }
    func currentMTU() async -> Int { 23 }
}

/// Forwards to another channel after yielding, so concurrent procedures get to interleave.
struct YieldingChannel: ATTRequestChannel {
    let inner: any ATTRequestChannel
    init(_ inner: any ATTRequestChannel) { self.inner = inner }
    func request(_ pdu: ATTPDU) async throws -> ATTPDU {
        for _ in 0..<3 { await Task.yield() }
        return try await inner.request(pdu)
    }
    func send(command: ATTPDU) async throws { try await inner.send(command: command) }
    func currentMTU() async -> Int { await inner.currentMTU() }
}

/// Answers every request with a random PDU (half of them shaped like the expected response).
actor RandomATTChannel: ATTRequestChannel {
    private var rng: GATTSeededRandom
    private(set) var requests = 0
    init(seed: UInt64) { rng = GATTSeededRandom(seed: seed) }
    func request(_ pdu: ATTPDU) async throws -> ATTPDU {
        requests += 1
        var bytes = rng.bytes(upTo: 22)
        if Bool.random(using: &rng), let expected = pdu.opcode.responseOpcode {
            bytes = [expected.rawValue] + bytes
        }
        if let decoded = try? ATTPDU(bytes: bytes) { return decoded }
        return .errorResponse(requestOpcode: pdu.opcode, handle: 0, error: .attributeNotFound)
    }
    func send(command: ATTPDU) async throws {}
    func currentMTU() async -> Int { 23 }
}

@Suite struct GATTClientRobustnessTests {
    /// A server answering nonsense: every procedure ends with a value or an error, never a trap
    /// or an endless loop.
    @Test func randomResponsesNeverTrapOrHang() async throws {
        for seed in 0..<300 as Range<UInt64> {
            let channel = RandomATTChannel(seed: seed)
            let client = GATTClient(channel: channel)
            let service = GATTServiceRange(uuid: .heartRate, startHandle: 1, endHandle: 0xFFFF)
            let characteristic = GATTCharacteristic(uuid: .heartRateMeasurement, declarationHandle: 1, valueHandle: 2, endHandle: 0xFFFF, properties: [.notify, .indicate])
            _ = try? await client.discoverPrimaryServices()
            _ = try? await client.discoverPrimaryServices(uuid: .heartRate)
            _ = try? await client.findIncludedServices(in: service)
            _ = try? await client.discoverCharacteristics(in: service)
            _ = try? await client.discoverDescriptors(of: characteristic)
            _ = try? await client.read(handle: 2)
            _ = try? await client.readMultipleVariable(handles: [1, 2])
            _ = try? await client.write(handle: 2, value: [UInt8](repeating: 1, count: 50))
            _ = try? await client.subscribe(to: characteristic)
            #expect(await channel.requests < 200_000)
        }
    }
}
