import BluetideBase
import Testing
@testable import BluetideHost

/// The GATT client procedures alone, as state machines: requests checked byte for byte,
/// responses fed as bytes. No bearer, no server, no concurrency.
@Suite struct GATTProcedureTests {
    /// What a procedure did with a script of exchanges.
    struct Run<Output> {
        /// The requests it sent, as hex.
        var requests: [String] = []
        /// Its result, nil when it still wanted to send when the script ended.
        var result: Result<Output, any Error>?
    }

    /// Starts `procedure` and answers its requests with `responses` (hex), in order; stops when
    /// it finishes or the responses run out.
    static func run<P: GATTProcedure>(_ procedure: P, _ responses: [String]) -> Run<P.Output> {
        var procedure = procedure
        var run = Run<P.Output>()
        var step = procedure.start()
        var answers = responses[...]
        while true {
            switch step {
            case let .finished(result):
                run.result = result
                return run
            case let .send(pdu):
                run.requests.append(hex(pdu.bytes))
                guard let answer = answers.popFirst() else { return run }
                do {
                    step = procedure.handle(response: try ATTPDU(bytes: gattHex(answer)))
                } catch {
                    Issue.record("bad response vector \(answer): \(error)")
                    return run
                }
            }
        }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { byte in
            let digits = String(byte, radix: 16, uppercase: true)
            return digits.count == 1 ? "0" + digits : digits
        }.joined(separator: " ")
    }

    static func value<T>(_ run: Run<T>) throws -> T {
        let result = try #require(run.result, "the procedure did not finish; it sent \(run.requests)")
        return try result.get()
    }

    static func error<T>(_ run: Run<T>) -> GATTClientError? {
        guard case let .failure(error)? = run.result else { return nil }
        return error as? GATTClientError
    }

    static let notFound = "01 10 0A 00 0A"

    // MARK: MTU

    @Test func exchangeMTUOffersAndReturnsTheServersMTU() throws {
        let run = Self.run(ExchangeMTU(clientMTU: 517), ["03 64 00"])
        #expect(run.requests == ["02 05 02"])
        #expect(try Self.value(run) == 100)
        #expect(Self.run(ExchangeMTU(clientMTU: 70_000), []).requests == ["02 FF FF"], "clamped to 16 bits")
        #expect(Self.error(Self.run(ExchangeMTU(clientMTU: 23), ["01 02 00 00 06"])) == .att(.requestNotSupported, handle: 0, request: .exchangeMTURequest))
    }

    // MARK: Services

    @Test func primaryServicesUntilAttributeNotFound() throws {
        let run = Self.run(PrimaryServiceDiscovery(), [
            "11 06 01 00 05 00 00 18 06 00 09 00 01 18",
            "11 14 0A 00 11 00 F0 DE BC 9A 78 56 34 12 34 12 78 56 34 12 78 56",
            "01 10 12 00 0A",
        ])
        #expect(run.requests == ["10 01 00 FF FF 00 28", "10 0A 00 FF FF 00 28", "10 12 00 FF FF 00 28"])
        let services = try Self.value(run)
        #expect(services.map(\.startHandle) == [1, 6, 10])
        #expect(services.map(\.endHandle) == [5, 9, 17])
        #expect(services[0].uuid == .genericAccess && services[1].uuid == .genericAttribute)
        #expect(services[2].uuid == (try BluetoothUUID("56781234-5678-1234-1234-56789ABCDEF0")))
    }

    @Test func primaryServicesStopAtTheEndOfTheHandleSpaceAndOnAServerThatDoesNotAdvance() throws {
        let last = Self.run(PrimaryServiceDiscovery(), ["11 06 01 00 FF FF 0D 18"])
        #expect(last.requests.count == 1)
        #expect(try Self.value(last).map(\.endHandle) == [0xFFFF])
        // A server that lists a range ending before it starts does not advance the walk: that
        // is a protocol error (GATTResponseMatchingTests), not a service.
        let stuck = Self.run(PrimaryServiceDiscovery(), ["11 06 01 00 00 00 0D 18"])
        #expect(stuck.requests.count == 1)
        #expect(Self.error(stuck) == .protocolViolation("Read By Group Type Response (0x11) lists the backwards handle range 1–0"))
    }

