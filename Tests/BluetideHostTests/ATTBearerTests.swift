import BluetideBase
import Testing
@testable import BluetideHost

@Suite struct ATTBearerTests {
    private func sent(_ events: [ATTBearerEvent]) -> [[UInt8]] {
        events.compactMap { if case let .send(b) = $0 { return b } else { return nil } }
    }

    @Test func oneOutstandingRequestOthersQueuedAndMatched() {
        var bearer = ATTBearer()
        let (first, e1) = bearer.enqueue(request: .readRequest(handle: 3), now: 0)
        #expect(sent(e1) == [gattHex("0A 03 00")])
        let (second, e2) = bearer.enqueue(request: .readRequest(handle: 5), now: 1)
        #expect(e2.isEmpty, "queued behind the outstanding request")
        #expect(bearer.queuedRequestCount == 1)
        // (A response of another kind, or one when nothing is outstanding, is a protocol
        // violation that closes the bearer: GATTResponseMatchingTests.)
        let e3 = bearer.receive(gattHex("0B 64"), now: 2)
        #expect(e3 == [.response(first, .readResponse(value: [100])), .send(gattHex("0A 05 00"))])
        // An Error Response matches by its request opcode field.
        let e4 = bearer.receive(gattHex("01 0A 05 00 02"), now: 3)
        #expect(e4 == [.response(second, .errorResponse(requestOpcode: .readRequest, handle: 5, error: .readNotPermitted))])
        // Nothing outstanding now: a further response is not delivered; it closes the bearer.
        let text = "the device sent a Read Response (0x0B) that answers no request"
        #expect(bearer.receive(gattHex("0B 01"), now: 4) == [.closed(.protocolViolation(text))])
    }

    @Test func errorResponseForAnotherOpcodeFailsTheRequest() {
        var bearer = ATTBearer()
        let (id, _) = bearer.enqueue(request: .readRequest(handle: 3), now: 0)
        let bytes = gattHex("01 12 03 00 03")
        let text = "the device answered a Read Request (0x0A) with an Error Response (0x01) for a Write Request (0x12)"
        #expect(bearer.receive(bytes, now: 1) == [.failed(id, .protocolViolation(text)), .closed(.protocolViolation(text))])
    }

    @Test func transactionTimeoutClosesTheBearer() throws {
        var bearer = ATTBearer()
        let (first, _) = bearer.enqueue(request: .readRequest(handle: 3), now: 10)
        let (second, _) = bearer.enqueue(request: .readRequest(handle: 4), now: 11)
        #expect(bearer.nextDeadline == 40)
        #expect(bearer.tick(now: 39.999).isEmpty)
        let events = bearer.tick(now: 40)
        #expect(events == [.failed(first, .timedOut), .failed(second, .bearerClosed), .closed(.timedOut)])
        #expect(bearer.isClosed)
        // The spec forbids further PDUs on a timed-out bearer.
        let (third, refused) = bearer.enqueue(request: .readRequest(handle: 3), now: 41)
        #expect(refused == [.failed(third, .bearerClosed)])
        #expect(throws: ATTBearerError.bearerClosed) { try bearer.send(command: .writeCommand(handle: 3, value: [1])) }
        #expect(throws: ATTBearerError.bearerClosed) { try bearer.notify(handle: 3, value: [1]) }
        #expect(bearer.receive(gattHex("0B 64"), now: 42) == [.ignored(gattHex("0B 64"), reason: .closed)])
        #expect(bearer.tick(now: 100).isEmpty)
    }

    @Test func closeFailsEverything() {
        var bearer = ATTBearer()
        let (a, _) = bearer.enqueue(request: .readRequest(handle: 3), now: 0)
        let (b, _) = bearer.indicate(handle: 9, value: [1], now: 0)
        #expect(bearer.close() == [.failed(a, .bearerClosed), .failed(b, .bearerClosed)])
        #expect(bearer.close().isEmpty)
    }

    @Test func mtuExchangeAsClient() {
        var bearer = ATTBearer(localMTU: 517)
        let (id, e) = bearer.exchangeMTU(now: 0)
        #expect(sent(e) == [gattHex("02 05 02")])
        let r = bearer.receive(gattHex("03 F7 00"), now: 1)
        #expect(r == [.mtuChanged(247), .response(id, .exchangeMTUResponse(serverMTU: 247))])
        #expect(bearer.mtu == 247)
        #expect(bearer.mtuExchanged)
    }

    /// Pins a fix: a client that offers less than its local MTU uses the smaller value, as the
    /// server does (it used to take its local MTU, so the two sides disagreed).
    @Test func mtuExchangeAsClientOfferingLessThanItsLocalMTU() {
        var bearer = ATTBearer(localMTU: 517)
        let (id, e) = bearer.enqueue(request: .exchangeMTURequest(clientMTU: 185), now: 0)
        #expect(sent(e) == [gattHex("02 B9 00")])
        let r = bearer.receive(gattHex("03 05 02"), now: 1)
        #expect(r == [.mtuChanged(185), .response(id, .exchangeMTUResponse(serverMTU: 517))])
        #expect(bearer.mtu == 185)
    }

