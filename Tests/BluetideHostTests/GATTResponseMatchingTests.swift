import BluetideBase
import BluetideHCI
import Testing
@testable import BluetideHost

/// A response must answer the request outstanding: its opcode, its handle range. A hostile or
/// broken server that sends a response twice, sends one nobody asked for, lists a backwards
/// range or a value handle that is not its characteristic's gets a protocol error, never a
/// result made of the wrong answer.
@Suite struct GATTResponseMatchingTests {
    typealias Procedures = GATTProcedureTests
    typealias Core = HostCoreGATTClientTests

    static func violation<T>(_ run: GATTProcedureTests.Run<T>) -> String? {
        guard case let .protocolViolation(text)? = Procedures.error(run) else { return nil }
        return text
    }

    // MARK: Handle ranges in discovery responses

    @Test func backwardsServiceRangesAreProtocolErrors() {
        // 180D over handles 10–5, then over 1–0.
        let backwards = Procedures.run(PrimaryServiceDiscovery(), ["11 06 0A 00 05 00 0D 18"])
        #expect(Self.violation(backwards) == "Read By Group Type Response (0x11) lists the backwards handle range 10–5")
        let empty = Procedures.run(PrimaryServiceDiscovery(), ["11 06 01 00 00 00 0D 18"])
        #expect(Self.violation(empty) == "Read By Group Type Response (0x11) lists the backwards handle range 1–0")
        let byUUID = Procedures.run(PrimaryServiceDiscovery(uuid: .heartRate), ["07 0A 00 05 00"])
        #expect(Self.violation(byUUID) == "Find By Type Value Response (0x07) lists the backwards handle range 10–5")
    }

    @Test func aServiceResponseSentTwiceDoesNotListTheServiceTwice() {
        // The answer to "from handle 1" comes again as the answer to "from handle 6".
        let run = Procedures.run(PrimaryServiceDiscovery(), ["11 06 01 00 05 00 00 18", "11 06 01 00 05 00 00 18"])
        #expect(run.requests == ["10 01 00 FF FF 00 28", "10 06 00 FF FF 00 28"])
        #expect(Self.violation(run) == "Read By Group Type Response (0x11) lists handles 1–5, outside the range 6–65535 asked for")
        // Overlapping entries in one response.
        let overlapping = Procedures.run(PrimaryServiceDiscovery(), ["11 06 01 00 05 00 00 18 04 00 09 00 01 18"])
        #expect(Self.violation(overlapping) == "Read By Group Type Response (0x11) lists handles 4–9, overlapping or before the range ending at 5")
    }

    @Test func valueHandlesZeroAndFFFFAndOnesNotRightAfterTheDeclarationAreProtocolErrors() {
        let service = GATTServiceRange(uuid: .battery, startHandle: 0x0A, endHandle: 0x11)
        for (value, expected) in [("00 00", 0), ("FF FF", 0xFFFF), ("0D 00", 0x0D)] {
            let run = Procedures.run(CharacteristicDiscovery(in: service), ["09 07 0B 00 02 \(value) 19 2A"])
            #expect(Self.violation(run) == "the characteristic declared at handle 11 gives value handle \(expected); it must be 12, the next one")
        }
        let fine = Procedures.run(CharacteristicDiscovery(in: service), ["09 07 0B 00 02 0C 00 19 2A", Procedures.notFound])
        #expect((try? Procedures.value(fine))?.map(\.valueHandle) == [0x0C])
    }

    @Test func declarationsAndDescriptorsOutsideTheRangeAskedForAreProtocolErrors() {
        let service = GATTServiceRange(uuid: .battery, startHandle: 0x0A, endHandle: 0x11)
        // A declaration past the service's end.
        let past = Procedures.run(CharacteristicDiscovery(in: service), ["09 07 20 00 02 21 00 19 2A"])
        #expect(Self.violation(past) == "Read By Type Response (0x09) lists handle 32, outside the range 10–17 asked for")
        // A descriptor list that repeats the previous answer.
        let hrm = GATTCharacteristic(uuid: .heartRateMeasurement, declarationHandle: 0x0B, valueHandle: 0x0C, endHandle: 0x0E, properties: .notify)
        let repeated = Procedures.run(DescriptorDiscovery(of: hrm), ["05 01 0D 00 02 29", "05 01 0D 00 02 29"])
        #expect(Self.violation(repeated) == "Find Information Response (0x05) lists handle 13, outside the range 14–14 asked for")
        // Handles that do not rise.
        let falling = Procedures.run(DescriptorDiscovery(of: hrm), ["05 01 0E 00 02 29 0D 00 01 29"])
        #expect(Self.violation(falling) == "Find Information Response (0x05) lists handle 13 after handle 14 (handles must rise)")
    }

    // MARK: The bearer: responses that answer nothing, or another request

