import BluetideBase
import BluetideHCI
import Testing
@testable import BluetideHost

@Suite struct HCICommandQueueTests {
    static let reset = HCIOpcode(rawValue: 0x0C03)
    static let readVersion = HCIOpcode(rawValue: 0x1001)
    static let leReadBufferSize = HCIOpcode(rawValue: 0x2002)
    static let leSetPHY = HCIOpcode(rawValue: 0x2032)
    static let leCreateConnection = HCIOpcode(rawValue: 0x200D)

    /// Decodes raw event bytes (as on the wire after the 04 type byte) and feeds them to `queue`.
    static func feed(_ queue: inout HCICommandQueue, _ bytes: [UInt8], now: Double) throws -> HCICommandQueueOutput {
        let event = try HCIEvent(code: bytes[0], parameters: Array(bytes[2...]))
        return queue.handle(event, now: now)
    }

    @Test func oneCreditMeansOneCommandInFlight() throws {
        var queue = HCICommandQueue()
        let (resetTicket, first) = queue.enqueue(Self.reset, now: 0)
        #expect(first.packets == [.command(opcode: Self.reset, parameters: [])])
        #expect(first.packets.map(\.h4Bytes) == [[0x01, 0x03, 0x0C, 0x00]])
        let (versionTicket, second) = queue.enqueue(Self.readVersion, now: 0)
        #expect(second.packets.isEmpty)
        #expect(queue.waitingOpcodes == [Self.readVersion])
        #expect(queue.credits == 0)

        // Reset's Command Complete (bytes from a Bumble controller) grants 1 credit: Read Version goes.
        let afterReset = try Self.feed(&queue, [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00], now: 0.01)
        #expect(afterReset.completions == [HCICommandOutcome(
            ticket: resetTicket, opcode: Self.reset, result: .success(.complete(returnParameters: [0x00])))])
        #expect(afterReset.packets == [.command(opcode: Self.readVersion, parameters: [])])

        let version: [UInt8] = [0x0E, 0x0C, 0x01, 0x01, 0x10, 0x00, 0x09, 0x00, 0x00, 0x09, 0xFF, 0xFF, 0x00, 0x00]
        let afterVersion = try Self.feed(&queue, version, now: 0.02)
        #expect(afterVersion.completions.first?.ticket == versionTicket)
        #expect(afterVersion.completions.first?.result == .success(.complete(returnParameters: [0x00, 0x09, 0x00, 0x00, 0x09, 0xFF, 0xFF, 0x00, 0x00])))
        #expect(queue.outstandingOpcodes.isEmpty && queue.waitingOpcodes.isEmpty)
        #expect(queue.credits == 1)
    }

    @Test func moreCreditsSendSeveralAtOnce() throws {
        var queue = HCICommandQueue()
        _ = queue.enqueue(Self.reset, now: 0)
        _ = queue.enqueue(Self.readVersion, now: 0)
        _ = queue.enqueue(Self.leReadBufferSize, now: 0)
        // A grant of 5 credits lets both waiting commands out together.
        let out = try Self.feed(&queue, [0x0E, 0x04, 0x05, 0x03, 0x0C, 0x00], now: 1)
        #expect(out.packets.count == 2)
        #expect(queue.outstandingOpcodes == [Self.readVersion, Self.leReadBufferSize])
        #expect(queue.credits == 3)
        // Answers match by opcode, whatever their order.
        let buffer = try Self.feed(&queue, [0x0E, 0x07, 0x05, 0x02, 0x20, 0x00, 0x1B, 0x00, 0x40], now: 1.1)
        #expect(buffer.completions.map(\.opcode) == [Self.leReadBufferSize])
        #expect(queue.outstandingOpcodes == [Self.readVersion])
    }

    @Test func zeroCreditsPauseUntilTheControllerGrantsMore() throws {
        var queue = HCICommandQueue()
        _ = queue.enqueue(Self.reset, now: 0)
        let paused = try Self.feed(&queue, [0x0E, 0x04, 0x00, 0x03, 0x0C, 0x00], now: 0.1)
        #expect(paused.completions.count == 1)
        let (_, held) = queue.enqueue(Self.readVersion, now: 0.2)
        #expect(held.packets.isEmpty)
        #expect(queue.credits == 0)
        // A NOP (Command Complete for opcode 0x0000) grants a credit and matches nothing.
        let resumed = try Self.feed(&queue, [0x0E, 0x03, 0x01, 0x00, 0x00], now: 0.3)
        #expect(resumed.completions.isEmpty)
        #expect(resumed.packets == [.command(opcode: Self.readVersion, parameters: [])])
    }

    @Test func commandStatusEndsTheCommandAsPendingOrFailed() throws {
        var queue = HCICommandQueue()
        let create: [UInt8] = [0x60, 0x00, 0x60, 0x00, 0x00, 0x01, 0xC1, 0xC2, 0xC3, 0xC4, 0xC5, 0xC6, 0x01, 0x18, 0x00, 0x28, 0x00, 0x00, 0x00, 0x2A, 0x00, 0x00, 0x00, 0x00, 0x00]
        let (ticket, out) = queue.enqueue(Self.leCreateConnection, parameters: create, now: 0)
        #expect(out.packets.first?.h4Bytes.prefix(4) == [0x01, 0x0D, 0x20, 0x19])
        let accepted = try Self.feed(&queue, [0x0F, 0x04, 0x00, 0x01, 0x0D, 0x20], now: 0.1)
        #expect(accepted.completions == [HCICommandOutcome(ticket: ticket, opcode: Self.leCreateConnection, result: .success(.pending))])

        // Bumble with a stale pending connection answers CS 0x0C Command Disallowed.
        _ = queue.enqueue(Self.leCreateConnection, parameters: create, now: 1)
        let refused = try Self.feed(&queue, [0x0F, 0x04, 0x0C, 0x01, 0x0D, 0x20], now: 1.1)
        let error = try #require(refused.completions.first.flatMap { completion -> HCICommandError? in
            if case let .failure(error) = completion.result { return error }
            return nil
        })
        #expect(error.reason == .failed(status: .commandDisallowed, returnParameters: [0x0C]))
        #expect(error.description == "HCI LE Create Connection (0x200D) failed with status 0x0C (command disallowed)")
    }

    @Test func commandCompleteWithErrorStatusFails() throws {
        var queue = HCICommandQueue()
        let setDataLength = HCIOpcode(rawValue: 0x2022)
        _ = queue.enqueue(setDataLength, parameters: [0x01, 0x00, 0xFB, 0x00, 0x48, 0x08], now: 0)
        // Bumble: LE Set Data Length is answered with status 0x01 Unknown HCI Command.
        let out = try Self.feed(&queue, [0x0E, 0x06, 0x01, 0x22, 0x20, 0x01, 0x01, 0x00], now: 0.1)
        guard case let .failure(error)? = out.completions.first?.result else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.description == "HCI LE Set Data Length (0x2022) failed with status 0x01 (unknown HCI command)")
    }

    @Test func unansweredCommandTimesOutNamingItAndFreesItsCredit() {
        var queue = HCICommandQueue()
        let (phyTicket, _) = queue.enqueue(Self.leSetPHY, parameters: [0x01, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00], now: 100)
        let (_, waiting) = queue.enqueue(Self.readVersion, now: 101)
        #expect(waiting.packets.isEmpty)
        #expect(queue.nextDeadline == 110)
        #expect(queue.expire(now: 109.999) == HCICommandQueueOutput())
        let out = queue.expire(now: 110)
        #expect(out.completions == [HCICommandOutcome(
            ticket: phyTicket, opcode: Self.leSetPHY,
            result: .failure(HCICommandError(opcode: Self.leSetPHY, reason: .timedOut(seconds: 10, sent: true))))])
        #expect(out.completions.first.map { "\($0.result)" }?.contains("LE Set PHY (0x2032)") == true)
        if case let .failure(error)? = out.completions.first?.result {
            #expect(error.description == "HCI LE Set PHY (0x2032) got no Command Complete or Command Status within 10 s (some controllers never answer commands they do not implement)")
        }
        // The credit came back: the next command goes out, with its own fresh deadline.
        #expect(out.packets == [.command(opcode: Self.readVersion, parameters: [])])
        #expect(queue.nextDeadline == 120)
    }

    @Test func aLateAnswerToATimedOutCommandIsIgnored() throws {
        var queue = HCICommandQueue(defaultTimeout: 2)
        _ = queue.enqueue(Self.reset, now: 0)
        _ = queue.expire(now: 2)
        let late = try Self.feed(&queue, [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00], now: 3)
        #expect(late.completions.isEmpty)
        #expect(queue.credits == 1)
    }

    @Test func commandsWaitingForACreditTimeOutToo() throws {
        var queue = HCICommandQueue()
        _ = queue.enqueue(Self.reset, now: 0)
        _ = try Self.feed(&queue, [0x0E, 0x04, 0x00, 0x03, 0x0C, 0x00], now: 0)  // pause
        let (ticket, _) = queue.enqueue(Self.readVersion, now: 1, timeout: 5)
        let out = queue.expire(now: 6)
        #expect(out.completions == [HCICommandOutcome(
            ticket: ticket, opcode: Self.readVersion,
            result: .failure(HCICommandError(opcode: Self.readVersion, reason: .timedOut(seconds: 5, sent: false))))])
        #expect(out.packets.isEmpty)
        if case let .failure(error)? = out.completions.first?.result {
            #expect(error.description == "HCI Read Local Version Information (0x1001) could not be sent within 5 s: the controller granted no command credits")
        }
    }

    @Test func sameOpcodeAnswersMatchOldestFirst() throws {
        var queue = HCICommandQueue()
        _ = try Self.feed(&queue, [0x0E, 0x03, 0x02, 0x00, 0x00], now: 0)  // 2 credits
        let (a, _) = queue.enqueue(Self.readVersion, now: 0)
        let (b, _) = queue.enqueue(Self.readVersion, now: 0)
        #expect(queue.outstandingOpcodes.count == 2)
        let first = try Self.feed(&queue, [0x0E, 0x04, 0x01, 0x01, 0x10, 0x00], now: 1)
        let second = try Self.feed(&queue, [0x0E, 0x04, 0x01, 0x01, 0x10, 0x00], now: 1)
        #expect(first.completions.map(\.ticket) == [a])
        #expect(second.completions.map(\.ticket) == [b])
    }

    @Test func cancelAndFailAll() throws {
        var queue = HCICommandQueue()
        let (sent, _) = queue.enqueue(Self.reset, now: 0)
        let (waiting, _) = queue.enqueue(Self.readVersion, now: 0)
        #expect(queue.cancel(waiting)?.result == .failure(HCICommandError(opcode: Self.readVersion, reason: .abandoned("cancelled"))))
        #expect(queue.waitingOpcodes.isEmpty)
        #expect(queue.cancel(sent) != nil)
        #expect(queue.cancel(sent) == nil)
        // The cancelled command's answer still frees its slot but completes nothing.
        let out = try Self.feed(&queue, [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00], now: 1)
        #expect(out.completions.isEmpty)
        #expect(queue.outstandingOpcodes.isEmpty)

        let (x, _) = queue.enqueue(Self.reset, now: 2)
        let (y, _) = queue.enqueue(Self.readVersion, now: 2)
        let failed = queue.failAll("transport closed")
        #expect(failed.map(\.ticket) == [x, y])
        #expect(failed.first.map { "\($0.result)" }?.contains("transport closed") == true)
        #expect(queue.credits == 1 && queue.nextDeadline == nil)
    }

    @Test func cancelledCommandThatIsNeverAnsweredStillFreesItsCredit() {
        var queue = HCICommandQueue(defaultTimeout: 1)
        let (ticket, _) = queue.enqueue(Self.leSetPHY, now: 0)
        _ = queue.cancel(ticket)
        let (_, held) = queue.enqueue(Self.reset, now: 0)
        #expect(held.packets.isEmpty)
        let out = queue.expire(now: 1)
        #expect(out.completions.isEmpty)
        #expect(out.packets == [.command(opcode: Self.reset, parameters: [])])
    }

    @Test func unnamedOpcodesAreDescribedByTheirFields() {
        #expect(HCICommandNames.describe(HCIOpcode(rawValue: 0xFC01)) == "command 0xFC01 (OGF 0x3F, OCF 0x001)")
        #expect(HCICommandNames.describe(Self.reset) == "Reset (0x0C03)")
    }

    @Test func randomEventsNeverTrapAndKeepTheQueueConsistent() {
        var generator = SystemRandomNumberGenerator()
        var queue = HCICommandQueue(defaultTimeout: 3)
        var now = 0.0
        var open: Set<HCICommandTicket> = []
        let opcodes: [UInt16] = [0x0C03, 0x1001, 0x2002, 0x2032, 0x200D]
        for _ in 0..<5000 {
            now += Double.random(in: 0...0.5, using: &generator)
            switch Int.random(in: 0..<4, using: &generator) {
            case 0:
                let op = HCIOpcode(rawValue: opcodes.randomElement(using: &generator) ?? 0)
                let (ticket, out) = queue.enqueue(op, now: now)
                open.insert(ticket)
                for c in out.completions { open.remove(c.ticket) }
            case 1:
                let code: UInt8 = Bool.random(using: &generator) ? 0x0E : 0x0F
                let length = Int.random(in: 0...8, using: &generator)
                var params = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
                if params.count >= 4, Bool.random(using: &generator) {
                    let op = opcodes.randomElement(using: &generator) ?? 0
                    let at = code == 0x0E ? 1 : 2
                    params[at] = UInt8(op & 0xFF)
                    params[at + 1] = UInt8(op >> 8)
                }
                if let event = try? HCIEvent(code: code, parameters: params) {
                    for c in queue.handle(event, now: now).completions {
                        #expect(open.remove(c.ticket) != nil)
                    }
                }
            case 2:
                for c in queue.expire(now: now).completions { #expect(open.remove(c.ticket) != nil) }
            default:
                if let ticket = open.randomElement(using: &generator), queue.cancel(ticket) != nil {
                    open.remove(ticket)
                }
            }
            #expect(queue.credits >= 0)
            #expect(queue.outstandingOpcodes.count + queue.waitingOpcodes.count >= open.count)
        }
        // Everything still open ends by its deadline.
        for c in queue.expire(now: now + 100).completions { open.remove(c.ticket) }
        for c in queue.expire(now: now + 200).completions { open.remove(c.ticket) }
        #expect(open.isEmpty)
    }
}