    /// Fix (found against Bumble at MTU 23): a client request offering more than the bearer's
    /// local MTU (GATTClient.exchangeMTU() offers 517 by default) is lowered to it, and a smaller
    /// offer bounds the effective MTU, so both sides compute the same MTU.
    @Test func mtuRequestNeverOffersMoreThanTheBearerAccepts() {
        var small = ATTBearer(localMTU: 23)
        let (id, e) = small.enqueue(request: .exchangeMTURequest(clientMTU: 517), now: 0)
        #expect(sent(e) == [gattHex("02 17 00")])
        #expect(small.receive(gattHex("03 05 02"), now: 1) == [.response(id, .exchangeMTUResponse(serverMTU: 517))])
        #expect(small.mtu == 23)

        var big = ATTBearer(localMTU: 517)
        let (id2, e2) = big.enqueue(request: .exchangeMTURequest(clientMTU: 100), now: 0)
        #expect(sent(e2) == [gattHex("02 64 00")])
        #expect(big.receive(gattHex("03 05 02"), now: 1) == [.mtuChanged(100), .response(id2, .exchangeMTUResponse(serverMTU: 517))])
        #expect(big.mtu == 100)
    }

    @Test func mtuExchangeAsServer() {
        // Like Bumble's test: server max 100; a request for 220 gives 100, for 50 gives 50.
        var big = ATTBearer(localMTU: 100)
        #expect(big.receive(gattHex("02 DC 00"), now: 0) == [.send(gattHex("03 64 00")), .mtuChanged(100)])
        var small = ATTBearer(localMTU: 100)
        #expect(small.receive(gattHex("02 32 00"), now: 0) == [.send(gattHex("03 64 00")), .mtuChanged(50)])
        // Only once per connection: a second exchange is answered but changes nothing.
        #expect(small.receive(gattHex("02 50 00"), now: 1) == [.send(gattHex("03 64 00"))])
        #expect(small.mtu == 50)
        // A client MTU below 23 leaves the default.
        var tiny = ATTBearer(localMTU: 100)
        #expect(tiny.receive(gattHex("02 10 00"), now: 0) == [.send(gattHex("03 64 00"))])
        #expect(tiny.mtu == 23)
        #expect(ATTBearer(localMTU: 9000).localMTU == 517)
    }

    @Test func unknownAndMalformedRequests() {
        var bearer = ATTBearer()
        #expect(bearer.receive(gattHex("3E 01 02"), now: 0) == [.send(gattHex("01 3E 00 00 06"))], "unknown request → Request Not Supported")
        #expect(bearer.receive(gattHex("7F 01"), now: 0) == [.ignored(gattHex("7F 01"), reason: .unsupported)], "unknown command ignored")
        #expect(bearer.receive(gattHex("0A 03"), now: 0) == [.send(gattHex("01 0A 00 00 04"))], "truncated request → Invalid PDU")
        if case .ignored(_, .malformed) = bearer.receive(gattHex("1B 03"), now: 0).first {} else { Issue.record("truncated notification") }
        if case .ignored(_, .malformed) = bearer.receive([], now: 0).first {} else { Issue.record("empty PDU") }
    }

    @Test func anUnusableResponseFailsTheRequestSayingWhatCameInsteadOfTimingOut() {
        var bearer = ATTBearer()
        // A Read Response longer than the MTU of 23.
        let (id, sent) = bearer.enqueue(request: .readRequest(handle: 3), now: 0)
        #expect(sent == [.send(gattHex("0A 03 00"))])
        let long = [0x0B] + [UInt8](repeating: 5, count: 30)
        let events = bearer.receive(long, now: 1)
        #expect(events == [.failed(id, .invalidResponse(.readResponse, length: 31, problem: "longer than the ATT MTU of 23"))])
        #expect(events.first.map { "\($0)" }?.contains("31 bytes") == true)
        // The next request goes out at once, and an undecodable answer fails it the same way.
        let (id2, sent2) = bearer.enqueue(request: .writeRequest(handle: 3, value: [1]), now: 2)
        #expect(sent2 == [.send(gattHex("12 03 00 01"))])
        guard case let .failed(failed, .invalidResponse(opcode, 3, problem))? = bearer.receive(gattHex("13 01 02"), now: 3).first else {
            Issue.record("a 3-byte Write Response must fail the write")
            return
        }
        #expect(failed == id2 && opcode == .writeResponse && problem.contains("does not decode"))
        // A response to nothing we asked is a protocol violation, whatever its size.
        #expect(bearer.receive(long, now: 4) == [.closed(.protocolViolation("the device sent a Read Response (0x0B) that answers no request"))])
    }