    @Test func primaryServiceErrorsNameTheRequest() {
        #expect(Self.error(Self.run(PrimaryServiceDiscovery(), ["01 10 01 00 02"])) == .att(.readNotPermitted, handle: 1, request: .readByGroupTypeRequest))
        #expect(Self.error(Self.run(PrimaryServiceDiscovery(), ["13"])) == .unexpectedResponse(.writeResponse, request: .readByGroupTypeRequest))
        // A 3-byte UUID cannot be.
        guard case .malformedResponse? = Self.error(Self.run(PrimaryServiceDiscovery(), ["11 07 01 00 05 00 00 18 00"])) else {
            Issue.record("expected a malformed response")
            return
        }
    }

    @Test func primaryServicesByUUID() throws {
        let run = Self.run(PrimaryServiceDiscovery(uuid: .heartRate), ["07 0A 00 11 00", Self.notFound])
        #expect(run.requests == ["06 01 00 FF FF 00 28 0D 18", "06 12 00 FF FF 00 28 0D 18"])
        #expect(try Self.value(run) == [GATTServiceRange(uuid: .heartRate, startHandle: 10, endHandle: 17)])
        #expect(try Self.value(Self.run(PrimaryServiceDiscovery(uuid: .battery), [Self.notFound])).isEmpty)
    }

    // MARK: Included services, characteristics, descriptors

