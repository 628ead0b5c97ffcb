import BluetideBase
import Testing
@testable import BluetideHost

@Suite struct L2CAPTests {
    @Test func basicFrameCodec() throws {
        let bytes = gattHex("03 00 04 00 0A 03 00")
        let frame = try L2CAPFrame(bytes: bytes)
        #expect(frame == L2CAPFrame(channelID: .att, payload: [0x0A, 0x03, 0x00]))
        #expect(frame.bytes == bytes)
        #expect(L2CAPFrame(channelID: .smp, payload: []).bytes == gattHex("00 00 06 00"))
        for cut in 0..<bytes.count {
            #expect(throws: DecodingError.self) { try L2CAPFrame(bytes: Array(bytes.prefix(cut))) }
        }
        #expect(throws: DecodingError.truncated("L2CAP payload", needed: 3, present: 2, at: 4)) {
            try L2CAPFrame(bytes: gattHex("03 00 04 00 0A 03"))
        }
        #expect(throws: DecodingError.self, "more bytes than the length says") { try L2CAPFrame(bytes: bytes + [0]) }
    }

    @Test func routesATT() {
        var router = L2CAPRouter(role: .central)
        let routing = router.receive(gattHex("03 00 04 00 0A 03 00"))
        #expect(routing == L2CAPRouting(att: [0x0A, 0x03, 0x00]))
        #expect(L2CAPRouter.attFrame([0x1E]).bytes == gattHex("01 00 04 00 1E"))
    }

    @Test func dropsUnknownChannelsAndMalformedFrames() {
        var router = L2CAPRouter(role: .central)
        #expect(router.receive(gattHex("01 00 40 00 FF")).dropped == .unknownChannel(L2CAPChannelID(0x0040)))
        if case .malformed = router.receive(gattHex("05 00 04 00 01")).dropped {} else { Issue.record("expected malformed") }
    }

    @Test func centralAcceptsValidParameterUpdate() throws {
        var router = L2CAPRouter(role: .central)
        // Request id 1: interval 6...12 (7.5–15 ms), latency 0, timeout 200 (2 s).
        let routing = router.receive(gattHex("0C 00 05 00 12 01 08 00 06 00 0C 00 00 00 C8 00"))
        #expect(routing.outgoing.map(\.bytes) == [gattHex("06 00 05 00 13 01 02 00 00 00")])
        let p = L2CAPConnectionParameters(intervalMin: 6, intervalMax: 12, peripheralLatency: 0, supervisionTimeout: 200)
        #expect(routing.signalingEvents == [.connectionParameterUpdateRequested(p, accepted: true)])
    }

    @Test func centralRejectsInvalidParameters() {
        var router = L2CAPRouter(role: .central)
        // Timeout 10 (100 ms) is too short for latency 4 at a 50 ms interval.
        let routing = router.receive(gattHex("0C 00 05 00 12 07 08 00 28 00 28 00 04 00 0A 00"))
        #expect(routing.outgoing.map(\.bytes) == [gattHex("06 00 05 00 13 07 02 00 01 00")])
        #expect(L2CAPConnectionParameters(intervalMin: 12, intervalMax: 6, peripheralLatency: 0, supervisionTimeout: 200).isValid == false)
        #expect(L2CAPConnectionParameters(intervalMin: 6, intervalMax: 6, peripheralLatency: 500, supervisionTimeout: 3200).isValid == false)
    }

    @Test func peripheralRejectsParameterUpdateRequest() {
        var router = L2CAPRouter(role: .peripheral)
        let routing = router.receive(gattHex("0C 00 05 00 12 01 08 00 06 00 0C 00 00 00 C8 00"))
        #expect(routing.outgoing.map(\.bytes) == [gattHex("06 00 05 00 01 01 02 00 00 00")])
    }

    @Test func peripheralRequestsParametersAndMatchesTheAnswer() {
        var router = L2CAPRouter(role: .peripheral)
        let p = L2CAPConnectionParameters(intervalMin: 24, intervalMax: 40, peripheralLatency: 0, supervisionTimeout: 400)
        let frame = router.requestConnectionParameterUpdate(p)
        #expect(frame.bytes == gattHex("0C 00 05 00 12 01 08 00 18 00 28 00 00 00 90 01"))
        #expect(router.receive(gattHex("06 00 05 00 13 01 02 00 00 00")).signalingEvents
                == [.connectionParameterUpdateAnswered(identifier: 1, result: .accepted)])
        // The same answer again matches nothing.
        if case .unexpectedResponse = router.receive(gattHex("06 00 05 00 13 01 02 00 00 00")).signalingEvents.first {} else {
            Issue.record("expected unexpectedResponse")
        }
        let second = router.requestConnectionParameterUpdate(p)
        #expect(second.payload[1] == 2, "identifiers advance")
        #expect(router.receive(gattHex("06 00 05 00 01 02 02 00 00 00")).signalingEvents == [.commandRejected(identifier: 2, reason: .commandNotUnderstood)])
    }

    @Test func unknownAndMalformedCommandsAreRejected() {
        var router = L2CAPRouter(role: .central)
        // Code 0x0A (Information Request, BR/EDR only) is not understood on LE.
        #expect(router.receive(gattHex("06 00 05 00 0A 05 02 00 02 00")).outgoing.map(\.bytes) == [gattHex("06 00 05 00 01 05 02 00 00 00")])
        // A parameter update request with 6 data bytes instead of 8.
        let bad = router.receive(gattHex("0A 00 05 00 12 09 06 00 06 00 0C 00 00 00"))
        #expect(bad.outgoing.map(\.bytes) == [gattHex("06 00 05 00 01 09 02 00 00 00")])
        // Identifier 0 is never valid: dropped without an answer.
        #expect(router.receive(gattHex("06 00 05 00 0A 00 02 00 02 00")).outgoing.isEmpty)
        // A truncated command header cannot be answered.
        #expect(router.receive(gattHex("01 00 05 00 0A")).outgoing.isEmpty)
        // A Command Reject is never answered with a Command Reject.
        #expect(router.receive(gattHex("03 00 05 00 01 04 00")).outgoing.isEmpty)
    }

    @Test func disconnectionRequestForUnknownCIDsIsRejectedAsInvalidCID() {
        // Vol 3 Part A 4.1: reason 0x0002 "Invalid CID in request", data = the two CIDs.
        for role in [LinkRole.central, .peripheral] {
            var router = L2CAPRouter(role: role)
            let r = router.receive(gattHex("08 00 05 00 06 0A 04 00 40 00 41 00"))
            #expect(r.outgoing.map(\.bytes) == [gattHex("0A 00 05 00 01 0A 06 00 02 00 40 00 41 00")])
        }
        // A Disconnection Response for no request of ours is discarded without an answer.
        var router = L2CAPRouter(role: .central)
        #expect(router.receive(gattHex("08 00 05 00 07 0B 04 00 40 00 41 00")).outgoing.isEmpty)
    }

    @Test func oversizedSignalingFrameIsRejectedWithOurMTU() {
        var router = L2CAPRouter(role: .central)
        var w = ByteWriter()
        w.write(UInt16(24)); w.write(UInt16(5)); w.write(bytes: [0x12, 0x04, 0x14, 0x00] + [UInt8](repeating: 0, count: 20))
        let r = router.receive(w.bytes)
        #expect(r.outgoing.map(\.bytes) == [gattHex("08 00 05 00 01 04 04 00 01 00 17 00")])
    }

    @Test func creditBasedConnectionsAreRefused() {
        var router = L2CAPRouter(role: .peripheral)
        let r = router.receive(gattHex("0E 00 05 00 14 03 0A 00 80 00 40 00 00 04 00 04 80 00"))
        #expect(r.outgoing.map(\.bytes) == [gattHex("0E 00 05 00 15 03 0A 00 00 00 00 00 00 00 00 00 02 00")])
    }

    @Test func signalingCommandVectors() throws {
        let vectors: [(String, L2CAPSignalingCommand)] = [
            ("01 05 02 00 00 00", .commandReject(identifier: 5, reason: .commandNotUnderstood, data: [])),
            ("01 05 04 00 01 00 17 00", .commandReject(identifier: 5, reason: .signalingMTUExceeded, data: [0x17, 0x00])),
            ("12 01 08 00 06 00 0C 00 00 00 C8 00", .connectionParameterUpdateRequest(
                identifier: 1, parameters: .init(intervalMin: 6, intervalMax: 12, peripheralLatency: 0, supervisionTimeout: 200))),
            ("13 01 02 00 01 00", .connectionParameterUpdateResponse(identifier: 1, result: .rejected)),
            ("13 01 02 00 07 00", .connectionParameterUpdateResponse(identifier: 1, result: .other(7))),
            ("0A 02 02 00 02 00", .unknown(code: 0x0A, identifier: 2, data: [2, 0])),
        ]
        for (text, command) in vectors {
            #expect(try L2CAPSignalingCommand(bytes: gattHex(text)) == command)
            #expect(command.bytes == gattHex(text))
            let bytes = gattHex(text)
            for cut in 0..<bytes.count {
                #expect(throws: DecodingError.self) { try L2CAPSignalingCommand(bytes: Array(bytes.prefix(cut))) }
            }
        }
    }

    /// SMP frames go up to the host's security component, which refuses pairing.
    @Test func smpPairingIsRefused() {
        /// What goes back to the peer for one incoming frame: the router's own answers and the
        /// security component's SMP replies.
        func replies(_ router: inout L2CAPRouter, _ security: inout HostSecurity, _ bytes: [UInt8]) -> [L2CAPFrame] {
            let routing = router.receive(bytes)
            var actions = HostSecurity.Actions()
            if let smp = routing.smp { security.receiveSMP(smp, on: 0x40, now: 0, into: &actions) }
            return routing.outgoing + actions.compactMap {
                if case let .sendSMP(_, pdu) = $0 { L2CAPFrame(channelID: .smp, payload: pdu) } else { nil }
            }
        }
        var ignored = HostSecurity.Actions()
        var central = L2CAPRouter(role: .central)
        // A host that does not pair (by default the security component pairs).
        var centralSecurity = HostSecurity(policy: SecurityPolicy(pairing: .notPairable))
        centralSecurity.linkOpened(0x40, role: .central, peer: BluetoothAddress(value: 0xB1), now: 0, into: &ignored)
        // Pairing Request: IO caps 03, no OOB, bonding, key size 16, keys 07/07.
        #expect(replies(&central, &centralSecurity, gattHex("07 00 06 00 01 03 00 01 10 07 07")).map(\.bytes) == [gattHex("02 00 06 00 05 05")])
        // Security Request from the peripheral: the central answers Pairing Failed too.
        #expect(replies(&central, &centralSecurity, gattHex("02 00 06 00 0B 01")).map(\.bytes) == [gattHex("02 00 06 00 05 05")])
        var peripheral = L2CAPRouter(role: .peripheral)
        var peripheralSecurity = HostSecurity(policy: SecurityPolicy(pairing: .notPairable))
        peripheralSecurity.linkOpened(0x40, role: .peripheral, peer: BluetoothAddress(value: 0xC1), now: 0, into: &ignored)
        #expect(replies(&peripheral, &peripheralSecurity, gattHex("07 00 06 00 01 03 00 01 10 07 07")).map(\.bytes) == [gattHex("02 00 06 00 05 05")])
        #expect(replies(&peripheral, &peripheralSecurity, gattHex("02 00 06 00 0B 01")).isEmpty)
        #expect(replies(&peripheral, &peripheralSecurity, gattHex("00 00 06 00")).isEmpty)
        #expect(replies(&peripheral, &peripheralSecurity, gattHex("02 00 06 00 05 05")).isEmpty, "Pairing Failed is not answered")
        #expect(ignored.isEmpty)
    }

    @Test func randomizedRobustness() {
        var rng = GATTSeededRandom(seed: 7)
        var router = L2CAPRouter(role: .central)
        for _ in 0..<20_000 {
            var payload = rng.bytes(upTo: 20)
            let cid = [UInt16(4), 5, 6, 0x40][Int.random(in: 0..<4, using: &rng)]
            var w = ByteWriter()
            w.write(UInt16(payload.count)); w.write(cid); w.write(bytes: payload)
            var frame = w.bytes
            if Bool.random(using: &rng) { frame = Array(frame.prefix(Int.random(in: 0...frame.count, using: &rng))) }
            let routing = router.receive(frame)
            for out in routing.outgoing { #expect(out.payload.count <= 23) }
            payload = rng.bytes(upTo: 16)
            _ = try? L2CAPSignalingCommand(bytes: payload)
        }
    }
}
