import BluetideBase
import BluetideHCI
import BluetideSupport
import Foundation
import Testing
@testable import BluetideHost
@testable import BluetideTransport

/// The whole ``HostStack`` against a scripted controller that answers start-up and then
/// misbehaves: garbage on the wire, malformed and unexpected packets at every layer, commands
/// it never answers. Nothing may crash or hang; every wait here is bounded.
@Suite(.timeLimit(.minutes(1))) struct HostStackRobustnessTests {
    static let peer = BluetoothAddress.randomStatic(0x0000_0000_7777)
    /// Upper bound of every wait: a hang guard only, generous because the whole test run shares
    /// two cores (the stack's own timeouts under test are far shorter).
    static let bound: Double = 20

    /// A stack over a pipe to a fresh ``ScriptedController``, started.
    /// With a `clock`, the stack's timeouts run on it (tests advance it instead of waiting).
    static func started(
        silent: Set<UInt16> = [], autoCompletePackets: Bool = true,
        configuration: HostStack.Configuration = .init(
            randomAddress: .randomStatic(0x1111_2222_3333), commandTimeout: 10, attTransactionTimeout: 10),
        clock: ManualClock? = nil
    ) async throws -> (HostStack, ScriptedController) {
        let (host, controller) = PipeTransport.makePair()
        let fake = ScriptedController(end: controller, silent: silent, autoCompletePackets: autoCompletePackets)
        await fake.run()
        let stack = clock.map { HostStack(transport: host, configuration: configuration, clock: $0) }
            ?? HostStack(transport: host, configuration: configuration)
        try await within(Self.bound, "start") { try await stack.start() }
        return (stack, fake)
    }

    /// Injects an LE Connection Complete in the peripheral role and returns the new connection.
    static func incomingLink(_ stack: HostStack, _ fake: ScriptedController, handle: UInt16 = 0x0040) async throws
        -> HostConnection
    {
        try await fake.inject((LEConnectionComplete(
            handle: handle, role: .peripheral, peerAddress: peer, interval: 24, latency: 0, supervisionTimeout: 72)).packet)
        let connection = try await within(Self.bound, "incoming connection") { () -> HostConnection? in
            var incoming = stack.incomingConnections.makeAsyncIterator()
            return await incoming.next()
        }
        return try #require(connection)
    }

    // MARK: HCI commands

    @Test func aCommandTheControllerNeverAnswersFailsNamingItAndTheQueueGoesOn() async throws {
        let clock = ManualClock()
        let (stack, fake) = try await Self.started(
            silent: [0x2030],
            configuration: .init(randomAddress: .randomStatic(0x1111_2222_3333), commandTimeout: 2), clock: clock)
        defer { Task { await stack.close() } }
        let pending = Task { try await stack.execute(LEReadPHY(handle: 1)) }
        _ = try await fake.waitForCommand(0x2030, "LE Read PHY")
        // The timeout is due once the clock reaches it, however long the answer takes to not come.
        clock.advance(by: .seconds(2))
        let error = await #expect(throws: HostError.self) {
            try await within(Self.bound, "unanswered command") { try await pending.value }
        }
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains("LE Read PHY (0x2030)"), "\(text)")
        #expect(text.contains("no Command Complete or Command Status within 2 s"), "\(text)")
        // Its credit came back: the next command goes out and completes.
        _ = try await within(Self.bound, "next command") { try await stack.execute(LESetScanEnable(enable: false)) }
        #expect(await fake.commandCount(0x2030) == 1)
    }

    @Test func aControllerThatNeverAnswersResetFailsStartNamingReset() async throws {
        let (host, controller) = PipeTransport.makePair()
        let fake = ScriptedController(end: controller, silent: [0x0C03])
        await fake.run()
        let clock = ManualClock()
        let stack = HostStack(transport: host, configuration: .init(commandTimeout: 0.3), clock: clock)
        defer { Task { await stack.close() } }
        let starting = Task { try await stack.start() }
        _ = try await fake.waitForCommand(0x0C03, "Reset")
        clock.advance(by: .milliseconds(300))
        let error = await #expect(throws: HostError.self) { try await within(Self.bound, "start") { try await starting.value } }
        #expect((error.map { "\($0)" } ?? "").contains("Reset (0x0C03)"))
    }

    @Test func malformedUnknownAndStrayEventsAreDropped() async throws {
        let (stack, fake) = try await Self.started()
        defer { Task { await stack.close() } }
        let link = try await Self.incomingLink(stack, fake)
        let junk: [HCIPacket] = [
            .event(code: 0x0E, parameters: [0x01]),  // Command Complete cut inside the opcode
            .event(code: 0x0E, parameters: [0x01, 0x99, 0x20, 0x00]),  // completes nothing we sent
            .event(code: 0x0F, parameters: [0x00, 0x01, 0x32, 0x20]),  // Command Status for nothing
            .event(code: 0x13, parameters: [0x02, 0x40, 0x00]),  // NOCP cut short
            .event(code: 0x05, parameters: [0x00]),  // Disconnection Complete cut short
            .event(code: 0xFF, parameters: [1, 2, 3]),  // vendor event
            .event(code: 0x3E, parameters: []),  // LE Meta without subevent
            .event(code: 0x3E, parameters: [0x01, 0x00]),  // LE Connection Complete cut short
            .event(code: 0x3E, parameters: [0x7F, 0x01]),  // unknown subevent
            .event(code: 0x3E, parameters: [0x0D, 0x05]),  // extended report claiming 5 reports, none there
            .sco(handle: 1, data: [1, 2]),
            .iso(header: 1, data: [1, 2]),
            // Disconnection Complete for a handle nobody knows, and a failed one for ours.
            HCIDisconnectionComplete(handle: 0x0123, reason: .remoteUserTerminated).packet,
            HCIDisconnectionComplete(status: .commandDisallowed, handle: link.handle, reason: .remoteUserTerminated).packet,
            // Number Of Completed Packets for handles that do not exist.
            HCINumberOfCompletedPackets(entries: [.init(handle: 0x0999, completedPackets: 50), .init(handle: 0x0EFF, completedPackets: 1)]).packet,
        ]
        for packet in junk { try await fake.inject(packet) }
        // Everything after the junk still works: a command round trip and the link.
        _ = try await within(Self.bound, "command after junk") { try await stack.execute(LESetScanEnable(enable: false)) }
        #expect(await link.isOpen())
        #expect(await stack.openConnections.map(\.handle) == [link.handle])
    }

    // MARK: Connections

    @Test func connectionCompleteWithAnUnknownRoleIsRefusedNotSurfaced() async throws {
        let (stack, fake) = try await Self.started()
        defer { Task { await stack.close() } }
        try await fake.inject((LEConnectionComplete(
            handle: 0x0042, role: HCIRole(rawValue: 0x05), peerAddress: Self.peer, interval: 24, latency: 0,
            supervisionTimeout: 72)).packet)
        // The host tells the controller to drop that link…
        let disconnect = try await fake.waitForCommand(0x0406, "Disconnect of the unknown-role link")
        #expect(disconnect.prefix(2) == [0x42, 0x00])
        // …and nobody sees a connection.
        #expect(await stack.openConnections.isEmpty)
        // A real connection afterwards is surfaced normally.
        let link = try await Self.incomingLink(stack, fake, handle: 0x0043)
        #expect(link.role == .peripheral)
    }

    @Test func aSecondConnectionCompleteForAnOpenHandleClosesTheOldLinkFirst() async throws {
        let (stack, fake) = try await Self.started()
        defer { Task { await stack.close() } }
        let first = try await Self.incomingLink(stack, fake)
        let pending = Task { try await first.gatt.read(handle: 3) }
        _ = try await fake.nextATT(on: first.handle, "the read request")
        let second = try await Self.incomingLink(stack, fake)
        // The old link's waiters do not hang: the read fails, the old handle reports closed.
        let outcome = try await within(Self.bound, "old read") { await pending.result }
        guard case .failure = outcome else {
            Issue.record("read on the replaced link succeeded")
            return
        }
        #expect(first.closeReason != nil)
        #expect(await second.isOpen())
    }

    @Test func aConnectWhoseLinkClosedAndWhoseHandleWasTakenBeforeItResumedGetsItsOwnLink() async throws {
        let (stack, fake) = try await Self.started()
        defer { Task { await stack.close() } }
        let connecting = Task { try await stack.connect(to: Self.peer, timeout: Self.bound) }
        _ = try await fake.waitForCommand(0x200D, "LE Create Connection")
        // One batch, so the stack carries all three out before the connecting task resumes: our
        // link opens and closes, and another device's link gets the same handle.
        let other = BluetoothAddress.randomStatic(0x0000_0000_8888)
        try await fake.end.send(batch: [
            LEConnectionComplete(handle: 0x0040, role: .central, peerAddress: Self.peer, interval: 24, latency: 0, supervisionTimeout: 72).packet,
            HCIDisconnectionComplete(handle: 0x0040, reason: .remoteUserTerminated).packet,
            LEConnectionComplete(handle: 0x0040, role: .peripheral, peerAddress: other, interval: 24, latency: 0, supervisionTimeout: 72).packet,
        ])
        let connection = try await within(Self.bound, "connect") { try await connecting.value }
        #expect(connection.peer == Self.peer, "the connect returned the link of \(connection.peer)")
        #expect(connection.role == .central)
        #expect(connection.closeReason == .remoteUserTerminated)
        #expect(await !connection.isOpen())
    }

    // MARK: ACL and L2CAP

    @Test func truncatedOversizedAndStrayACLIsDroppedAndTheLinkGoesOn() async throws {
        let (stack, fake) = try await Self.started()
        defer { Task { await stack.close() } }
        let link = try await Self.incomingLink(stack, fake)
        let h = link.handle
        let junk: [HCIPacket] = [
            .acl(handle: h, boundary: .firstFlushable, broadcast: 0, data: [0x05]),  // header cut short, then replaced
            .acl(handle: h, boundary: .continuing, broadcast: 0, data: [1, 2, 3]),  // continuation without a start
            .acl(handle: h, boundary: .firstFlushable, broadcast: 0, data: [0x03, 0x00, 0x04, 0x00, 0x0A] + [UInt8](repeating: 9, count: 20)),  // more bytes than its length
            .acl(handle: h, boundary: .firstFlushable, broadcast: 0, data: [0xFF, 0xFF, 0x04, 0x00, 0x0A]),  // claims 65535, never completes…
            .acl(handle: h, boundary: .firstFlushable, broadcast: 0, data: []),  // …replaced by an empty start
            .acl(handle: 0x0777, boundary: .firstFlushable, broadcast: 0, data: ScriptedController.l2cap([0x0A, 0x01, 0x00])),  // unknown handle
            .acl(handle: h, boundary: .firstFlushable, broadcast: 0, data: [0x02, 0x00, 0x40, 0x00, 0x01, 0x02]),  // unknown CID
            .acl(handle: h, boundary: .firstFlushable, broadcast: 0, data: [0x00, 0x00, 0x04, 0x00]),  // empty ATT PDU
            .acl(handle: h, boundary: .firstFlushable, broadcast: 0, data: [0x02, 0x00, 0x06, 0x00, 0x7F, 0x00]),  // SMP junk
            .acl(handle: h, boundary: .firstFlushable, broadcast: 0, data: [0x01, 0x00, 0x05, 0x00, 0x99]),  // signalling junk
        ]
        for packet in junk { try await fake.inject(packet) }
        // The ATT bearer still answers, and nothing was answered on ATT for the junk above.
        let name = try #require(await stack.valueHandle(of: .deviceName))
        try await fake.injectATT([0x0A, UInt8(name & 0xFF), UInt8(name >> 8)], on: h)
        #expect(try await fake.nextATT(on: h, "Read Response") == [0x0B] + Array("Bluetide".utf8))
        #expect(await link.isOpen())
    }

    @Test func noPartialPDUIsKeptForHandlesWithNoConnection() async throws {
        let (stack, fake) = try await Self.started()
        defer { Task { await stack.close() } }
        let link = try await Self.incomingLink(stack, fake)
        let other = try await Self.incomingLink(stack, fake, handle: 0x0041)
        // A start on an open link is kept (so the accessor measures what it should)…
        try await fake.inject(.acl(handle: other.handle, boundary: .firstFlushable, broadcast: 0, data: [0x10, 0x00, 0x04, 0x00, 0x0A]))
        // …but starts of 64 KB PDUs on handles that have no connection are not.
        let start: [UInt8] = [0xFC, 0xFF, 0x04, 0x00] + [UInt8](repeating: 7, count: 247)
        for handle: UInt16 in 0x0100..<0x0140 {
            try await fake.inject(.acl(handle: handle, boundary: .firstFlushable, broadcast: 0, data: start))
        }
        // A round trip on the first link: every packet above has been handled when it returns.
        let name = try #require(await stack.valueHandle(of: .deviceName))
        try await fake.injectATT([0x0A, UInt8(name & 0xFF), UInt8(name >> 8)], on: link.handle)
        _ = try await fake.nextATT(on: link.handle, "Read Response")
        #expect(await stack.pendingReassemblyBytes == 5)
    }

    @Test func truncatedAndOversizedATTRequestsGetErrorResponses() async throws {
        let (stack, fake) = try await Self.started()
        defer { Task { await stack.close() } }
        let h = try await Self.incomingLink(stack, fake).handle
        // Read Request with half a handle: Invalid PDU.
        try await fake.injectATT([0x0A, 0x03], on: h)
        #expect(try await fake.nextATT(on: h, "error for the truncated read") == [0x01, 0x0A, 0x00, 0x00, 0x04])
        // A 40-octet Write Request at MTU 23: refused, not processed.
        try await fake.injectATT([0x12, 0x03, 0x00] + [UInt8](repeating: 0xAA, count: 37), on: h)
        let refusal = try await fake.nextATT(on: h, "error for the oversized write")
        #expect(refusal.first == 0x01 && refusal.dropFirst().first == 0x12)
        // An oversized notification (not a request) is dropped silently; the next request is answered.
        try await fake.injectATT([0x1B, 0x03, 0x00] + [UInt8](repeating: 0xAA, count: 37), on: h)
        try await fake.injectATT([0x02, 0x17, 0x00], on: h)
        #expect(try await fake.nextATT(on: h, "Exchange MTU Response") == [0x03, 0x05, 0x02])
    }

    @Test func unknownATTRequestsGetRequestNotSupportedAndUnknownCommandsAreIgnored() async throws {
        let (stack, fake) = try await Self.started()
        defer { Task { await stack.close() } }
        let h = try await Self.incomingLink(stack, fake).handle
        try await fake.injectATT([0x7E, 0x01, 0x02], on: h)  // unknown command (bit 6): no answer
        try await fake.injectATT([0x22, 0x01, 0x02], on: h)  // unknown request
        #expect(try await fake.nextATT(on: h, "Request Not Supported") == [0x01, 0x22, 0x00, 0x00, 0x06])
        try await fake.injectATT([0x3E, 0x00], on: h)  // another unknown request
        #expect(try await fake.nextATT(on: h, "Request Not Supported") == [0x01, 0x3E, 0x00, 0x00, 0x06])
        #expect(await fake.attFromHost(on: h).count == 2)
    }

    @Test func aResponseToAnotherRequestIsAProtocolErrorThatClosesTheBearer() async throws {
        let (stack, fake) = try await Self.started()
        defer { Task { await stack.close() } }
        let link = try await Self.incomingLink(stack, fake)
        let h = link.handle
        try await fake.injectATT([0x1D, 0x03, 0x00, 0x01], on: h)  // indication: confirmed even unasked
        #expect(try await fake.nextATT(on: h, "Handle Value Confirmation") == [0x1E])
        // A read in flight answered with a Write Response: the read fails saying so, and the
        // bearer closes (no later response could be trusted to answer what it seems to).
        let read = Task { try await link.gatt.read(handle: 3) }
        #expect(try await fake.nextATT(on: h, "Read Request") == [0x0A, 0x03, 0x00])
        try await fake.injectATT([0x13], on: h)
        let violation = ATTBearerError.protocolViolation("the device answered a Read Request (0x0A) with a Write Response (0x13)")
        await #expect(throws: violation) { try await within(Self.bound, "read") { try await read.value } }
        await #expect(throws: violation) { try await within(Self.bound, "read after it") { try await link.gatt.read(handle: 5) } }
        #expect(await fake.attFromHost(on: h).count == 2, "nothing more was sent")
    }

    @Test func aResponseNobodyAskedForIsAProtocolError() async throws {
        let (stack, fake) = try await Self.started()
        defer { Task { await stack.close() } }
        let link = try await Self.incomingLink(stack, fake)
        try await fake.injectATT([0x0B, 0x01, 0x02], on: link.handle)
        await #expect(throws: ATTBearerError.protocolViolation("the device sent a Read Response (0x0B) that answers no request")) {
            try await within(Self.bound, "read") { try await link.gatt.read(handle: 3) }
        }
    }

    @Test func anUnansweredRequestTimesOutAndTheBearerCloses() async throws {
        let clock = ManualClock()
        let (stack, fake) = try await Self.started(
            configuration: .init(randomAddress: .randomStatic(0x1111_2222_3333), attTransactionTimeout: 2), clock: clock)
        defer { Task { await stack.close() } }
        let link = try await Self.incomingLink(stack, fake)
        let h = link.handle
        let unanswered = Task { try await link.gatt.read(handle: 5) }
        #expect(try await fake.nextATT(on: h, "Read Request") == [0x0A, 0x05, 0x00])
        clock.advance(by: .seconds(2))
        await #expect(throws: ATTBearerError.timedOut) {
            try await within(Self.bound, "unanswered read") { try await unanswered.value }
        }
        await #expect(throws: ATTBearerError.bearerClosed) {
            try await within(Self.bound, "read after timeout") { try await link.gatt.read(handle: 5) }
        }
    }

    @Test func aBurstOfNotificationsIsDeliveredInArrivalOrder() async throws {
        let (stack, fake) = try await Self.started()
        defer { Task { await stack.close() } }
        let link = try await Self.incomingLink(stack, fake)
        let h = link.handle
        let characteristic = GATTCharacteristic(
            uuid: .heartRateMeasurement, declarationHandle: 2, valueHandle: 3, endHandle: 4, properties: .notify)
        let subscribing = Task { try await link.gatt.subscribe(to: characteristic) }
        #expect(try await fake.nextATT(on: h, "Find Information Request") == [0x04, 0x04, 0x00, 0x04, 0x00])
        try await fake.injectATT([0x05, 0x01, 0x04, 0x00, 0x02, 0x29], on: h)
        #expect(try await fake.nextATT(on: h, "CCCD write") == [0x12, 0x04, 0x00, 0x01, 0x00])
        try await fake.injectATT([0x13], on: h)
        let values = try await within(Self.bound, "subscribe") { try await subscribing.value }
        let count = 200
        for i in 0..<count { try await fake.injectATT([0x1B, 0x03, 0x00, UInt8(i & 0xFF), UInt8(i >> 8)], on: h) }
        let received = try await within(Self.bound, "\(count) notifications") {
            var received: [Int] = []
            for await value in values {
                received.append(Int(value[0]) | Int(value[1]) << 8)
                if received.count == count { break }
            }
            return received
        }
        #expect(received == Array(0..<count))
        // The link going down ends the stream only after every value before it.
        try await fake.injectATT([0x1B, 0x03, 0x00, 0xFF, 0xFF], on: h)
        try await fake.inject(HCIDisconnectionComplete(handle: h, reason: .remoteUserTerminated).packet)
        #expect(await link.waitForDisconnection() == .remoteUserTerminated)
        let tail = try await within(Self.bound, "end of the stream") {
            var rest: [[UInt8]] = []
            for await value in values { rest.append(value) }
            return rest
        }
        #expect(tail == [[0xFF, 0xFF]])
    }

    @Test func cancellingAGATTRequestEndsItsWaitAndTheLateAnswerIsDropped() async throws {
        let (stack, fake) = try await Self.started()
        defer { Task { await stack.close() } }
        let link = try await Self.incomingLink(stack, fake)
        let h = link.handle
        let read = Task { try await link.gatt.read(handle: 3) }
        #expect(try await fake.nextATT(on: h, "Read Request") == [0x0A, 0x03, 0x00])
        read.cancel()
        let outcome = try await within(Self.bound, "cancelled read") { await read.result }
        guard case let .failure(error) = outcome, error is CancellationError else {
            Issue.record("expected CancellationError, got \(outcome)")
            return
        }
        // The next request waits for the first transaction to end, then gets its own answer.
        let next = Task { try await link.gatt.read(handle: 5) }
        try await fake.injectATT([0x0B, 0x01], on: h)  // the late answer to the cancelled read
        #expect(try await fake.nextATT(on: h, "second Read Request") == [0x0A, 0x05, 0x00])
        try await fake.injectATT([0x0B, 0x02], on: h)
        #expect(try await within(Self.bound, "second read") { try await next.value } == [0x02])
    }

    @Test func aCancelledLongWriteStillCancelsTheServersQueue() async throws {
        let (stack, fake) = try await Self.started()
        defer { Task { await stack.close() } }
        let link = try await Self.incomingLink(stack, fake)
        let h = link.handle
        let value = (0..<40).map { UInt8($0) }
        let write = Task { try await link.gatt.writeLong(handle: 3, value: value) }
        let prepare = try await fake.nextATT(on: h, "first Prepare Write Request")
        #expect(prepare == [0x16, 0x03, 0x00, 0x00, 0x00] + value.prefix(18))
        write.cancel()
        // The late echo ends the first transaction; then the queue is cancelled (flags 0), and
        // the write ends (cancelled) once the server confirmed.
        try await fake.injectATT([0x17] + prepare.dropFirst(), on: h)
        #expect(try await fake.nextATT(on: h, "Execute Write (cancel)") == [0x18, 0x00])
        try await fake.injectATT([0x19], on: h)
        let outcome = try await within(Self.bound, "cancelled long write") { await write.result }
        guard case let .failure(error) = outcome, error is CancellationError else {
            Issue.record("expected CancellationError, got \(outcome)")
            return
        }
    }

    @Test func completedPacketsForUnknownHandlesGrantNoCredits() async throws {
        let (stack, fake) = try await Self.started(autoCompletePackets: false)
        defer { Task { await stack.close() } }
        let link = try await Self.incomingLink(stack, fake)
        // The controller has 4 buffers (LE Read Buffer Size): 6 writes leave 2 queued.
        for i in 0..<6 { try await link.gatt.writeWithoutResponse(handle: 3, value: [UInt8(i)]) }
        try await fake.inject(HCINumberOfCompletedPackets(entries: [.init(handle: 0x0999, completedPackets: 10)]).packet)
        // A command round trip orders us after the event above.
        _ = try await within(Self.bound, "round trip") { try await stack.execute(LESetScanEnable(enable: false)) }
        #expect(await fake.attFromHost(on: link.handle).count == 4)
        try await fake.inject(HCINumberOfCompletedPackets(entries: [.init(handle: link.handle, completedPackets: 2)]).packet)
        _ = try await within(Self.bound, "round trip") { try await stack.execute(LESetScanEnable(enable: false)) }
        #expect(await fake.attFromHost(on: link.handle).map { $0.last } == (0..<6).map { UInt8($0) })
    }

    @Test func aControllerThatNeverReturnsACLBuffersFailsTheSenderInsteadOfHangingIt() async throws {
        let (stack, fake) = try await Self.started(
            autoCompletePackets: false,
            configuration: .init(randomAddress: .randomStatic(0x1111_2222_3333), attTransactionTimeout: 1))
        defer { Task { await stack.close() } }
        let link = try await Self.incomingLink(stack, fake)
        // 4 buffers in use, then fragments queue; past 8 queued the next write waits for buffers that never come.
        let outcome = try await within(Self.bound, "writes without buffers") { () -> Result<Int, any Error> in
            var written = 0
            do {
                for i in 0..<20 {
                    try await link.gatt.writeWithoutResponse(handle: 3, value: [UInt8(i)])
                    written += 1
                }
            } catch {
                return .failure(error)
            }
            return .success(written)
        }
        guard case let .failure(error) = outcome, case let .timedOut(what, _)? = error as? HostError else {
            Issue.record("expected a timeout, got \(outcome)")
            return
        }
        #expect(what.contains("ACL buffers"))
        #expect(await fake.attFromHost(on: link.handle).count == 4)
        #expect(await link.isOpen())
    }

    // MARK: Transport failures

    @Test func anUnknownH4PacketTypeStopsTheStackAndFailsEveryWaiter() async throws {
        // Over real TCP, so the bytes go through the H4 framer.
        let server = try await TCPServerTransport.listen(host: "127.0.0.1", port: 0)
        let fake = ScriptedController(end: server, silent: [0x200D])
        let transport = try await TCPClientTransport.connect(host: "127.0.0.1", port: server.localPort)
        try await server.waitForClient()
        await fake.run()
        let stack = HostStack(transport: transport, configuration: .init(randomAddress: .randomStatic(0x1111_2222_3333)))
        defer { Task { await stack.close(); await server.close() } }
        try await within(Self.bound, "start") { try await stack.start() }
        let link = try await Self.incomingLink(stack, fake)
        let read = Task { try await link.gatt.read(handle: 3) }
        _ = try await fake.nextATT(on: link.handle, "Read Request")
        let scan = try await stack.scan()
        // Last: the controller never answers it, so it holds the only command credit.
        let connect = Task { try await stack.connect(to: BluetoothAddress.randomStatic(0x42), timeout: 30) }
        _ = try await fake.waitForCommand(0x200D, "LE Create Connection")

        try await server.sendRaw([0x07, 0x00, 0x01, 0x02])

        for outcome in [
            try await within(Self.bound, "read") { await read.result.map { _ in () } },
            try await within(Self.bound, "connect") { await connect.result.map { _ in () } },
        ] {
            guard case let .failure(error) = outcome, case let .transportFailed(text)? = error as? HostError else {
                Issue.record("expected transportFailed, got \(outcome)")
                continue
            }
            #expect(text.contains("unknown packet type 0x07"), "\(text)")
        }
        #expect(try await within(Self.bound, "scan end") { await scan.first { _ in true } } == nil)
        #expect(try await within(Self.bound, "disconnection") { await link.waitForDisconnection() } == .localHostTerminated)
        await #expect(throws: HostError.self) { try await stack.execute(HCIReset()) }
    }

    @Test func theControllerGoingAwayStopsTheStack() async throws {
        let (host, controller) = PipeTransport.makePair()
        let fake = ScriptedController(end: controller)
        await fake.run()
        let stack = HostStack(transport: host, configuration: .init(randomAddress: .randomStatic(0x1111_2222_3333)))
        defer { Task { await stack.close() } }
        try await within(Self.bound, "start") { try await stack.start() }
        let link = try await Self.incomingLink(stack, fake)
        let read = Task { try await link.gatt.read(handle: 3) }
        _ = try await fake.nextATT(on: link.handle, "Read Request")
        await controller.close()
        let outcome = try await within(Self.bound, "read") { await read.result }
        guard case let .failure(error) = outcome, case .transportFailed? = error as? HostError else {
            Issue.record("expected transportFailed, got \(outcome)")
            return
        }
        let events = try await within(Self.bound, "server events end") { await stack.serverEvents.first { _ in true } }
        #expect(events == nil)
    }
}