    @Test func includedServicesWith16BitUUIDsAndWithA128BitUUIDReadFromTheDeclaration() throws {
        let service = GATTServiceRange(uuid: .heartRate, startHandle: 0x12, endHandle: 0x23)
        let short = Self.run(IncludedServiceDiscovery(in: service, mtu: 23), ["09 08 13 00 24 00 27 00 0F 18", Self.notFound])
        #expect(short.requests == ["08 12 00 23 00 02 28", "08 14 00 23 00 02 28"])
        #expect(try Self.value(short) == [GATTIncludedService(
            declarationHandle: 0x13, service: GATTServiceRange(uuid: .battery, startHandle: 0x24, endHandle: 0x27))])

        let long = Self.run(IncludedServiceDiscovery(in: service, mtu: 23), [
            "09 06 13 00 30 00 33 00",
            "0B F0 DE BC 9A 78 56 34 12 34 12 78 56 34 12 78 56",
            Self.notFound,
        ])
        #expect(long.requests == ["08 12 00 23 00 02 28", "0A 30 00", "08 14 00 23 00 02 28"])
        let uuid = try BluetoothUUID("56781234-5678-1234-1234-56789ABCDEF0")
        #expect(try Self.value(long).map(\.service) == [GATTServiceRange(uuid: uuid, startHandle: 0x30, endHandle: 0x33)])
        // The UUID read failing fails the discovery with the read's error.
        let refused = Self.run(IncludedServiceDiscovery(in: service, mtu: 23), ["09 06 13 00 30 00 33 00", "01 0A 30 00 02"])
        #expect(Self.error(refused) == .att(.readNotPermitted, handle: 0x30, request: .readRequest))
        // An empty range sends nothing.
        let empty = Self.run(IncludedServiceDiscovery(in: GATTServiceRange(uuid: .battery, startHandle: 5, endHandle: 4), mtu: 23), [])
        #expect(empty.requests.isEmpty)
        #expect(try Self.value(empty).isEmpty)
    }

    @Test func characteristicsEndBeforeTheNextDeclaration() throws {
        let service = GATTServiceRange(uuid: .heartRate, startHandle: 0x0A, endHandle: 0x11)
        let run = Self.run(CharacteristicDiscovery(in: service), [
            "09 07 0B 00 10 0C 00 37 2A 0E 00 02 0F 00 38 2A",
            "09 07 10 00 08 11 00 39 2A",
            Self.notFound,
        ])
        #expect(run.requests == ["08 0A 00 11 00 03 28", "08 0F 00 11 00 03 28", "08 11 00 11 00 03 28"])
        let found = try Self.value(run)
        #expect(found.map(\.uuid) == [.heartRateMeasurement, .bodySensorLocation, .heartRateControlPoint])
        #expect(found.map(\.valueHandle) == [0x0C, 0x0F, 0x11])
        #expect(found.map(\.endHandle) == [0x0D, 0x0F, 0x11])
        #expect(found[0].properties == .notify)
        // A declaration too short for its value handle.
        guard case .malformedResponse? = Self.error(Self.run(CharacteristicDiscovery(in: service), ["09 04 0B 00 10 0C"])) else {
            Issue.record("expected a malformed response")
            return
        }
    }

    @Test func descriptorsAfterTheValueHandle() throws {
        let hrm = GATTCharacteristic(uuid: .heartRateMeasurement, declarationHandle: 0x0B, valueHandle: 0x0C, endHandle: 0x0E, properties: .notify)
        let run = Self.run(DescriptorDiscovery(of: hrm), ["05 01 0D 00 02 29", "05 01 0E 00 01 29"])
        #expect(run.requests == ["04 0D 00 0E 00", "04 0E 00 0E 00"])
        #expect(try Self.value(run) == [
            GATTDescriptor(uuid: .clientCharacteristicConfiguration, handle: 0x0D),
            GATTDescriptor(uuid: .characteristicUserDescription, handle: 0x0E),
        ])
        var last = hrm
        last.endHandle = 0x0C
        let none = Self.run(DescriptorDiscovery(of: last), [])
        #expect(none.requests.isEmpty, "no room for descriptors: nothing is asked")
        #expect(try Self.value(none).isEmpty)
        last.valueHandle = 0xFFFF
        last.endHandle = 0xFFFF
        #expect(Self.run(DescriptorDiscovery(of: last), []).requests.isEmpty, "a value handle at 0xFFFF leaves no room")
    }

    @Test func theWholeDatabaseInHandleOrder() throws {
        let run = Self.run(DatabaseDiscovery(), [
            "11 06 01 00 06 00 0D 18",  // one service, 1…6
            Self.notFound,
            "09 07 02 00 12 03 00 37 2A 05 00 02 06 00 38 2A",  // two characteristics
            Self.notFound,
            "05 01 04 00 02 29",  // the first one's CCCD; the second has no room for descriptors
        ])
        #expect(run.requests == [
            "10 01 00 FF FF 00 28", "10 07 00 FF FF 00 28",
            "08 01 00 06 00 03 28", "08 06 00 06 00 03 28",
            "04 04 00 04 00",
        ])
        let database = try Self.value(run)
        #expect(database.count == 1)
        #expect(database[0].characteristics.map(\.characteristic.valueHandle) == [3, 6])
        #expect(database[0].characteristics.map(\.characteristic.endHandle) == [4, 6])
        #expect(database[0].characteristics.map(\.descriptors) == [[GATTDescriptor(uuid: .clientCharacteristicConfiguration, handle: 4)], []])
        // A failure anywhere fails the whole discovery.
        let failed = Self.run(DatabaseDiscovery(), ["11 06 01 00 06 00 0D 18", Self.notFound, "01 08 01 00 0E"])
        #expect(Self.error(failed) == .att(.unlikelyError, handle: 1, request: .readByTypeRequest))
    }

    // MARK: Reads

    @Test func aShortReadIsOneRequest() throws {
        let run = Self.run(ReadValue(handle: 3, mtu: 23), ["0B 01 02"])
        #expect(run.requests == ["0A 03 00"])
        #expect(try Self.value(run) == [1, 2])
        #expect(Self.error(Self.run(ReadValue(handle: 3, mtu: 23), ["01 0A 03 00 02"])) == .att(.readNotPermitted, handle: 3, request: .readRequest))
    }

    @Test func aLongReadUsesReadBlobUntilAShortPart() throws {
        let full = String(repeating: " AA", count: 22)
        let run = Self.run(ReadValue(handle: 0x15, mtu: 23), ["0B" + full, "0D" + full, "0D 01 02 03"])
        #expect(run.requests == ["0A 15 00", "0C 15 00 16 00", "0C 15 00 2C 00"])
        #expect(try Self.value(run) == [UInt8](repeating: 0xAA, count: 44) + [1, 2, 3])
        // Attribute Not Long and Invalid Offset end the read with what was read.
        for code in ["0B", "07"] {
            let ended = Self.run(ReadValue(handle: 0x15, mtu: 23), ["0B" + full, "01 0C 15 00 " + code])
            #expect(try Self.value(ended).count == 22)
        }
        // Any other error fails it.
        let failed = Self.run(ReadValue(handle: 0x15, mtu: 23), ["0B" + full, "01 0C 15 00 0E"])
        #expect(Self.error(failed) == .att(.unlikelyError, handle: 0x15, request: .readBlobRequest))
        // A part exactly MTU − 1 long asks again; an empty part ends.
        let exact = Self.run(ReadValue(handle: 0x15, mtu: 23), ["0B" + full, "0D"])
        #expect(exact.requests.count == 2)
        #expect(try Self.value(exact).count == 22)
    }

    @Test func readMultipleAndReadMultipleVariable() throws {
        let multiple = Self.run(ReadMultiple(handles: [15, 33, 5]), ["0F 01 09 41 03"])
        #expect(multiple.requests == ["0E 0F 00 21 00 05 00"])
        #expect(try Self.value(multiple) == [1, 9, 0x41, 0x03])
        let variable = Self.run(ReadMultipleVariable(handles: [15, 5]), ["21 01 00 01 02 00 41 03"])
        #expect(variable.requests == ["20 0F 00 05 00"])
        #expect(try Self.value(variable) == [[1], [0x41, 0x03]])
        #expect(Self.error(Self.run(ReadMultiple(handles: [1, 2]), ["0B 00"])) == .unexpectedResponse(.readResponse(value: [0]), request: .readMultipleRequest))
    }

    // MARK: Writes

    @Test func aShortWriteIsOneWriteRequest() throws {
        let run = Self.run(WriteValue(handle: 0x15, value: [1, 2, 3], mtu: 23), ["13"])
        #expect(run.requests == ["12 15 00 01 02 03"])
        #expect(throws: Never.self) { try Self.value(run) }
        let fits = Self.run(WriteValue(handle: 0x15, value: [UInt8](repeating: 7, count: 20), mtu: 23), ["13"])
        #expect(fits.requests.count == 1, "MTU − 3 octets still fit one Write Request")
    }

    @Test func aLongWritePreparesPartsChecksEchoesAndExecutes() throws {
        let value = (0..<40).map { UInt8($0) }
        let parts = [Array(value[0..<18]), Array(value[18..<36]), Array(value[36...])]
        let prepares = zip(parts, [0, 18, 36]).map { part, offset in
            Self.hex([0x16, 0x15, 0x00, UInt8(offset), 0x00] + part)
        }
        let echoes = prepares.map { "17" + $0.dropFirst(2) }
        let run = Self.run(WriteValue(handle: 0x15, value: value, mtu: 23), echoes + ["19"])
        #expect(run.requests == prepares + ["18 01"])
        #expect(throws: Never.self) { try Self.value(run) }
        // From an offset, the parts' offsets follow it.
        let offset = Self.run(LongWrite(handle: 0x15, value: [1, 2], offset: 0x0100, mtu: 23), ["17 15 00 00 01 01 02", "19"])
        #expect(offset.requests == ["16 15 00 00 01 01 02", "18 01"])
    }

    @Test func aLongWriteCancelsTheServersQueueOnAnyProblem() {
        let value = [UInt8](repeating: 7, count: 40)
        let first = "16 15 00 00 00" + String(repeating: " 07", count: 18)
        // An echo that differs.
        let mismatch = Self.run(WriteValue(handle: 0x15, value: value, mtu: 23), ["17 15 00 00 00" + String(repeating: " 06", count: 18), "19"])
        #expect(mismatch.requests == [first, "18 00"])
        #expect(Self.error(mismatch) == .writeVerificationFailed(handle: 0x15, offset: 0))
        // An echo for another offset.
        let moved = Self.run(WriteValue(handle: 0x15, value: value, mtu: 23), ["17 15 00 01 00" + String(repeating: " 07", count: 18), "19"])
        #expect(Self.error(moved) == .writeVerificationFailed(handle: 0x15, offset: 0))
        // An Error Response: the cancel's own answer (even an error) does not change the outcome.
        let refused = Self.run(WriteValue(handle: 0x15, value: value, mtu: 23), ["01 16 15 00 09", "01 18 00 00 0E"])
        #expect(refused.requests == [first, "18 00"])
        #expect(Self.error(refused) == .att(.prepareQueueFull, handle: 0x15, request: .prepareWriteRequest))
        // A refused execute is the end: nothing is left to cancel.
        let executeRefused = Self.run(LongWrite(handle: 0x15, value: [1], mtu: 23), ["17 15 00 00 00 01", "01 18 15 00 0D"])
        #expect(executeRefused.requests == ["16 15 00 00 00 01", "18 01"])
        #expect(Self.error(executeRefused) == .att(.invalidAttributeValueLength, handle: 0x15, request: .executeWriteRequest))
    }

    @Test func aFailureBelowATTMidLongWriteStillCancels() {
        var write = LongWrite(handle: 0x15, value: [UInt8](repeating: 1, count: 40), mtu: 23)
        _ = write.start()
        guard case let .send(cancel) = write.handle(failure: ATTBearerError.timedOut) else {
            Issue.record("expected the cancel")
            return
        }
        #expect(cancel == .executeWriteRequest(flags: 0))
        // The cancel failing too ends the write with the first failure.
        guard case let .finished(.failure(error)) = write.handle(failure: ATTBearerError.bearerClosed) else {
            Issue.record("expected the end")
            return
        }
        #expect(error as? ATTBearerError == .timedOut)
    }

    // MARK: Subscriptions

    @Test func subscribingFindsTheCCCDAndWritesIt() throws {
        let hrm = GATTCharacteristic(uuid: .heartRateMeasurement, declarationHandle: 0x0B, valueHandle: 0x0C, endHandle: 0x0D, properties: [.notify, .indicate])
        let notify = Self.run(SubscriptionChange(.subscribe(preferIndications: false), of: hrm, mtu: 23), ["05 01 0D 00 02 29", "13"])
        #expect(notify.requests == ["04 0D 00 0D 00", "12 0D 00 01 00"])
        #expect(try Self.value(notify) == .notification)
        let indicate = Self.run(SubscriptionChange(.subscribe(preferIndications: true), of: hrm, mtu: 23), ["05 01 0D 00 02 29", "13"])
        #expect(indicate.requests.last == "12 0D 00 02 00")
        #expect(try Self.value(indicate) == .indication)
        let off = Self.run(SubscriptionChange(.unsubscribe, of: hrm, mtu: 23), ["05 01 0D 00 02 29", "13"])
        #expect(off.requests.last == "12 0D 00 00 00")
        // Indications when the characteristic cannot notify.
        var indicateOnly = hrm
        indicateOnly.properties = .indicate
        let only = Self.run(SubscriptionChange(.subscribe(preferIndications: false), of: indicateOnly, mtu: 23), ["05 01 0D 00 02 29", "13"])
        #expect(only.requests.last == "12 0D 00 02 00")
    }

    @Test func subscribingNeedsNotifyOrIndicateAndACCCD() {
        let plain = GATTCharacteristic(uuid: .bodySensorLocation, declarationHandle: 0x0E, valueHandle: 0x0F, endHandle: 0x10, properties: .read)
        let refused = Self.run(SubscriptionChange(.subscribe(preferIndications: false), of: plain, mtu: 23), [])
        #expect(refused.requests.isEmpty, "refused before anything is sent")
        #expect(Self.error(refused) == .notSubscribable(valueHandle: 0x0F))
        var notifying = plain
        notifying.properties = .notify
        let noCCCD = Self.run(SubscriptionChange(.subscribe(preferIndications: false), of: notifying, mtu: 23), ["05 01 10 00 01 29"])
        #expect(Self.error(noCCCD) == .noClientConfiguration(valueHandle: 0x0F))
        let noRoom = Self.run(SubscriptionChange(.unsubscribe, of: GATTCharacteristic(
            uuid: .batteryLevel, declarationHandle: 1, valueHandle: 2, endHandle: 2, properties: .notify), mtu: 23), [])
        #expect(noRoom.requests.isEmpty)
        #expect(Self.error(noRoom) == .noClientConfiguration(valueHandle: 2))
    }

    // MARK: The erased form

    @Test func aRequestBuildsItsProcedureWithTheMTU() throws {
        let full = String(repeating: " 55", count: 99)
        let run = Self.run(GATTProcedureRequest.read(handle: 3).procedure(mtu: 100), ["0B" + full, "0D 01"])
        #expect(run.requests == ["0A 03 00", "0C 03 00 63 00"])
        #expect(try Self.value(run) == .value([UInt8](repeating: 0x55, count: 99) + [1]))
        let write = Self.run(GATTProcedureRequest.write(handle: 3, value: [1]).procedure(mtu: 23), ["13"])
        #expect(try Self.value(write) == .written)
    }
}