    @Test func oversizedPDUs() throws {
        var bearer = ATTBearer()
        let write = [0x12, 0x03, 0x00] + [UInt8](repeating: 7, count: 21)  // 24 > MTU 23
        #expect(bearer.receive(write, now: 0) == [.send(gattHex("01 12 00 00 04"))])
        let note = [0x1B, 0x03, 0x00] + [UInt8](repeating: 7, count: 21)
        #expect(bearer.receive(note, now: 0) == [.ignored(note, reason: .tooLong(mtu: 23))])
        let (id, e) = bearer.enqueue(request: .writeRequest(handle: 3, value: [UInt8](repeating: 1, count: 21)), now: 0)
        #expect(e == [.failed(id, .pduTooLong(length: 24, mtu: 23))])
        #expect(throws: ATTBearerError.pduTooLong(length: 24, mtu: 23)) {
            try bearer.send(command: .writeCommand(handle: 3, value: [UInt8](repeating: 1, count: 21)))
        }
        let (id2, e2) = bearer.enqueue(request: .readResponse(value: []), now: 0)
        #expect(e2 == [.failed(id2, .wrongKind(.readResponse))])
        // Notifications are cut to MTU − 3.
        #expect(try bearer.notify(handle: 3, value: [UInt8](repeating: 9, count: 40)) == [.send([0x1B, 0x03, 0x00] + [UInt8](repeating: 9, count: 20))])
    }

    @Test func serverRequestsAreHandedUpAndAnsweredOnce() {
        var bearer = ATTBearer()
        #expect(bearer.receive(gattHex("0A 03 00"), now: 0) == [.serverRequest(.readRequest(handle: 3))])
        #expect(bearer.receive(gattHex("0A 04 00"), now: 0) == [.ignored(gattHex("0A 04 00"), reason: .requestWhileBusy)])
        #expect(bearer.respond(.readResponse(value: [UInt8](repeating: 1, count: 30))) == [.send([0x0B] + [UInt8](repeating: 1, count: 22))])
        #expect(bearer.respond(.readResponse(value: [1])).isEmpty, "nothing to answer")
        #expect(bearer.receive(gattHex("52 03 00 01"), now: 0) == [.serverCommand(.writeCommand(handle: 3, value: [1]))])
    }

    @Test func oneIndicationAtATime() {
        var bearer = ATTBearer()
        let (a, e1) = bearer.indicate(handle: 9, value: [1], now: 0)
        #expect(sent(e1) == [gattHex("1D 09 00 01")])
        let (b, e2) = bearer.indicate(handle: 9, value: [2], now: 1)
        #expect(e2.isEmpty)
        #expect(bearer.receive(gattHex("1E"), now: 2) == [.indicationConfirmed(a), .send(gattHex("1D 09 00 02"))])
        #expect(bearer.receive(gattHex("1E"), now: 3) == [.indicationConfirmed(b)])
        #expect(bearer.receive(gattHex("1E"), now: 4) == [.ignored(gattHex("1E"), reason: .unexpected)])
        // An unconfirmed indication times out after 30 s and closes the bearer.
        let (c, _) = bearer.indicate(handle: 9, value: [3], now: 10)
        #expect(bearer.tick(now: 40) == [.failed(c, .timedOut), .closed(.timedOut)])
    }

    @Test func incomingIndicationIsConfirmedAndNotificationDelivered() {
        var bearer = ATTBearer()
        #expect(bearer.receive(gattHex("1D 09 00 05"), now: 0) == [.indication(handle: 9, value: [5]), .send(gattHex("1E"))])
        #expect(bearer.receive(gattHex("1B 09 00 06"), now: 0) == [.notification(handle: 9, value: [6])])
        #expect(bearer.receive(gattHex("23 09 00 01 00 06 0A 00 00 00"), now: 0) == [.notification(handle: 9, value: [6]), .notification(handle: 10, value: [])])
    }

    @Test func randomizedRobustness() {
        var rng = GATTSeededRandom(seed: 42)
        var bearer = ATTBearer(localMTU: 64)
        var now = 0.0
        for i in 0..<10_000 {
            now += Double.random(in: 0...2, using: &rng)
            _ = bearer.receive(rng.bytes(upTo: 80), now: now)
            if i % 7 == 0 { _ = bearer.enqueue(request: .readRequest(handle: UInt16(i & 0xFFFF)), now: now) }
            if i % 11 == 0 { _ = bearer.respond(.writeResponse) }
            if i % 500 == 0 { _ = bearer.tick(now: now) }
        }
        #expect(bearer.mtu >= 23 && bearer.mtu <= 64)
    }
}