    @Test func aResponseWhenNothingIsOutstandingClosesTheBearer() {
        var bearer = ATTBearer()
        let text = "the device sent a Read By Group Type Response (0x11) that answers no request"
        #expect(bearer.receive(gattHex("11 06 01 00 FF FF 0D 18"), now: 1) == [.closed(.protocolViolation(text))])
        #expect(bearer.isClosed)
        let (id, refused) = bearer.enqueue(request: .readRequest(handle: 3), now: 2)
        #expect(refused == [.failed(id, .protocolViolation(text))])
        #expect(ATTBearerError.protocolViolation(text).description == "protocol error: " + text)
    }

    @Test func aResponseToAnotherRequestFailsTheOutstandingOneAndClosesTheBearer() {
        var bearer = ATTBearer()
        let (read, _) = bearer.enqueue(request: .readRequest(handle: 3), now: 0)
        let (queued, _) = bearer.enqueue(request: .readRequest(handle: 4), now: 0)
        let text = "the device answered a Read Request (0x0A) with a Write Response (0x13)"
        #expect(bearer.receive(gattHex("13"), now: 1) == [
            .failed(read, .protocolViolation(text)), .failed(queued, .protocolViolation(text)), .closed(.protocolViolation(text)),
        ])
        // An Error Response naming another request is no answer either.
        var other = ATTBearer()
        let (write, _) = other.enqueue(request: .writeRequest(handle: 3, value: [1]), now: 0)
        let errorText = "the device answered a Write Request (0x12) with an Error Response (0x01) for a Read Request (0x0A)"
        #expect(other.receive(gattHex("01 0A 03 00 02"), now: 1) == [.failed(write, .protocolViolation(errorText)), .closed(.protocolViolation(errorText))])
    }

    @Test func aResponseReadBeforeTheRequestLeftIsNotItsAnswer() {
        var bearer = ATTBearer(tracksSending: true)
        let (first, _) = bearer.enqueue(request: .readRequest(handle: 3), now: 0)
        bearer.outputsSent()
        let (second, _) = bearer.enqueue(request: .readRequest(handle: 5), now: 0)
        #expect(bearer.receive(gattHex("0B 01"), now: 1) == [.response(first, .readResponse(value: [1])), .send(gattHex("0A 05 00"))])
        // The same answer again, in the same batch: the second request has not left yet.
        let text = "the device sent a Read Response (0x0B) before our Read Request (0x0A) had left: a second answer to an earlier request"
        #expect(bearer.receive(gattHex("0B 01"), now: 1) == [.failed(second, .protocolViolation(text)), .closed(.protocolViolation(text))])
    }

    // MARK: In the host core, as a hostile peer would send them

    @Test func aReadAnsweredTwiceInOneBatchDoesNotGiveTheNextReadItsValue() throws {
        var h = Core.harness()
        let battery = h.id()
        let next = h.id()
        _ = h.feed(.gattProcedure(battery, handle: 0x40, .read(handle: 3)))
        _ = h.feed(.gattProcedure(next, handle: 0x40, .read(handle: 5)))
        let out = h.receive(Core.peer([0x0B, 0x01]), Core.peer([0x0B, 0x01]))
        #expect(try Core.results(out).first { $0.0 == battery }?.1.get() == .value([1]))
        guard case let .protocolViolation(text)? = Core.failure(out, next) as? ATTBearerError else {
            Issue.record("the second read should fail with a protocol error, got \(Core.results(out))")
            return
        }
        #expect(text.contains("a second answer to an earlier request"))
        // Nothing more is asked on this bearer.
        let later = h.id()
        #expect(Core.failure(h.feed(.gattProcedure(later, handle: 0x40, .read(handle: 7))), later) as? ATTBearerError == .protocolViolation(text))
    }

    @Test func aDiscoveryResponseRepeatedLaterFailsTheDiscoveryAndClosesTheBearer() {
        var h = Core.harness()
        let discovery = h.id()
        _ = h.feed(.gattProcedure(discovery, handle: 0x40, .discoverPrimaryServices(uuid: nil)))
        var out = h.receive(Core.peer([0x11, 0x06, 0x01, 0x00, 0x05, 0x00, 0x00, 0x18]))
        #expect(Core.att(out) == [[0x10, 0x06, 0x00, 0xFF, 0xFF, 0x00, 0x28]])
        out = h.receive(Core.peer([0x11, 0x06, 0x01, 0x00, 0x05, 0x00, 0x00, 0x18]))
        let text = "Read By Group Type Response (0x11) lists handles 1–5, outside the range 6–65535 asked for"
        #expect(Core.failure(out, discovery) as? GATTClientError == .protocolViolation(text))
        #expect(h.core.links[0x40]?.bearer.closedReason == .protocolViolation(text))
    }

    @Test func anUnsolicitedResponseOnAnIdleLinkFailsTheNextProcedure() {
        var h = Core.harness()
        _ = h.receive(Core.peer([0x11, 0x06, 0x01, 0x00, 0xFF, 0xFF, 0x0D, 0x18]))
        let discovery = h.id()
        let out = h.feed(.gattProcedure(discovery, handle: 0x40, .discoverPrimaryServices(uuid: nil)))
        #expect(Core.att(out).isEmpty)
        #expect(Core.failure(out, discovery) as? ATTBearerError
            == .protocolViolation("the device sent a Read By Group Type Response (0x11) that answers no request"))
    }
}