/// A controller played by a test on the far end of a transport: answers the commands a host
/// sends at start-up (and the common LE ones) like a small LE controller with 4 ACL buffers of
/// 27 bytes, records what the host sends, and injects whatever the test wants.
actor ScriptedController {
    let end: any HCITransport
    /// Opcodes never answered (no Command Complete, no Command Status).
    let silent: Set<UInt16>
    /// Whether every ACL packet from the host is answered with Number Of Completed Packets.
    let autoCompletePackets: Bool
    private(set) var fromHost: [HCIPacket] = []
    private var pump: Task<Void, Never>?

    init(end: any HCITransport, silent: Set<UInt16> = [], autoCompletePackets: Bool = true) {
        self.end = end
        self.silent = silent
        self.autoCompletePackets = autoCompletePackets
    }

    /// Starts answering.
    func run() {
        let packets = end.packets
        pump = Task { [weak self] in
            do { for try await packet in packets { await self?.received(packet) } } catch {}
        }
    }

    /// An L2CAP basic frame on the ATT channel.
    static func l2cap(_ att: [UInt8]) -> [UInt8] {
        [UInt8(att.count & 0xFF), UInt8(att.count >> 8), 0x04, 0x00] + att
    }

    func inject(_ packet: HCIPacket) async throws { try await end.send(packet) }

    func injectATT(_ att: [UInt8], on handle: UInt16) async throws {
        try await inject(.acl(handle: handle, boundary: .firstFlushable, broadcast: 0, data: Self.l2cap(att)))
    }

    /// How many times the host sent `opcode`.
    func commandCount(_ opcode: UInt16) -> Int {
        fromHost.filter { if case let .command(o, _) = $0 { o.rawValue == opcode } else { false } }.count
    }

    /// ATT PDUs the host sent on `handle` (each in one ACL packet: they are short here).
    func attFromHost(on handle: UInt16) -> [[UInt8]] {
        fromHost.compactMap { packet in
            guard case let .acl(h, _, _, data) = packet, h == handle, data.count >= 4, data[2] == 0x04, data[3] == 0x00
            else { return nil }
            return Array(data.dropFirst(4))
        }
    }

    private var attCursor: [UInt16: Int] = [:]

    /// Longest wait for a packet from the host, seconds.
    static let patience: Double = 20

    /// Tasks waiting for the next packet from the host.
    private var arrivalWaiters: [CheckedContinuation<Void, Never>] = []
    private var gaveUp = false

    /// Looks again each time a packet arrives from the host, until `found` finds it or
    /// ``patience`` runs out (a hang guard: no polling).
    private func poll<T>(_ what: String, _ found: () -> T?) async throws -> T {
        gaveUp = false
        let guardTask = Task { [weak self] in
            // Cancelled when the poll ends: only a guard that ran its course gives up.
            guard (try? await Task.sleep(for: .seconds(Self.patience))) != nil else { return }
            await self?.giveUp()
        }
        defer { guardTask.cancel() }
        while !gaveUp {
            if let value = found() { return value }
            await withCheckedContinuation { arrivalWaiters.append($0) }
        }
        throw HostError.timedOut("waiting for \(what)", seconds: Self.patience)
    }

    private func giveUp() {
        gaveUp = true
        wakeArrivalWaiters()
    }

    private func wakeArrivalWaiters() {
        let waiters = arrivalWaiters
        arrivalWaiters.removeAll()
        for waiter in waiters { waiter.resume() }
    }

    /// The next ATT PDU the host sends on `handle`.
    func nextATT(on handle: UInt16, _ what: String) async throws -> [UInt8] {
        try await poll(what) {
            let all = attFromHost(on: handle)
            let cursor = attCursor[handle] ?? 0
            guard all.count > cursor else { return nil }
            attCursor[handle] = cursor + 1
            return all[cursor]
        }
    }

    /// The parameters of the first `opcode` command the host sent.
    func waitForCommand(_ opcode: UInt16, _ what: String) async throws -> [UInt8] {
        try await poll(what) {
            for case let .command(o, parameters) in fromHost where o.rawValue == opcode { return parameters }
            return nil
        }
    }

    private func received(_ packet: HCIPacket) async {
        fromHost.append(packet)
        wakeArrivalWaiters()
        switch packet {
        case let .command(opcode, parameters):
            guard !silent.contains(opcode.rawValue) else { return }
            for answer in answers(to: opcode, parameters) { try? await end.send(answer) }
        case let .acl(handle, _, _, _):
            if autoCompletePackets {
                try? await end.send(
                    HCINumberOfCompletedPackets(entries: [.init(handle: handle, completedPackets: 1)]).packet)
            }
        default:
            break
        }
    }

    private func answers(to opcode: HCIOpcode, _ parameters: [UInt8]) -> [HCIPacket] {
        func complete(_ returns: [UInt8]) -> HCIPacket {
            HCICommandComplete(opcode: opcode, returnParameters: returns).packet
        }
        switch opcode.rawValue {
        case 0x1001: return [complete([0x00, 0x09, 0x00, 0x00, 0x09, 0xFF, 0xFF, 0x00, 0x00])]  // version 5.0
        case 0x1009: return [complete([0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06])]  // BD_ADDR
        case 0x2002: return [complete([0x00, 0x1B, 0x00, 0x04])]  // 27-byte LE buffers, 4 of them
        case 0x200D, 0x2013, 0x2016: return [HCICommandStatus(status: .success, opcode: opcode).packet]
        case 0x0406:
            var disconnected: [HCIPacket] = [HCICommandStatus(status: .success, opcode: opcode).packet]
            if parameters.count >= 2 {
                let handle = UInt16(parameters[0]) | UInt16(parameters[1]) << 8
                disconnected.append(HCIDisconnectionComplete(handle: handle, reason: .localHostTerminated).packet)
            }
            return disconnected
        default: return [complete([0x00])]
        }
    }
}
