import BluetideBase
import BluetideHCI
import BluetideSupport
import Testing
@testable import BluetideVirtual

/// Number Of Completed Packets means "the peer's host has the data": a sender is paced by its
/// buffer credits at the speed the receiving host reads, and nothing between them grows.
@Suite(.timeLimit(.minutes(1))) struct VirtualDeliveryTests {
    static func acl(_ handle: UInt16, _ byte: UInt8) -> HCIPacket {
        .acl(handle: handle, boundary: .firstFlushable, broadcast: 0, data: [1, 0, 4, 0, byte])
    }

    @Test func completionComesOnlyOnceThePeersHostTookThePacket() async throws {
        let pair = try await LinkPair(clock: ManualClock())
        let handles = try await pair.connect()
        await pair.b.controller.send(Self.acl(handles.b, 1))
        // Delivered to A's controller, not yet read by A's host: no completion for B.
        try await pair.b.expectNothingPending()
        #expect(await pair.a.next() == Self.acl(handles.a, 1))
        #expect(try await pair.b.nextEvent() == .numberOfCompletedPackets(.init(entries: [.init(handle: handles.b, completedPackets: 1)])))
    }

    @Test func aHostThatDoesNotReadStopsItsPeerAtTheBufferCredits() async throws {
        let pair = try await LinkPair(clock: ManualClock())
        let handles = try await pair.connect()
        let credits = Int(VirtualControllerProfile.totalNumACLDataPackets)
        for i in 0..<credits { await pair.b.controller.send(Self.acl(handles.b, UInt8(i))) }
        try await pair.b.expectNothingPending()
        // One more than the credits: Data Buffer Overflow (ACL), and the packet is dropped.
        await pair.b.controller.send(Self.acl(handles.b, 0xEE))
        #expect(await pair.b.next() == .event(code: 0x1A, parameters: [0x01]))
        // A reads one: B gets one credit back, and may send one more.
        #expect(await pair.a.next() == Self.acl(handles.a, 0))
        #expect(try await pair.b.nextEvent() == .numberOfCompletedPackets(.init(entries: [.init(handle: handles.b, completedPackets: 1)])))
        await pair.b.controller.send(Self.acl(handles.b, 0x40))
        try await pair.b.expectNothingPending()
        // A gets the 16, then the one sent on the returned credit; never the dropped one.
        var got: [UInt8] = []
        for _ in 0..<credits {
            guard case let .acl(_, _, _, data)? = await pair.a.next() else { Issue.record("no data"); return }
            got.append(data[4])
        }
        #expect(got == (1..<UInt8(credits)).map { $0 } + [0x40])
    }

    @Test func aBatchTakenAtOnceIsCompletedByOneEvent() async throws {
        let pair = try await LinkPair(clock: ManualClock())
        let handles = try await pair.connect()
        for i in 0..<5 { await pair.b.controller.send(Self.acl(handles.b, UInt8(i))) }
        let batch = try #require(await pair.a.controller.nextBatch())
        #expect(batch == (0..<5).map { Self.acl(handles.a, UInt8($0)) })
        #expect(try await pair.b.nextEvent() == .numberOfCompletedPackets(.init(entries: [.init(handle: handles.b, completedPackets: 5)])))
    }

    @Test func aBatchFromTwoSendersGivesEachSenderOneEvent() async throws {
        let pair = try await LinkPair(clock: ManualClock())
        let handles = try await pair.connect()
        // C connects to A too (A advertises again after its first connection).
        let c = HostProbe(await pair.link.attachController())
        try await c.initialize()
        try await pair.a.succeed(LESetAdvertisingEnable(enable: true))
        #expect(try await c.start(LECreateConnection(peerAddress: pair.addressA)) == .success)
        guard case let .connectionComplete(fromC) = try await c.nextLEEvent(),
              case let .connectionComplete(atA) = try await pair.a.nextLEEvent() else { Issue.record("no second connection"); return }
        for i in 0..<2 {
            await pair.b.controller.send(Self.acl(handles.b, UInt8(i)))
            await c.controller.send(Self.acl(fromC.handle, UInt8(0x10 + i)))
        }
        let batch = try #require(await pair.a.controller.nextBatch())
        #expect(batch == [Self.acl(handles.a, 0), Self.acl(atA.handle, 0x10), Self.acl(handles.a, 1), Self.acl(atA.handle, 0x11)])
        #expect(try await pair.b.nextEvent() == .numberOfCompletedPackets(.init(entries: [.init(handle: handles.b, completedPackets: 2)])))
        #expect(try await c.nextEvent() == .numberOfCompletedPackets(.init(entries: [.init(handle: fromC.handle, completedPackets: 2)])))
    }

    @Test func aFragmentedPacketIsCompletedWhenItsLastFragmentIsTaken() async throws {
        let pair = try await LinkPair(clock: ManualClock())
        let handles = try await pair.connect()
        let big = [UInt8](repeating: 7, count: 300)
        await pair.b.controller.send(.acl(handle: handles.b, boundary: .firstFlushable, broadcast: 0, data: big))
        #expect(await pair.a.next() == .acl(handle: handles.a, boundary: .firstFlushable, broadcast: 0, data: Array(big[..<251])))
        try await pair.b.expectNothingPending()
        #expect(await pair.a.next() == .acl(handle: handles.a, boundary: .continuing, broadcast: 0, data: Array(big[251...])))
        guard case .numberOfCompletedPackets = try await pair.b.nextEvent() else { Issue.record("no completion"); return }
    }

    @Test func aBurstOf500FlowsAtThePaceOfTheReaderWithoutOverflow() async throws {
        let pair = try await LinkPair(clock: ManualClock())
        let handles = try await pair.connect()
        let count = 500
        let credits = Int(VirtualControllerProfile.totalNumACLDataPackets)
        let a = pair.a.controller
        let reader = Task {
            var got: [UInt16] = []
            while got.count < count, case let .acl(_, _, _, data)? = await a.nextPacket() {
                got.append(UInt16(data[0]) | UInt16(data[1]) << 8)
            }
            return got
        }
        // The sender honours its credits: it sends while it has some, else waits for completions.
        var sent = 0
        var available = credits
        var mostOutstanding = 0
        while sent < count {
            while available > 0, sent < count {
                await pair.b.controller.send(.acl(handle: handles.b, boundary: .firstFlushable, broadcast: 0,
                                                  data: [UInt8(sent & 0xFF), UInt8(sent >> 8)]))
                sent += 1
                available -= 1
                mostOutstanding = max(mostOutstanding, credits - available)
            }
            let event = try await pair.b.nextEvent()
            guard case let .numberOfCompletedPackets(completed) = event else {
                Issue.record("expected completions, got \(event)")
                return
            }
            available += completed.entries.reduce(0) { $0 + Int($1.completedPackets) }
        }
        #expect(await reader.value == (0..<UInt16(count)).map { $0 })
        #expect(mostOutstanding == credits)
    }

    @Test func packetsReadAsBatchesKeepTheirOrder() async throws {
        let link = VirtualLink(clock: ManualClock())
        let controller = await link.attachController()
        controller.receive(batch: [HCIReset().packet, HCIReadBDADDR().packet, LEReadBufferSize().packet])
        var opcodes: [HCIOpcode] = []
        var iterator = controller.packetBatches.makeAsyncIterator()
        while opcodes.count < 3, let batch = await iterator.next() {
            for packet in batch {
                if case let .commandComplete(complete)? = try HCIEvent(packet: packet) { opcodes.append(complete.opcode) }
            }
        }
        #expect(opcodes == [HCIReset.opcode, HCIReadBDADDR.opcode, LEReadBufferSize.opcode])
        await controller.detachHost()
        #expect(await iterator.next() == nil)
    }

    @Test func aReaderWaitingWhenTheHostDetachesSeesTheEnd() async throws {
        let link = VirtualLink(clock: ManualClock())
        let controller = await link.attachController()
        let reader = Task { await controller.nextBatch() }
        await Task.yield()
        await controller.detachHost()
        #expect(await reader.value == nil)
        #expect(await controller.nextPacket() == nil)
    }
}
